// Command benchref is the benchmarks' floor: an HTTP handler that does
// nothing but one MariaDB point read per request and writes the value. The
// benchmark scripts measure it in the same run as the sidecar, so that the
// sidecar's figures can be read against what this machine gives the least
// a database-backed handler can do. With -body it reads no database and
// answers a file's bytes: the ceiling of any handler that answers from
// memory; with -headers as well, it sends those headers with them (as
// curl -D writes them), the ceiling of a handler that must answer with
// what WordPress sends. It is not part of the sidecar.
//
//	benchref -listen 127.0.0.1:18095 -dsn 'root@tcp(127.0.0.1:3306)/db' -table wp_options -column option_value -where option_name -key themeopts_options
//	benchref -listen 127.0.0.1:18096 -body answer.json
package main

import (
	"database/sql"
	"flag"
	"log"
	"net/http"
	"os"
	"strings"

	_ "github.com/go-sql-driver/mysql"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18095", "address to listen on")
	dsn := flag.String("dsn", "root@tcp(127.0.0.1:3306)/wpsidecar_bench", "MySQL DSN")
	table := flag.String("table", "wp_fieldmgr_groups", "table to read")
	column := flag.String("column", "config", "column to answer")
	where := flag.String("where", "group_key", "unique column to look the key up in")
	key := flag.String("key", "bench_7", "key to read")
	maxOpen := flag.Int("max-open", 16, "most open database connections")
	body := flag.String("body", "", "answer this file's bytes, reading no database")
	headers := flag.String("headers", "", "with -body: send the headers of this file (a response's head, as curl -D writes it)")
	flag.Parse()

	if *body != "" {
		b, err := os.ReadFile(*body)
		if err != nil {
			log.Fatal(err)
		}
		head := http.Header{"Content-Type": {"application/json"}}
		if *headers != "" {
			raw, err := os.ReadFile(*headers)
			if err != nil {
				log.Fatal(err)
			}
			head = http.Header{}
			for _, line := range strings.Split(string(raw), "\n")[1:] {
				k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), ": ")
				// Date and Content-Length are Go's to write; Connection
				// and Keep-Alive were nginx's word on its own connection
				// (hop-by-hop), which a handler behind it does not repeat.
				switch http.CanonicalHeaderKey(k) {
				case "Date", "Content-Length", "Connection", "Keep-Alive":
					ok = false
				}
				if ok {
					head[http.CanonicalHeaderKey(k)] = append(head[http.CanonicalHeaderKey(k)], v)
				}
			}
		}
		http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			for k, v := range head {
				h[k] = v
			}
			w.Write(b)
		})
		log.Fatal(http.ListenAndServe(*listen, nil))
	}

	db, err := sql.Open("mysql", *dsn+"?interpolateParams=true")
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(*maxOpen)
	db.SetMaxIdleConns(*maxOpen)
	q := "SELECT `" + *column + "` FROM `" + *table + "` WHERE `" + *where + "` = ?"
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		var value []byte
		if err := db.QueryRowContext(r.Context(), q, *key).Scan(&value); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(value)
	})
	log.Fatal(http.ListenAndServe(*listen, nil))
}

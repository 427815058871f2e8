// Command benchref is the benchmarks' floor: an HTTP handler that does
// nothing but one MariaDB point read per request and writes the value. The
// benchmark scripts measure it in the same run as the sidecar, so that the
// sidecar's figures can be read against what this machine gives the least
// a database-backed handler can do. With -body it reads no database and
// answers a file's bytes: the ceiling of any handler that answers from
// memory. It is not part of the sidecar.
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
	flag.Parse()

	if *body != "" {
		b, err := os.ReadFile(*body)
		if err != nil {
			log.Fatal(err)
		}
		http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
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

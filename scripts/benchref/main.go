// Command benchref is the benchmarks' floor: an HTTP handler that does
// nothing but one MariaDB point read per request and writes the value. The
// benchmark scripts measure it in the same run as the sidecar, so that the
// sidecar's figures can be read against what this machine gives the least
// a database-backed handler can do. It is not part of the sidecar.
//
//	benchref -listen 127.0.0.1:18095 -dsn 'root@tcp(127.0.0.1:3306)/db' -table wp_fieldmgr_groups -key bench_7
package main

import (
	"database/sql"
	"flag"
	"log"
	"net/http"

	_ "github.com/go-sql-driver/mysql"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18095", "address to listen on")
	dsn := flag.String("dsn", "root@tcp(127.0.0.1:3306)/wpsidecar_bench", "MySQL DSN")
	table := flag.String("table", "wp_fieldmgr_groups", "table holding group_key and config")
	key := flag.String("key", "bench_7", "group_key to read")
	maxOpen := flag.Int("max-open", 16, "most open database connections")
	flag.Parse()

	db, err := sql.Open("mysql", *dsn+"?interpolateParams=true")
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(*maxOpen)
	db.SetMaxIdleConns(*maxOpen)
	q := "SELECT config FROM `" + *table + "` WHERE group_key = ?"
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		var config []byte
		if err := db.QueryRowContext(r.Context(), q, *key).Scan(&config); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(config)
	})
	log.Fatal(http.ListenAndServe(*listen, nil))
}

# Sourced by the benchmarks of the binlog feed: a private mariadbd with the
# binary log on (row-based) on FEED_DB_PORT, stopped on exit (stop_db), the
# bench WordPress's database on it (WP_DB_NAME), and the feed's flags
# (feed_args) with a three-field theme options configuration.
db_dir=$(mktemp -d)
mariadb-install-db --no-defaults --datadir="$db_dir/data" --user="$(id -un)" --auth-root-authentication-method=normal --skip-test-db >/dev/null
/usr/sbin/mariadbd --no-defaults --datadir="$db_dir/data" --user="$(id -un)" --port="$FEED_DB_PORT" --bind-address=127.0.0.1 \
  --socket="$db_dir/sock" --pid-file="$db_dir/pid" --log-error="$db_dir/error.log" --skip-name-resolve --max-connections=500 \
  --log-bin=binlog --binlog-format=ROW --binlog-row-image=FULL --server-id=1 &
db_pid=$!
stop_db() { kill "$db_pid" 2>/dev/null && wait "$db_pid" 2>/dev/null; rm -rf "$db_dir"; }
trap stop_db EXIT
for _ in $(seq 1 100); do mariadb-admin --protocol=tcp -h127.0.0.1 -P"$FEED_DB_PORT" -uroot ping >/dev/null 2>&1 && break; sleep 0.2; done
export WP_DB_HOST="127.0.0.1:$FEED_DB_PORT" MYSQL_ADMIN="mariadb --protocol=tcp -h127.0.0.1 -P$FEED_DB_PORT -uroot" WP_DB_NAME
BENCHREF_DSN="root@tcp(127.0.0.1:$FEED_DB_PORT)/$WP_DB_NAME"

echo '{"opt_name":"themeopts_bench","sections":[{"id":"all","title":"All","fields":[{"id":"accent","type":"color","default":"#3366ff"},{"id":"tagline","type":"text","default":""},{"id":"sticky","type":"switch","default":true}]}]}' > "$STATE/themeopts-bench.json"
feed_args=(--themeopts-config "$STATE/themeopts-bench.json" --change-feed binlog --binlog-dsn "root@tcp(127.0.0.1:$FEED_DB_PORT)/")

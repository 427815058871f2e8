#!/usr/bin/env bash
# Several instances over a primary and a replica: authenticated
# GET /themeopts/v1/options and GET /fieldmgr/v1/field-groups through two
# sidecar instances that read a replica (wrk, 16 connections on each, at
# the same time, summed) against one instance on the primary alone (wrk,
# 32 connections), in the same run, alternating; then read-your-writes
# checked for SOAK (scripts/ryw: writers save through one instance and
# read back through the other with the write's GTID). Bar: the two
# instances at least the one's requests/s; no violation. Both servers are
# private mariadbd processes started here; WordPress runs on the primary.
#
#   scripts/bench-replicas.sh        # ROUNDS=3 DURATION=5s SOAK=10m
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ROUNDS:=3}" "${DURATION:=5s}" "${SOAK:=10m}" "${STATE:=.bench-replicas}"
: "${PRIMARY_PORT:=18316}" "${REPLICA_PORT:=18317}"
mkdir -p "$STATE"

db_dir=$(mktemp -d)
db_pids=()
start_db() { # NAME PORT FLAGS...
  local name=$1 port=$2
  shift 2
  mariadb-install-db --no-defaults --datadir="$db_dir/$name" --user="$(id -un)" --auth-root-authentication-method=normal --skip-test-db >/dev/null
  /usr/sbin/mariadbd --no-defaults --datadir="$db_dir/$name" --user="$(id -un)" --port="$port" --bind-address=127.0.0.1 \
    --socket="$db_dir/$name.sock" --pid-file="$db_dir/$name.pid" --log-error="$db_dir/$name.err" --skip-name-resolve "$@" &
  db_pids+=($!)
  for _ in $(seq 1 100); do mariadb-admin --protocol=tcp -h127.0.0.1 -P"$port" -uroot ping >/dev/null 2>&1 && return; sleep 0.2; done
  echo "bench: mariadbd $name did not start" >&2; exit 1
}
stop_db() { kill "${db_pids[@]}" 2>/dev/null; wait "${db_pids[@]}" 2>/dev/null; rm -rf "$db_dir"; }
trap stop_db EXIT
start_db primary "$PRIMARY_PORT" --log-bin=binlog --binlog-format=ROW --server-id=1
start_db replica "$REPLICA_PORT" --server-id=2
mariadb --protocol=tcp -h127.0.0.1 -P"$REPLICA_PORT" -uroot -e "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$PRIMARY_PORT, MASTER_USER='root', MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1; START SLAVE"

export WP_DB_HOST="127.0.0.1:$PRIMARY_PORT" MYSQL_ADMIN="mariadb --protocol=tcp -h127.0.0.1 -P$PRIMARY_PORT -uroot" WP_DB_NAME=wpsidecar_bench_replicas
fields='{"id":"accent","type":"color","default":"#3366ff"}'
for w in 0 1 2 3; do fields="$fields,{\"id\":\"w$w\",\"type\":\"text\",\"default\":\"\"}"; done
echo "{\"opt_name\":\"themeopts_bench\",\"sections\":[{\"id\":\"all\",\"title\":\"All\",\"fields\":[$fields]}]}" > "$STATE/themeopts-bench.json"
SIDECAR_ARGS=(--themeopts-config "$STATE/themeopts-bench.json")

# shellcheck source=scripts/bench-site.sh
. scripts/bench-site.sh
eval "$(declare -f bench_cleanup | sed '1s/bench_cleanup/bench_cleanup_site/')"
replica_pids=()
bench_cleanup() { [ ${#replica_pids[@]} -gt 0 ] && kill "${replica_pids[@]}" 2>/dev/null; bench_cleanup_site; stop_db; }
trap bench_cleanup EXIT

# Two instances that read the replica.
ports=(18091 18092)
for port in "${ports[@]}"; do
  "$STATE/wpsidecar" --listen "127.0.0.1:$port" --admin-listen 127.0.0.1:0 --upstream "$WP_URL" --wp-config "$WP_CONFIG" \
    "${SIDECAR_ARGS[@]}" --db-replica "tcp(127.0.0.1:$REPLICA_PORT)/" > "$STATE/sidecar-$port.log" 2>&1 &
  replica_pids+=($!)
done
for port in "${ports[@]}"; do
  for _ in $(seq 1 50); do curl -fso /dev/null "http://127.0.0.1:$port/static.txt" && break; sleep 0.1; done
done

pw=$(WP_HTTP_HOST="127.0.0.1:$SIDECAR_PORT" php scripts/wp/app-password.php "$WP_DOCROOT" "$WP_ADMIN_USER" bench "$STATE/bench-app-password.json")
auth="Authorization: Basic $(printf '%s:%s' "$WP_ADMIN_USER" "$pw" | base64 -w0)"
curl -s -o /dev/null -H "$auth" -H 'Content-Type: application/json' -d '{"accent":"#112233"}' "$WP_SITEURL/wp-json/themeopts/v1/options"
bench_make_groups "$auth" "$WP_SITEURL/wp-json/fieldmgr/v1"
sleep 1 # the replica has it all
for port in "${ports[@]}"; do
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "$auth" "http://127.0.0.1:$port/wp-json/fieldmgr/v1/field-groups")
  [ "$code" = 200 ] || { echo "bench: instance $port answered $code" >&2; exit 1; }
done

rps() { awk '/^Requests\/sec/ {print $2}'; }
results=$STATE/results.txt
: > "$results"
echo "machine: $(nproc) cores; $DURATION runs, $ROUNDS rounds"
for round in $(seq 1 "$ROUNDS"); do
  for route in themeopts/v1/options fieldmgr/v1/field-groups; do
    one=$(wrk -t2 -c32 -d"$DURATION" -H "$auth" "$WP_SITEURL/wp-json/$route" | rps)
    wrk -t1 -c16 -d"$DURATION" -H "$auth" "http://127.0.0.1:${ports[0]}/wp-json/$route" > "$STATE/wrk-a.txt" &
    a=$!
    wrk -t1 -c16 -d"$DURATION" -H "$auth" "http://127.0.0.1:${ports[1]}/wp-json/$route" > "$STATE/wrk-b.txt"
    wait $a
    two=$(awk -v x="$(rps < "$STATE/wrk-a.txt")" -v y="$(rps < "$STATE/wrk-b.txt")" 'BEGIN {printf "%.2f", x+y}')
    echo "$route|$one|$two" >> "$results"
    printf 'round %d  %-26s one instance on the primary %10s req/s   two on the replica %10s req/s\n' "$round" "$route" "$one" "$two"
  done
done
for route in themeopts/v1/options fieldmgr/v1/field-groups; do
  med() { grep "^$route|" "$results" | cut -d'|' -f"$1" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  printf '%-26s median: one %9.1f, two %9.1f req/s = %.2fx   (bar: >= 1x)\n' "$route" "$(med 2)" "$(med 3)" "$(awk -v a="$(med 3)" -v b="$(med 2)" 'BEGIN {print a/b}')"
done

go build -o "$STATE/ryw" ./scripts/ryw
"$STATE/ryw" -a "http://127.0.0.1:${ports[0]}" -b "http://127.0.0.1:${ports[1]}" -user "$WP_ADMIN_USER" -password "$pw" -duration "$SOAK"

#!/usr/bin/env bash
# The sidecar against the machine's limits, in one run (docs/performance.md,
# "Against the limits"): every figure beside the reference it is read
# against, measured in the same run, alternating, medians of ROUNDS rounds
# of wrk -t2 -c32 (both CPUs for everything: SIDECAR_GOMAXPROCS):
#
#   from the feed (--serve-from-feed)   vs  a bare Go handler writing the
#                                           same bytes from memory (ceiling)
#   per request (a database read each)  vs  a bare handler doing one MariaDB
#                                           point read (floor)
#   a static file passed through        vs  nginx as a reverse proxy to the
#                                           same upstream
#   a page passed through               vs  the same nginx
#
# Also, for reference, the ceiling with the headers the sidecar must send
# (WordPress's): what net/http makes of a handler that writes them and the
# bytes from memory.
#
# The same from the feed with --access-log off, against the ceiling with
# headers: how much of the gap is the access line every request writes.
#
# The default configuration: a third sidecar started with its site
# settings and --upstream only (--change-feed auto finds the binlog and
# serves from memory; the bench database grants WordPress's database user
# REPLICATION SLAVE and BINLOG MONITOR, as the start log would ask), on
# options and the 20 groups against that ceiling with headers; and the 20
# groups with Accept-Encoding: br, gzip (it answers br) against identity,
# against the same br bytes and headers from memory, and against nginx
# gzipping PHP's answer (twin/v1, scripts/wp/fieldmgr-twin.php: the same
# groups from WordPress's REST server; gzip on at nginx's default level 1,
# a server of its own in front of the same WordPress), with the bytes of
# each answer.
#
# Then overload: OVERLOAD_CONNS (2,000) connections against the per-request
# sidecar (with --db-max-wait DB_MAX_WAIT): requests/s, p99 of the answers
# served, 503s, and the sidecar's resident memory (peak) against the same
# at 32 connections.
#
#   scripts/bench-limits.sh              # ROUNDS=3 DURATION=5s
#   PROFILE=1 scripts/bench-limits.sh    # and CPU and allocation profiles
#                                        # of each route into $STATE/prof
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ROUNDS:=3}" "${DURATION:=5s}" "${STATE:=.bench-limits}" "${FEED_DB_PORT:=18306}" "${DB_SIDECAR_PORT:=18090}"
: "${DEFAULT_SIDECAR_PORT:=18086}" "${GZIP_NGINX_PORT:=18088}" "${QUIET_SIDECAR_PORT:=18085}"
: "${SIDECAR_GOMAXPROCS:=$(nproc)}" "${OVERLOAD_CONNS:=2000}" "${PROFILE:=}" "${DB_MAX_WAIT:=1s}"
mkdir -p "$STATE"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

WP_DB_NAME=wpsidecar_bench_limits
# shellcheck source=scripts/bench-binlog-db.sh
. scripts/bench-binlog-db.sh
[ -n "$PROFILE" ] && feed_args+=(--pprof)
SIDECAR_ARGS=("${feed_args[@]}" --serve-from-feed --admin-listen 127.0.0.1:18098)

# PHP's twin of the field-group routes (twin/v1), for nginx to gzip.
export WP_MU_PLUGINS="$PWD/scripts/wp/fieldmgr-twin.php"
# shellcheck source=scripts/bench-site.sh
. scripts/bench-site.sh
eval "$(declare -f bench_cleanup | sed '1s/bench_cleanup/bench_cleanup_site/')"
db_sidecar_pid="" default_sidecar_pid="" quiet_sidecar_pid="" gzip_nginx_pid="" ref_pids=()
bench_cleanup() {
  # Each kill may find nothing (a failure before it started): never an
  # error that ends the cleanup (set -e) with the rest left running.
  [ ${#ref_pids[@]} -eq 0 ] || kill "${ref_pids[@]}" 2>/dev/null || true
  for p in "$db_sidecar_pid" "$default_sidecar_pid" "$quiet_sidecar_pid" "$gzip_nginx_pid"; do [ -z "$p" ] || kill "$p" 2>/dev/null || true; done
  bench_cleanup_site; stop_db
}
trap bench_cleanup EXIT

# The second sidecar: the same, reading the database per request.
GOMAXPROCS=$SIDECAR_GOMAXPROCS "$STATE/wpsidecar" --listen "127.0.0.1:$DB_SIDECAR_PORT" --admin-listen 127.0.0.1:18099 --upstream "$WP_URL" --wp-config "$WP_CONFIG" \
  --db-max-wait "$DB_MAX_WAIT" "${feed_args[@]}" --serve-from-feed=false > "$STATE/sidecar-db.log" 2>&1 &
db_sidecar_pid=$!
for _ in $(seq 1 50); do curl -fso /dev/null "http://127.0.0.1:$DB_SIDECAR_PORT/static.txt" && break; sleep 0.1; done
grep -q '"serve-from-feed on' "$STATE/sidecar.log" || { echo "bench: the sidecar does not serve from the feed:" >&2; cat "$STATE/sidecar.log" >&2; exit 1; }
! grep -q '"serve-from-feed on' "$STATE/sidecar-db.log" || { echo "bench: the per-request sidecar serves from the feed:" >&2; cat "$STATE/sidecar-db.log" >&2; exit 1; }

# The same from the feed without its access log (--access-log off): what
# of the gap to the ceiling is the access line every request writes,
# which the ceiling does not.
GOMAXPROCS=$SIDECAR_GOMAXPROCS "$STATE/wpsidecar" --listen "127.0.0.1:$QUIET_SIDECAR_PORT" --admin-listen 127.0.0.1:18084 --upstream "$WP_URL" --wp-config "$WP_CONFIG" \
  "${feed_args[@]}" --serve-from-feed --access-log off > "$STATE/sidecar-quiet.log" 2>&1 &
quiet_sidecar_pid=$!
for _ in $(seq 1 50); do curl -fso /dev/null "http://127.0.0.1:$QUIET_SIDECAR_PORT/static.txt" && break; sleep 0.1; done

# The third: the default configuration, WordPress's database user allowed
# to follow the binary log (what its start log asks for otherwise).
for h in localhost 127.0.0.1; do
  $MYSQL_ADMIN -e "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '${WP_DB_USER:-wpsidecar}'@'$h'"
done
default_args=(--listen "127.0.0.1:$DEFAULT_SIDECAR_PORT" --admin-listen 127.0.0.1:18087 --upstream "$WP_URL" --wp-config "$WP_CONFIG"
  --themeopts-config "$STATE/themeopts-bench.json")
[ -z "$PROFILE" ] || default_args+=(--pprof)
GOMAXPROCS=$SIDECAR_GOMAXPROCS "$STATE/wpsidecar" "${default_args[@]}" > "$STATE/sidecar-default.log" 2>&1 &
default_sidecar_pid=$!
for _ in $(seq 1 50); do curl -fso /dev/null "http://127.0.0.1:$DEFAULT_SIDECAR_PORT/static.txt" && break; sleep 0.1; done
# It answers before its feed has started: wait for both lines.
for _ in $(seq 1 100); do
  grep -q '"binlog change feed on' "$STATE/sidecar-default.log" && grep -q '"serve-from-feed on' "$STATE/sidecar-default.log" && break
  sleep 0.1
done
{ grep -q '"binlog change feed on' "$STATE/sidecar-default.log" && grep -q '"serve-from-feed on' "$STATE/sidecar-default.log"; } ||
  { echo "bench: the default sidecar does not follow the binlog and serve from memory:" >&2; cat "$STATE/sidecar-default.log" >&2; exit 1; }

# nginx gzipping PHP's answers: a server of its own in front of the same
# WordPress, asking for the sidecar's site.
gz=$(cd "$STATE" && pwd)/nginx-gzip
mkdir -p "$gz/logs" "$gz/tmp"
cat > "$gz/nginx.conf" <<NGINX
$([ "$(id -u)" -ne 0 ] || echo 'user root;')
worker_processes 2;
pid $gz/nginx.pid;
daemon off;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $gz/tmp/body;
  proxy_temp_path $gz/tmp/proxy;
  fastcgi_temp_path $gz/tmp/fastcgi;
  uwsgi_temp_path $gz/tmp/uwsgi;
  scgi_temp_path $gz/tmp/scgi;
  keepalive_requests 100000;
  upstream wordpress { server ${WP_URL#http://}; keepalive 64; }
  server {
    listen 127.0.0.1:$GZIP_NGINX_PORT;
    gzip on;
    gzip_types application/json;
    location / {
      proxy_pass http://wordpress;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host 127.0.0.1:$SIDECAR_PORT;
    }
  }
}
NGINX
/usr/sbin/nginx -p "$gz" -c "$gz/nginx.conf" -e "$gz/logs/error.log" > "$gz/logs/out" 2>&1 &
gzip_nginx_pid=$!

pw=$(WP_HTTP_HOST="127.0.0.1:$SIDECAR_PORT" php scripts/wp/app-password.php "$WP_DOCROOT" "$WP_ADMIN_USER" bench "$STATE/bench-app-password.json")
auth="Authorization: Basic $(printf '%s:%s' "$WP_ADMIN_USER" "$pw" | base64 -w0)"
curl -s -o /dev/null -H "$auth" -H 'Content-Type: application/json' -d '{"accent":"#112233","tagline":"Grüße 😀","sticky":false}' "$WP_SITEURL/wp-json/themeopts/v1/options"
bench_make_groups "$auth" "$WP_SITEURL/wp-json/fieldmgr/v1"

bench_start_ref -table wp_options -column option_value -where option_name -key themeopts_bench
ref_pids+=("$ref_pid")
# The ceilings: each answer's bytes from memory; and with the headers the
# sidecar sends (WordPress's), which net/http writes one by one.
curl -s -D "$STATE/options.head" -H "$auth" "$WP_SITEURL/wp-json/themeopts/v1/options" > "$STATE/options.json"
curl -s -D "$STATE/groups.head" -H "$auth" "$WP_SITEURL/wp-json/fieldmgr/v1/field-groups" > "$STATE/groups.json"
"$STATE/benchref" -listen 127.0.0.1:18096 -body "$STATE/options.json" & ref_pids+=($!)
"$STATE/benchref" -listen 127.0.0.1:18097 -body "$STATE/groups.json" & ref_pids+=($!)
"$STATE/benchref" -listen 127.0.0.1:18093 -body "$STATE/options.json" -headers "$STATE/options.head" & ref_pids+=($!)
"$STATE/benchref" -listen 127.0.0.1:18094 -body "$STATE/groups.json" -headers "$STATE/groups.head" & ref_pids+=($!)
# And the default sidecar's br answer of the 20 groups, with its headers.
curl -s -D "$STATE/groups-br.head" -H "$auth" -H 'Accept-Encoding: br, gzip' "http://127.0.0.1:$DEFAULT_SIDECAR_PORT/wp-json/fieldmgr/v1/field-groups" > "$STATE/groups.br"
grep -qi '^content-encoding: br' "$STATE/groups-br.head" || { echo "bench: the default sidecar did not answer br:" >&2; cat "$STATE/groups-br.head" >&2; exit 1; }
"$STATE/benchref" -listen 127.0.0.1:18089 -body "$STATE/groups.br" -headers "$STATE/groups-br.head" & ref_pids+=($!)
for p in 18096 18097 18093 18094 18089 "$GZIP_NGINX_PORT"; do
  for _ in $(seq 1 50); do curl -fso /dev/null "http://127.0.0.1:$p/" && break; sleep 0.1; done
done

db="http://127.0.0.1:$DB_SIDECAR_PORT"
dflt="http://127.0.0.1:$DEFAULT_SIDECAR_PORT"
php="http://127.0.0.1:$GZIP_NGINX_PORT"
ae='Accept-Encoding: br, gzip'
targets=(
  "floor|http://127.0.0.1:$BENCHREF_PORT/"
  "options-ceiling|http://127.0.0.1:18096/"
  "groups-ceiling|http://127.0.0.1:18097/"
  "options-ceiling-headers|http://127.0.0.1:18093/"
  "groups-ceiling-headers|http://127.0.0.1:18094/"
  "options-feed|$WP_SITEURL/wp-json/themeopts/v1/options"
  "groups-feed|$WP_SITEURL/wp-json/fieldmgr/v1/field-groups"
  "options-feed-nolog|http://127.0.0.1:$QUIET_SIDECAR_PORT/wp-json/themeopts/v1/options"
  "groups-feed-nolog|http://127.0.0.1:$QUIET_SIDECAR_PORT/wp-json/fieldmgr/v1/field-groups"
  "options-request|$db/wp-json/themeopts/v1/options"
  "groups-request|$db/wp-json/fieldmgr/v1/field-groups"
  "static-nginx|http://127.0.0.1:$WP_PROXY_PORT/static.txt"
  "static-sidecar|$db/static.txt"
  "page-nginx|http://127.0.0.1:$WP_PROXY_PORT/hello-world/|Host: 127.0.0.1:$SIDECAR_PORT"
  "page-sidecar|$WP_SITEURL/hello-world/"
  "options-default|$dflt/wp-json/themeopts/v1/options"
  "groups-default|$dflt/wp-json/fieldmgr/v1/field-groups"
  "groups-default-br|$dflt/wp-json/fieldmgr/v1/field-groups|$ae"
  "groups-ceiling-br|http://127.0.0.1:18089/|$ae"
  "groups-php|$php/wp-json/twin/v1/field-groups"
  "groups-php-gzip|$php/wp-json/twin/v1/field-groups|$ae"
)

if [ -n "$PROFILE" ]; then
  mkdir -p "$STATE/prof"
  for t in options-feed groups-feed options-request groups-request static-sidecar options-default groups-default-br; do
    for x in "${targets[@]}"; do IFS='|' read -r name url header _ <<<"$x"; [ "$name" = "$t" ] && break; done
    admin=18098; [[ "$url" == "$db"* ]] && admin=18099; [[ "$url" == "$dflt"* ]] && admin=18087
    wrk -t2 -c32 -d12s -H "$auth" ${header:+-H "$header"} "$url" >/dev/null &
    wrk_pid=$!
    sleep 1
    curl -s -o "$STATE/prof/$t.cpu" "http://127.0.0.1:$admin/debug/pprof/profile?seconds=8"
    curl -s -o "$STATE/prof/$t.alloc" "http://127.0.0.1:$admin/debug/pprof/allocs"
    wait "$wrk_pid"
    echo "profile: $STATE/prof/$t.cpu, $t.alloc"
  done
fi

bench_run "$auth" "${targets[@]}"
m() { bench_median "$1"; }
ratio() { awk -v a="$(m "$1")" -v b="$(m "$2")" 'BEGIN {printf "%.2f", a/b}'; }
echo
echo "| what | sidecar req/s | limit req/s | ratio | bar |"
echo "|---|---|---|---|---|"
row() { printf '| %s | %.0f | %.0f (%s) | %s× | %s |\n' "$1" "$(m "$2")" "$(m "$3")" "$3" "$(ratio "$2" "$3")" "$4"; }
row "options from the feed" options-feed options-ceiling "≥ 0.85×"
row "20 groups from the feed" groups-feed groups-ceiling "≥ 0.85×"
row "options from the feed" options-feed options-ceiling-headers "(reference)"
row "20 groups from the feed" groups-feed groups-ceiling-headers "(reference)"
row "options per request" options-request floor "≥ 0.6×"
row "20 groups per request" groups-request floor "≥ 0.4×"
row "static file passed through" static-sidecar static-nginx "≥ 0.6×"
row "page passed through" page-sidecar page-nginx "≈ 1×"
row "options from the feed, no access log" options-feed-nolog options-ceiling-headers "(ceiling with headers)"
row "20 groups from the feed, no access log" groups-feed-nolog groups-ceiling-headers "(ceiling with headers)"
row "options, default configuration" options-default options-ceiling-headers "(ceiling with headers)"
row "20 groups, default configuration" groups-default groups-ceiling-headers "(ceiling with headers)"
row "20 groups br, default configuration" groups-default-br groups-ceiling-br "(br bytes and headers from memory)"
row "20 groups br, default configuration" groups-default-br groups-default "(identity)"
row "20 groups br, default configuration" groups-default-br groups-php-gzip "(nginx gzipping PHP)"
row "20 groups, nginx gzipping PHP" groups-php-gzip groups-php "(PHP identity through nginx)"

# One answer of the 20 groups each way: its coding, body and head bytes.
size() { curl -s -o /dev/null -w '%header{content-encoding} | %{size_download} | %{size_header}' -H "$auth" ${2:+-H "$2"} "$1"; }
echo
echo "| 20 groups, one answer | coding | body bytes | head bytes |"
echo "|---|---|---|---|"
echo "| sidecar (default), no Accept-Encoding | $(size "$dflt/wp-json/fieldmgr/v1/field-groups") |"
echo "| sidecar (default), $ae | $(size "$dflt/wp-json/fieldmgr/v1/field-groups" "$ae") |"
echo "| PHP through nginx, no Accept-Encoding | $(size "$php/wp-json/twin/v1/field-groups") |"
echo "| PHP through nginx gzip, $ae | $(size "$php/wp-json/twin/v1/field-groups" "$ae") |"

# Overload: OVERLOAD_CONNS connections on the per-request options route.
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
metric() { curl -s http://127.0.0.1:18099/metrics | awk -v n="$1" '$1==n {s+=$2} END {print s+0}'; }
wrk -t2 -c32 -d"$DURATION" -H "$auth" "$db/wp-json/themeopts/v1/options" >/dev/null
rss32=$(rss "$db_sidecar_pid")
before503=$(metric 'wpsidecar_db_wait_refused_total')
out=$(wrk -t2 -c"$OVERLOAD_CONNS" -d"${OVERLOAD_DURATION:-10s}" --timeout 10s --latency -H "$auth" "$db/wp-json/themeopts/v1/options")
peak=$(hwm "$db_sidecar_pid")
after503=$(metric 'wpsidecar_db_wait_refused_total')
sleep 2
idle=$(rss "$db_sidecar_pid")
echo
echo "overload: $OVERLOAD_CONNS connections, options per request (--db-max-wait $DB_MAX_WAIT)"
awk '/^Requests\/sec/ {print "  requests/s " $2} $1=="99%" {print "  p99 (all answers) " $2} /Non-2xx/ {print "  non-2xx answers " $NF} /Socket errors/ {print "  " $0}' <<<"$out"
echo "  503s counted (wpsidecar_db_wait_refused_total): $((${after503%.*} - ${before503%.*}))"
echo "  resident memory: $((rss32 / 1024)) MB after 32 connections, peak $((peak / 1024)) MB under $OVERLOAD_CONNS, $((idle / 1024)) MB after"

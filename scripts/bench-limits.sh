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
: "${SIDECAR_GOMAXPROCS:=$(nproc)}" "${OVERLOAD_CONNS:=2000}" "${PROFILE:=}" "${DB_MAX_WAIT:=1s}"
mkdir -p "$STATE"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

WP_DB_NAME=wpsidecar_bench_limits
# shellcheck source=scripts/bench-binlog-db.sh
. scripts/bench-binlog-db.sh
[ -n "$PROFILE" ] && feed_args+=(--pprof)
SIDECAR_ARGS=("${feed_args[@]}" --serve-from-feed --admin-listen 127.0.0.1:18098)

# shellcheck source=scripts/bench-site.sh
. scripts/bench-site.sh
eval "$(declare -f bench_cleanup | sed '1s/bench_cleanup/bench_cleanup_site/')"
db_sidecar_pid="" ref_pids=()
bench_cleanup() { kill "${ref_pids[@]}" 2>/dev/null; [ -n "$db_sidecar_pid" ] && kill "$db_sidecar_pid" 2>/dev/null; bench_cleanup_site; stop_db; }
trap bench_cleanup EXIT

# The second sidecar: the same, reading the database per request.
GOMAXPROCS=$SIDECAR_GOMAXPROCS "$STATE/wpsidecar" --listen "127.0.0.1:$DB_SIDECAR_PORT" --admin-listen 127.0.0.1:18099 --upstream "$WP_URL" --wp-config "$WP_CONFIG" \
  --db-max-wait "$DB_MAX_WAIT" "${feed_args[@]}" > "$STATE/sidecar-db.log" 2>&1 &
db_sidecar_pid=$!
for _ in $(seq 1 50); do curl -fso /dev/null "http://127.0.0.1:$DB_SIDECAR_PORT/static.txt" && break; sleep 0.1; done
grep -q '"serve-from-feed on' "$STATE/sidecar.log" || { echo "bench: the sidecar does not serve from the feed:" >&2; cat "$STATE/sidecar.log" >&2; exit 1; }

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
for p in 18096 18097 18093 18094; do
  for _ in $(seq 1 50); do curl -fso /dev/null "http://127.0.0.1:$p/" && break; sleep 0.1; done
done

db="http://127.0.0.1:$DB_SIDECAR_PORT"
targets=(
  "floor|http://127.0.0.1:$BENCHREF_PORT/"
  "options-ceiling|http://127.0.0.1:18096/"
  "groups-ceiling|http://127.0.0.1:18097/"
  "options-ceiling-headers|http://127.0.0.1:18093/"
  "groups-ceiling-headers|http://127.0.0.1:18094/"
  "options-feed|$WP_SITEURL/wp-json/themeopts/v1/options"
  "groups-feed|$WP_SITEURL/wp-json/fieldmgr/v1/field-groups"
  "options-request|$db/wp-json/themeopts/v1/options"
  "groups-request|$db/wp-json/fieldmgr/v1/field-groups"
  "static-nginx|http://127.0.0.1:$WP_PROXY_PORT/static.txt"
  "static-sidecar|$db/static.txt"
  "page-nginx|http://127.0.0.1:$WP_PROXY_PORT/hello-world/|Host: 127.0.0.1:$SIDECAR_PORT"
  "page-sidecar|$WP_SITEURL/hello-world/"
)

if [ -n "$PROFILE" ]; then
  mkdir -p "$STATE/prof"
  for t in options-feed groups-feed options-request groups-request static-sidecar; do
    for x in "${targets[@]}"; do IFS='|' read -r name url _ <<<"$x"; [ "$name" = "$t" ] && break; done
    admin=18098; [[ "$url" == "$db"* ]] && admin=18099
    wrk -t2 -c32 -d12s -H "$auth" "$url" >/dev/null &
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

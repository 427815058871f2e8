#!/usr/bin/env bash
# --serve-from-feed benchmark: authenticated GET /themeopts/v1/options and
# GET /fieldmgr/v1/field-groups (20 groups of 10 fields) through a sidecar
# that answers from memory kept current by the binary log, against the
# same GETs through a second sidecar that reads the database per request,
# WordPress's own GET /wp-json/wp/v2/settings, and the bare one-read handler
# (scripts/benchref), in the same run, alternating. WordPress runs on a
# private mariadbd with its binary log on (row-based), started here.
# Bar: the memory-served GETs at least twice the bare handler's requests/s.
# Also measured, as the ceiling: benchref -body answering each route's
# exact bytes from memory (no database, no authentication, no routing, no
# log): no handler that answers from memory can do better on this machine.
# The sidecar gets all the CPUs here, as the bare handlers do
# (SIDECAR_GOMAXPROCS; its default, --max-procs 0, takes half, leaving the
# rest to PHP).
#
#   scripts/bench-serve-from-feed.sh          # ROUNDS=3 DURATION=5s
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ROUNDS:=3}" "${DURATION:=5s}" "${STATE:=.bench-feed}" "${FEED_DB_PORT:=18306}" "${DB_SIDECAR_PORT:=18090}"
: "${SIDECAR_GOMAXPROCS:=$(nproc)}"
mkdir -p "$STATE"

WP_DB_NAME=wpsidecar_bench_feed
# shellcheck source=scripts/bench-binlog-db.sh
. scripts/bench-binlog-db.sh
SIDECAR_ARGS=("${feed_args[@]}" --serve-from-feed)

# shellcheck source=scripts/bench-site.sh
. scripts/bench-site.sh
# bench-site's clean-up, then the database's.
eval "$(declare -f bench_cleanup | sed '1s/bench_cleanup/bench_cleanup_site/')"
db_sidecar_pid=""
bench_cleanup() { [ -n "$db_sidecar_pid" ] && kill "$db_sidecar_pid" 2>/dev/null; bench_cleanup_site; stop_db; }
trap bench_cleanup EXIT

# The second sidecar: the same, reading the database per request (it
# follows the feed, and would serve from memory unless told not to).
GOMAXPROCS=$SIDECAR_GOMAXPROCS "$STATE/wpsidecar" --listen "127.0.0.1:$DB_SIDECAR_PORT" --admin-listen 127.0.0.1:0 --upstream "$WP_URL" --wp-config "$WP_CONFIG" \
  "${feed_args[@]}" --serve-from-feed=false > "$STATE/sidecar-db.log" 2>&1 &
db_sidecar_pid=$!
for _ in $(seq 1 50); do curl -fso /dev/null "http://127.0.0.1:$DB_SIDECAR_PORT/static.txt" && break; sleep 0.1; done
grep -q '"serve-from-feed on' "$STATE/sidecar.log" || { echo "bench: the sidecar does not serve from the feed:" >&2; cat "$STATE/sidecar.log" >&2; exit 1; }

pw=$(WP_HTTP_HOST="127.0.0.1:$SIDECAR_PORT" php scripts/wp/app-password.php "$WP_DOCROOT" "$WP_ADMIN_USER" bench "$STATE/bench-app-password.json")
auth="Authorization: Basic $(printf '%s:%s' "$WP_ADMIN_USER" "$pw" | base64 -w0)"
curl -s -o /dev/null -H "$auth" -H 'Content-Type: application/json' -d '{"accent":"#112233","tagline":"Grüße 😀","sticky":false}' "$WP_SITEURL/wp-json/themeopts/v1/options"
bench_make_groups "$auth" "$WP_SITEURL/wp-json/fieldmgr/v1"

bench_start_ref -table wp_options -column option_value -where option_name -key themeopts_bench
# The ceilings: each answer's bytes, from memory.
curl -s -H "$auth" "$WP_SITEURL/wp-json/themeopts/v1/options" > "$STATE/options.json"
curl -s -H "$auth" "$WP_SITEURL/wp-json/fieldmgr/v1/field-groups" > "$STATE/groups.json"
"$STATE/benchref" -listen 127.0.0.1:18096 -body "$STATE/options.json" & ceil1=$!
"$STATE/benchref" -listen 127.0.0.1:18097 -body "$STATE/groups.json" & ceil2=$!
trap 'kill $ref_pid $ceil1 $ceil2 2>/dev/null; bench_cleanup' EXIT
for _ in $(seq 1 50); do curl -fso /dev/null http://127.0.0.1:18097/ && break; sleep 0.1; done

db="http://127.0.0.1:$DB_SIDECAR_PORT"
targets=(
  "bare-point-read|http://127.0.0.1:$BENCHREF_PORT/"
  "wordpress-settings|$WP_SITEURL/wp-json/wp/v2/settings"
  "options-ceiling|http://127.0.0.1:18096/"
  "groups-ceiling|http://127.0.0.1:18097/"
  "options-memory|$WP_SITEURL/wp-json/themeopts/v1/options"
  "options-database|$db/wp-json/themeopts/v1/options"
  "groups-memory|$WP_SITEURL/wp-json/fieldmgr/v1/field-groups"
  "groups-database|$db/wp-json/fieldmgr/v1/field-groups"
)
bench_run "$auth" "${targets[@]}"
ref=$(bench_median bare-point-read)
for name in options-ceiling options-memory options-database groups-ceiling groups-memory groups-database; do
  printf '%-17s median %9.1f req/s = %5.2fx the bare one-read handler, %6.1fx WordPress; worst p99 %s ms   (bar for -memory: >= 2x the bare handler)\n' \
    "$name" "$(bench_median "$name")" "$(awk -v a="$(bench_median "$name")" -v b="$ref" 'BEGIN {print a/b}')" \
    "$(awk -v a="$(bench_median "$name")" -v b="$(bench_median wordpress-settings)" 'BEGIN {print a/b}')" "$(bench_worst_p99 "$name")"
done
bench_report_ref
printf 'options-memory = %.0f%% of its ceiling; groups-memory = %.0f%% of its ceiling (%s bytes)\n' \
  "$(awk -v a="$(bench_median options-memory)" -v b="$(bench_median options-ceiling)" 'BEGIN {print 100*a/b}')" \
  "$(awk -v a="$(bench_median groups-memory)" -v b="$(bench_median groups-ceiling)" 'BEGIN {print 100*a/b}')" "$(wc -c < "$STATE/groups.json")"

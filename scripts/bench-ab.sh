#!/usr/bin/env bash
# Two revisions of the sidecar in one run, so that a change that should not
# cost speed (a refactor) is measured as such: BASE (a git revision,
# default main) and the working tree, each in front of the same WordPress
# and the same binlog-enabled MariaDB, each twice — reading the database
# per request (the default) and serving from the feed (--change-feed
# binlog --serve-from-feed). The rounds alternate between the four; the
# table gives medians of ROUNDS rounds of wrk -t2 -c32 and the ratio of
# the tree to BASE. Noise on a shared machine is a few percent either way:
# read a ratio within it as "the same".
#
#   scripts/bench-ab.sh                     # BASE=main ROUNDS=5 DURATION=5s
#   BASE=v1.2.0 ROUNDS=3 scripts/bench-ab.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BASE:=main}" "${ROUNDS:=5}" "${DURATION:=5s}" "${STATE:=.bench-ab}" "${FEED_DB_PORT:=18316}"
: "${SIDECAR_GOMAXPROCS:=$(nproc)}"
export SIDECAR_GOMAXPROCS
mkdir -p "$STATE"

# BASE's sidecar, built from a clean export of that revision.
base_src=$(mktemp -d)
git archive "$BASE" | tar -x -C "$base_src"
(cd "$base_src" && go build -o "$OLDPWD/$STATE/wpsidecar-base" ./cmd/wpsidecar)
rm -rf "$base_src"
echo "bench-ab: base $(git rev-parse --short "$BASE") against the tree $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with changes)')"

WP_DB_NAME=wpsidecar_bench_ab
# shellcheck source=scripts/bench-binlog-db.sh
. scripts/bench-binlog-db.sh
# The tree's feed sidecar is the one bench-site.sh starts (SIDECAR_PORT).
SIDECAR_ARGS=("${feed_args[@]}" --serve-from-feed)
# shellcheck source=scripts/bench-site.sh
. scripts/bench-site.sh
eval "$(declare -f bench_cleanup | sed '1s/bench_cleanup/bench_cleanup_site/')"
more_pids=()
bench_cleanup() { kill "${more_pids[@]}" 2>/dev/null; bench_cleanup_site; stop_db; }
trap bench_cleanup EXIT

# start BINARY PORT FLAGS...: another sidecar in front of the same site.
start() {
  local bin=$1 port=$2
  shift 2
  GOMAXPROCS=$SIDECAR_GOMAXPROCS "$bin" --listen "127.0.0.1:$port" --admin-listen 127.0.0.1:0 --upstream "$WP_URL" \
    --wp-config "$WP_CONFIG" "$@" > "$STATE/sidecar-$port.log" 2>&1 &
  more_pids+=($!)
  for _ in $(seq 1 100); do curl -fso /dev/null "http://127.0.0.1:$port/static.txt" && return; sleep 0.1; done
  echo "bench-ab: the sidecar on $port did not start:" >&2
  cat "$STATE/sidecar-$port.log" >&2
  exit 1
}
# Per request: polling (the default, change-feed auto, would follow the
# bench's binlog and serve from memory; BASE may predate auto).
request_args=(--themeopts-config "$STATE/themeopts-bench.json" --change-feed poll)
start "$STATE/wpsidecar" 18321 "${request_args[@]}"
start "$STATE/wpsidecar-base" 18322 "${feed_args[@]}" --serve-from-feed
start "$STATE/wpsidecar-base" 18323 "${request_args[@]}"

pw=$(WP_HTTP_HOST="127.0.0.1:$SIDECAR_PORT" php scripts/wp/app-password.php "$WP_DOCROOT" "$WP_ADMIN_USER" bench "$STATE/bench-app-password.json")
auth="Authorization: Basic $(printf '%s:%s' "$WP_ADMIN_USER" "$pw" | base64 -w0)"
curl -s -o /dev/null -H "$auth" -H 'Content-Type: application/json' -d '{"accent":"#112233","tagline":"Grüße 😀","sticky":false}' "$WP_SITEURL/wp-json/themeopts/v1/options"
bench_make_groups "$auth" "$WP_SITEURL/wp-json/fieldmgr/v1"

# Both revisions must answer alike before they are compared.
for p in 18321 18322 18323; do
  for path in themeopts/v1/options fieldmgr/v1/field-groups; do
    cmp -s <(curl -s -H "$auth" "$WP_SITEURL/wp-json/$path") <(curl -s -H "$auth" "http://127.0.0.1:$p/wp-json/$path") ||
      { echo "bench-ab: the sidecar on $p answers $path differently" >&2; exit 1; }
  done
done

tree_feed=$WP_SITEURL tree_request=http://127.0.0.1:18321 base_feed=http://127.0.0.1:18322 base_request=http://127.0.0.1:18323
targets=()
for what in feed request; do
  for rev in tree base; do
    url_var=${rev}_$what
    targets+=("options-$what-$rev|${!url_var}/wp-json/themeopts/v1/options" "groups-$what-$rev|${!url_var}/wp-json/fieldmgr/v1/field-groups")
  done
done
bench_run "$auth" "${targets[@]}"

m() { bench_median "$1"; }
echo
echo "| route | mode | base req/s | tree req/s | tree / base |"
echo "|---|---|---|---|---|"
for what in feed request; do
  for route in options groups; do
    printf '| %s | %s | %.0f | %.0f | %s× |\n' "$route" "$what" "$(m "$route-$what-base")" "$(m "$route-$what-tree")" \
      "$(awk -v a="$(m "$route-$what-tree")" -v b="$(m "$route-$what-base")" 'BEGIN {printf "%.2f", a/b}')"
  done
done

# Sourced by the benchmark scripts: builds the sidecar, stands up the bench
# WordPress (scripts/wordpress.sh) and starts the sidecar in front of it;
# stops both on exit. Sets WP_* (see wordpress.sh env), SIDECAR_PORT, STATE.
# SIDECAR_GOMAXPROCS sets the sidecar's GOMAXPROCS by hand.
: "${STATE:=.bench}"
export WP_PORT=${WP_PORT:-18081} WP_PROXY_PORT=${WP_PROXY_PORT:-18082}
SIDECAR_PORT=${SIDECAR_PORT:-18080}
export WP_SITEURL="http://127.0.0.1:$SIDECAR_PORT" WP_DB_NAME=${WP_DB_NAME:-wpsidecar_bench}

command -v wrk >/dev/null || { echo "bench: wrk missing: run scripts/install-deps.sh" >&2; exit 1; }
mkdir -p "$STATE"
go build -o "$STATE/wpsidecar" ./cmd/wpsidecar
sidecar_pid=""
bench_cleanup() {
  [ -n "$sidecar_pid" ] && kill "$sidecar_pid" 2>/dev/null && wait "$sidecar_pid" 2>/dev/null
  scripts/wordpress.sh stop "$STATE/wp"
}
trap bench_cleanup EXIT
scripts/wordpress.sh start "$STATE/wp" > "$STATE/wp.env"
# shellcheck disable=SC1091
. "$STATE/wp.env"

env ${SIDECAR_GOMAXPROCS:+GOMAXPROCS=$SIDECAR_GOMAXPROCS} "$STATE/wpsidecar" --listen "127.0.0.1:$SIDECAR_PORT" \
  --admin-listen 127.0.0.1:0 --upstream "$WP_URL" --wp-config "$WP_CONFIG" > "$STATE/sidecar.log" 2>&1 &
sidecar_pid=$!
for _ in $(seq 1 50); do curl -fso /dev/null "$WP_SITEURL/static.txt" && break; sleep 0.1; done

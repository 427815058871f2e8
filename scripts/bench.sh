#!/usr/bin/env bash
# Pass-through benchmark: a real WordPress page, /wp-json/wp/v2/posts and a
# small static file, each directly and through the sidecar (and the static
# file through nginx configured as a reverse proxy to the same upstream),
# interleaved round by round so that the shared machine's noise hits every
# target alike. Prints requests/s and p99 per target (median of the rounds)
# and the ratios the pass-through issue asks for.
#
#   scripts/bench.sh            # ROUNDS=3 DURATION=8s
# Needs: scripts/install-deps.sh (wrk, nginx, php-fpm, wordpress, MariaDB).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ROUNDS:=3}" "${DURATION:=8s}" "${STATE:=.bench}"
export WP_PORT=${WP_PORT:-18081} WP_PROXY_PORT=${WP_PROXY_PORT:-18082}
SIDECAR_PORT=${SIDECAR_PORT:-18080}
export WP_SITEURL="http://127.0.0.1:$SIDECAR_PORT" WP_DB_NAME=${WP_DB_NAME:-wpsidecar_bench}

command -v wrk >/dev/null || { echo "bench: wrk missing: run scripts/install-deps.sh" >&2; exit 1; }
mkdir -p "$STATE"
go build -o "$STATE/wpsidecar" ./cmd/wpsidecar
scripts/wordpress.sh start "$STATE/wp" > /dev/null
sidecar_pid=""
cleanup() {
  [ -n "$sidecar_pid" ] && kill "$sidecar_pid" 2>/dev/null && wait "$sidecar_pid" 2>/dev/null
  scripts/wordpress.sh stop "$STATE/wp"
}
trap cleanup EXIT

"$STATE/wpsidecar" --listen "127.0.0.1:$SIDECAR_PORT" --admin-listen 127.0.0.1:0 \
  --upstream "http://127.0.0.1:$WP_PORT" --wp-config "$STATE/wp/wordpress/wp-config.php" \
  > "$STATE/sidecar.log" 2>&1 &
sidecar_pid=$!
for _ in $(seq 1 50); do curl -fso /dev/null "http://127.0.0.1:$SIDECAR_PORT/static.txt" && break; sleep 0.1; done

host="127.0.0.1:$SIDECAR_PORT"
# name|url|connections
targets=(
  "page direct|http://127.0.0.1:$WP_PORT/hello-world/|16"
  "page sidecar|http://127.0.0.1:$SIDECAR_PORT/hello-world/|16"
  "posts direct|http://127.0.0.1:$WP_PORT/wp-json/wp/v2/posts|16"
  "posts sidecar|http://127.0.0.1:$SIDECAR_PORT/wp-json/wp/v2/posts|16"
  "static nginx-proxy|http://127.0.0.1:$WP_PROXY_PORT/static.txt|32"
  "static sidecar|http://127.0.0.1:$SIDECAR_PORT/static.txt|32"
)
for t in "${targets[@]}"; do # every target must answer 200 before it is measured
  IFS='|' read -r name url _ <<<"$t"
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" "$url")
  [ "$code" = 200 ] || { echo "bench: $name ($url) answered $code" >&2; exit 1; }
done

results=$STATE/results.txt
: > "$results"
for round in $(seq 1 "$ROUNDS"); do
  for t in "${targets[@]}"; do
    IFS='|' read -r name url conns <<<"$t"
    out=$(wrk -t2 -c"$conns" -d"$DURATION" --latency -H "Host: $host" "$url")
    rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
    echo "$name|$round|$rps|$p99|${non2xx:-0}" >> "$results"
    printf 'round %d  %-20s %10s req/s  p99 %-8s non-2xx %s\n' "$round" "$name" "$rps" "$p99" "${non2xx:-0}"
  done
done

echo
echo "median of $ROUNDS rounds, wrk -t2, $DURATION each, $(nproc) cores:"
median() { grep "^$1|" "$results" | cut -d'|' -f3 | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for t in "${targets[@]}"; do
  IFS='|' read -r name _ conns <<<"$t"
  printf '  %-20s %10s req/s  (c=%s)\n' "$name" "$(median "$name")" "$conns"
done
ratio() { awk -v a="$(median "$1")" -v b="$(median "$2")" 'BEGIN {printf "%.1f%%", 100*a/b}'; }
echo "  page through sidecar / direct:        $(ratio 'page sidecar' 'page direct')   (bar: >= 95%)"
echo "  posts through sidecar / direct:       $(ratio 'posts sidecar' 'posts direct')   (bar: >= 95%)"
echo "  static: sidecar / nginx reverse proxy: $(ratio 'static sidecar' 'static nginx-proxy')   (bar: >= 30%)"

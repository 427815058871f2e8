#!/usr/bin/env bash
# Pass-through benchmark: a real WordPress page and /wp-json/wp/v2/posts,
# directly and through the sidecar, and a small static file through nginx
# configured as a reverse proxy to the same upstream and through the
# sidecar. Prints requests/s, the worst p99 and the ratios per pair.
#
#   scripts/bench.sh            # ROUNDS=8 DURATION=4s: about 4 minutes
#   SIDECAR_GOMAXPROCS=2 scripts/bench.sh   # the sidecar's GOMAXPROCS set by hand
#   PAIRS=posts ROUNDS=12 scripts/bench.sh  # one pair, more rounds
# Needs: scripts/install-deps.sh (wrk, nginx, php-fpm, wordpress, MariaDB).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ROUNDS:=8}" "${DURATION:=4s}"
# shellcheck source=scripts/bench-site.sh
. scripts/bench-site.sh

host="127.0.0.1:$SIDECAR_PORT"
# Pairs to compare: name|baseline URL|sidecar URL|connections. Each pair is
# measured in ROUNDS short alternating runs (the order swapped every round),
# so that the shared machine's drift hits both sides alike.
pairs=(
  "page|http://127.0.0.1:$WP_PORT/hello-world/|http://127.0.0.1:$SIDECAR_PORT/hello-world/|16"
  "posts|http://127.0.0.1:$WP_PORT/wp-json/wp/v2/posts|http://127.0.0.1:$SIDECAR_PORT/wp-json/wp/v2/posts|16"
  "static|http://127.0.0.1:$WP_PROXY_PORT/static.txt|http://127.0.0.1:$SIDECAR_PORT/static.txt|32"
  # Reference, not a bar: what nginx as a reverse proxy keeps of direct.
  "page-via-nginx|http://127.0.0.1:$WP_PORT/hello-world/|http://127.0.0.1:$WP_PROXY_PORT/hello-world/|16"
)
if [ -n "${PAIRS:-}" ]; then # e.g. PAIRS=posts,page: measure only those
  selected=()
  for p in "${pairs[@]}"; do [[ ",$PAIRS," == *",${p%%|*},"* ]] && selected+=("$p"); done
  pairs=("${selected[@]}")
fi
for p in "${pairs[@]}"; do # every target must answer 200 before it is measured
  IFS='|' read -r name base side _ <<<"$p"
  for url in "$base" "$side"; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" "$url")
    [ "$code" = 200 ] || { echo "bench: $name ($url) answered $code" >&2; exit 1; }
  done
done

run_wrk() { # url conns -> "rps p99 non2xx"
  local out
  out=$(wrk -t2 -c"$2" -d"$DURATION" --latency -H "Host: $host" "$1")
  echo "$(awk '/^Requests\/sec/ {print $2}' <<<"$out") $(awk '$1=="99%" {print $2}' <<<"$out") $(awk '/Non-2xx/ {print $NF}' <<<"$out")"
}

echo "machine: $(nproc) cores; wrk -t2, $DURATION runs, $ROUNDS rounds per pair; sidecar GOMAXPROCS=${SIDECAR_GOMAXPROCS:-its default}"
for p in "${pairs[@]}"; do
  IFS='|' read -r name base side conns <<<"$p"
  bsum=0; ssum=0; ratios=(); bp99=(); sp99=()
  for round in $(seq 1 "$ROUNDS"); do
    order=(base side)
    [ $((round % 2)) -eq 0 ] && order=(side base)
    for which in "${order[@]}"; do
      url=$base; [ "$which" = side ] && url=$side
      read -r rps p99 non2xx <<<"$(run_wrk "$url" "$conns")"
      [ -z "$non2xx" ] || { echo "bench: $name $which: $non2xx non-2xx answers" >&2; exit 1; }
      if [ "$which" = base ]; then b=$rps; bsum=$(awk -v a="$bsum" -v b="$rps" 'BEGIN {print a+b}'); bp99+=("$p99")
      else s=$rps; ssum=$(awk -v a="$ssum" -v b="$rps" 'BEGIN {print a+b}'); sp99+=("$p99"); fi
    done
    ratios+=("$(awk -v s="$s" -v b="$b" 'BEGIN {printf "%.3f", s/b}')")
  done
  median=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf '%-14s baseline %9.1f req/s  through %9.1f req/s  ratio of sums %5.1f%%  median round ratio %5.1f%%  p99 baseline %s through %s\n' \
    "$name" "$(awk -v a="$bsum" -v n="$ROUNDS" 'BEGIN {print a/n}')" "$(awk -v a="$ssum" -v n="$ROUNDS" 'BEGIN {print a/n}')" \
    "$(awk -v s="$ssum" -v b="$bsum" 'BEGIN {print 100*s/b}')" "$(awk -v m="$median" 'BEGIN {print 100*m}')" \
    "$(printf '%s\n' "${bp99[@]}" | sort -V | tail -n1)" "$(printf '%s\n' "${sp99[@]}" | sort -V | tail -n1)"
done
echo "bars: page and posts (baseline: WordPress directly) >= 95%; static (baseline: nginx as a reverse proxy) >= 30%"
echo "page-via-nginx: nginx as a reverse proxy in the sidecar's place (reference for page)"

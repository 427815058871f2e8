#!/usr/bin/env bash
# fieldmgr/v1 benchmark: GET /field-groups (20 groups of 10 fields) and
# GET /field-groups/{id} through the sidecar, authenticated with an
# application password, against WordPress's own authenticated
# GET /wp-json/wp/v2/settings through the same sidecar, in the same run,
# alternating. Bar: at least 30 times WordPress's requests/s, p99 < 10 ms.
# Also measured, as the machine's floor: scripts/benchref, a bare Go handler
# doing one MariaDB point read per request (no auth, no routing, no log).
#
#   scripts/bench-fieldmgr.sh          # ROUNDS=3 DURATION=5s
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ROUNDS:=3}" "${DURATION:=5s}"
# shellcheck source=scripts/bench-site.sh
. scripts/bench-site.sh

pw=$(WP_HTTP_HOST="127.0.0.1:$SIDECAR_PORT" php scripts/wp/app-password.php "$WP_DOCROOT" "$WP_ADMIN_USER" bench "$STATE/bench-app-password.json")
auth="Authorization: Basic $(printf '%s:%s' "$WP_ADMIN_USER" "$pw" | base64 -w0)"
api="$WP_SITEURL/wp-json/fieldmgr/v1"

# 20 groups of 10 fields (made once; the table is the site's).
for g in $(seq 1 20); do
  fields=""
  for i in $(seq 1 10); do
    fields="$fields${fields:+,}\"field_$i\":{\"type\":\"text\",\"label\":\"Field $i of group $g\",\"placeholder\":\"…\",\"maxlength\":80}"
  done
  curl -s -o /dev/null -H "$auth" -H 'Content-Type: application/json' \
    -d "{\"group_key\":\"bench_$g\",\"title\":\"Bench group $g\",\"config\":{\"type\":\"post\",\"post_type\":\"post\",\"fields\":{$fields}}}" "$api/field-groups"
done
n=$(curl -s -H "$auth" "$api/field-groups" | grep -o '"id":"bench_' | wc -l)
[ "$n" -ge 20 ] || { echo "bench: only $n bench groups" >&2; exit 1; }

go build -o "$STATE/benchref" ./scripts/benchref
: "${BENCHREF_PORT:=18095}"
"$STATE/benchref" -listen "127.0.0.1:$BENCHREF_PORT" -dsn "${BENCHREF_DSN:-root@tcp(127.0.0.1:3306)/$WP_DB_NAME}" -key bench_7 &
ref_pid=$!
trap 'kill $ref_pid 2>/dev/null; bench_cleanup' EXIT
for _ in $(seq 1 50); do curl -fso /dev/null "http://127.0.0.1:$BENCHREF_PORT/" && break; sleep 0.1; done

targets=(
  "bare-point-read|http://127.0.0.1:$BENCHREF_PORT/"
  "wordpress-settings|$WP_SITEURL/wp-json/wp/v2/settings"
  "field-groups|$api/field-groups"
  "field-group|$api/field-groups/bench_7"
)
for t in "${targets[@]}"; do
  IFS='|' read -r name url <<<"$t"
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "$auth" "$url")
  [ "$code" = 200 ] || { echo "bench: $name answered $code" >&2; exit 1; }
done

results=$STATE/fieldmgr-results.txt
: > "$results"
echo "machine: $(nproc) cores; wrk -t2 -c32, $DURATION runs, $ROUNDS rounds"
for round in $(seq 1 "$ROUNDS"); do
  for t in "${targets[@]}"; do
    IFS='|' read -r name url <<<"$t"
    out=$(wrk -t2 -c32 -d"$DURATION" --latency -H "$auth" "$url")
    rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
    # wrk prints 850.00us, 12.34ms or 1.02s; kept in ms so they sort.
    p99=$(awk '$1=="99%" {v=$2; u=v; gsub(/[0-9.]/,"",u); sub(/[a-z]+$/,"",v)
      printf "%.2f", (u=="us" ? v/1000 : (u=="s" ? v*1000 : v))}' <<<"$out")
    non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
    [ -z "$non2xx" ] || { echo "bench: $name: $non2xx non-2xx answers" >&2; exit 1; }
    echo "$name|$rps|$p99" >> "$results"
    printf 'round %d  %-20s %10s req/s  p99 %s ms\n' "$round" "$name" "$rps" "$p99"
  done
done
median() { grep "^$1|" "$results" | cut -d'|' -f2 | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wp=$(median wordpress-settings)
for name in field-groups field-group; do
  printf '%-14s median %9.1f req/s = %5.1fx WordPress (%s req/s); worst p99 %s   (bar: >= 30x, p99 < 10ms)\n' \
    "$name" "$(median $name)" "$(awk -v a="$(median $name)" -v b="$wp" 'BEGIN {print a/b}')" "$wp" \
    "$(grep "^$name|" "$results" | cut -d'|' -f3 | sort -g | tail -n1) ms"
done
printf 'bare point read median %9.1f req/s; worst p99 %s   (the floor: one MariaDB read, nothing else)\n' \
  "$(median bare-point-read)" "$(grep "^bare-point-read|" "$results" | cut -d'|' -f3 | sort -g | tail -n1) ms"

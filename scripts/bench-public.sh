#!/usr/bin/env bash
# Public routes benchmark: an anonymous GET of a public theme-options route
# (5 ids of a 10-id set) through the sidecar, against the bare one-read Go
# handler (scripts/benchref: one MariaDB point read of the same row, no
# routing, no log) and WordPress's anonymous GET /wp-json/ in the same run,
# alternating. Bar: at least 80% of the bare handler's requests/s.
#
#   scripts/bench-public.sh          # ROUNDS=3 DURATION=5s
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ROUNDS:=3}" "${DURATION:=5s}" "${STATE:=.bench}"
mkdir -p "$STATE"
fields=""
for i in $(seq 1 10); do fields="$fields${fields:+,}{\"id\":\"opt_$i\",\"type\":\"text\",\"title\":\"Option $i\",\"default\":\"\"}"; done
echo "{\"opt_name\":\"themeopts_public_bench\",\"sections\":[{\"id\":\"all\",\"title\":\"All\",\"fields\":[$fields]}]}" > "$STATE/public-themeopts.json"
echo '{"routes":[{"path":"/wp-json/bench/v1/brand","themeopts":["opt_1","opt_3","opt_5","opt_7","opt_9"],"max_age":60,"s_maxage":3600}]}' > "$STATE/public-routes.json"
SIDECAR_ARGS=(--themeopts-config "$STATE/public-themeopts.json" --public-routes "$STATE/public-routes.json")

# shellcheck source=scripts/bench-site.sh
. scripts/bench-site.sh

pw=$(WP_HTTP_HOST="127.0.0.1:$SIDECAR_PORT" php scripts/wp/app-password.php "$WP_DOCROOT" "$WP_ADMIN_USER" bench "$STATE/bench-app-password.json")
auth="Authorization: Basic $(printf '%s:%s' "$WP_ADMIN_USER" "$pw" | base64 -w0)"
values=""
for i in $(seq 1 10); do values="$values${values:+,}\"opt_$i\":\"Value number $i, Grüße\""; done
curl -sf -o /dev/null -H "$auth" -H 'Content-Type: application/json' -d "{$values}" "$WP_SITEURL/wp-json/themeopts/v1/options"

bench_start_ref -table wp_options -column option_value -where option_name -key themeopts_public_bench

targets=(
  "bare-point-read|http://127.0.0.1:$BENCHREF_PORT/"
  "wordpress-settings|$WP_SITEURL/wp-json/"
  "public-route|$WP_SITEURL/wp-json/bench/v1/brand"
)
# Anonymous: no credentials on any target.
bench_run "X-Bench: anonymous" "${targets[@]}"
bench_report_ref
pub=$(bench_median public-route) ref=$(bench_median bare-point-read)
printf 'public route   median %9.1f req/s = %3.0f%% of the bare point read; worst p99 %s ms   (bar: >= 80%%); WordPress /wp-json/ %s req/s\n' \
  "$pub" "$(awk -v a="$pub" -v b="$ref" 'BEGIN {print 100*a/b}')" "$(bench_worst_p99 public-route)" "$(bench_median wordpress-settings)"

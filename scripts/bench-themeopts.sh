#!/usr/bin/env bash
# themeopts/v1 benchmark: GET /options with a 30-field option set through
# the sidecar, authenticated with an application password, against
# WordPress's own authenticated GET /wp-json/wp/v2/settings through the same
# sidecar and a bare one-read Go handler (scripts/benchref), in the same run,
# alternating; and the same GET revalidated with If-None-Match (304). Bars:
# at least 30 times WordPress's requests/s, p99 < 10 ms; a 304 no dearer
# than the cheapest database read.
#
#   scripts/bench-themeopts.sh          # ROUNDS=3 DURATION=5s
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ROUNDS:=3}" "${DURATION:=5s}" "${STATE:=.bench}"
mkdir -p "$STATE"

# 30 fields of every kind.
fields="" values=""
add() { fields="$fields${fields:+,}$1"; values="$values${values:+,}$2"; }
for i in $(seq 1 10); do add "{\"id\":\"text_$i\",\"type\":\"text\",\"title\":\"Text $i\",\"default\":\"\"}" "\"text_$i\":\"Grüße, Text Nummer $i 😀\""; done
for i in $(seq 1 5); do add "{\"id\":\"color_$i\",\"type\":\"color\",\"title\":\"Color $i\",\"default\":\"#3366ff\"}" "\"color_$i\":\"#ff00${i}${i}\""; done
for i in $(seq 1 5); do add "{\"id\":\"switch_$i\",\"type\":\"switch\",\"title\":\"Switch $i\",\"default\":true}" "\"switch_$i\":false"; done
for i in $(seq 1 3); do add "{\"id\":\"layout_$i\",\"type\":\"select\",\"title\":\"Layout $i\",\"options\":{\"wide\":\"Wide\",\"boxed\":\"Boxed\"},\"default\":\"wide\"}" "\"layout_$i\":\"boxed\""; done
for i in 1 2; do add "{\"id\":\"font_$i\",\"type\":\"typography\",\"title\":\"Font $i\"}" "\"font_$i\":{\"font-family\":\"Inter\",\"font-weight\":\"400\",\"font-size\":\"16\",\"line-height\":\"1.5\",\"letter-spacing\":\"0\",\"text-transform\":\"none\",\"font-style\":\"normal\",\"subsets\":[\"latin\",\"latin-ext\"]}"; done
for i in 1 2; do add "{\"id\":\"number_$i\",\"type\":\"number\",\"title\":\"Number $i\",\"default\":3}" "\"number_$i\":1.5"; done
add '{"id":"logo","type":"media","title":"Logo"}' '"logo":{"id":12,"url":"http://example.test/wp-content/uploads/logo.png","width":300,"height":80,"alt":"Logo","title":"Logo"}'
add '{"id":"slides","type":"gallery","title":"Slides","default":[]}' '"slides":[{"id":1,"url":"http://example.test/1.jpg","alt":"One"},{"id":2,"url":"http://example.test/2.jpg","alt":"Two"}]'
add '{"id":"social","type":"social","title":"Social","default":[]}' '"social":[{"platform":"mastodon","url":"https://example.social/@site"},{"platform":"github","url":"https://github.com/example"}]'
echo "{\"opt_name\":\"themeopts_bench\",\"sections\":[{\"id\":\"all\",\"title\":\"All\",\"fields\":[$fields]}]}" > "$STATE/themeopts-bench.json"
SIDECAR_ARGS=(--themeopts-config "$STATE/themeopts-bench.json")

# shellcheck source=scripts/bench-site.sh
. scripts/bench-site.sh

pw=$(WP_HTTP_HOST="127.0.0.1:$SIDECAR_PORT" php scripts/wp/app-password.php "$WP_DOCROOT" "$WP_ADMIN_USER" bench "$STATE/bench-app-password.json")
auth="Authorization: Basic $(printf '%s:%s' "$WP_ADMIN_USER" "$pw" | base64 -w0)"
api="$WP_SITEURL/wp-json/themeopts/v1"
saved=$(curl -s -H "$auth" -H 'Content-Type: application/json' -d "{$values}" "$api/options")
n=$(grep -o '"options":{.*' <<<"$saved" | grep -o '"[a-z_0-9]*":' | grep -vc '"\(font-[a-z]*\|line-height\|letter-spacing\|text-transform\|subsets\|id\|url\|width\|height\|alt\|title\|platform\)":' || true)
[ "$n" -ge 30 ] || { echo "bench: the option set has $n ids, not 30: $saved" >&2; exit 1; }

bench_start_ref -table wp_options -column option_value -where option_name -key themeopts_bench

# The same GET, revalidated: If-None-Match with the current ETag, 304.
etag=$(curl -sD - -o /dev/null -H "$auth" "$api/options" | awk -F': ' 'tolower($1)=="etag" {sub(/\r$/,"",$2); print $2}')
[ -n "$etag" ] || { echo "bench: GET /options sent no ETag" >&2; exit 1; }

targets=(
  "bare-point-read|http://127.0.0.1:$BENCHREF_PORT/"
  "wordpress-settings|$WP_SITEURL/wp-json/wp/v2/settings"
  "options|$api/options"
  "options-304|$api/options|If-None-Match: $etag|304"
)
bench_run "$auth" "${targets[@]}"
bench_report options
bench_report options-304
bench_report_ref
printf 'options 304 vs 200: %.2fx the requests/s\n' "$(awk -v a="$(bench_median options-304)" -v b="$(bench_median options)" 'BEGIN {print a/b}')"

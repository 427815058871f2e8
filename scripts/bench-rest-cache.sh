#!/usr/bin/env bash
# --cache-rest benchmark (issue 48), in one run: WordPress's anonymous
# GET /wp-json/wp/v2/posts?per_page=10 (12 posts seeded) from PHP directly
# (nginx + php-fpm), through the sidecar with --cache-rest wp/v2 holding
# the answer (and the same with --exact-reads beside it), and from a bare
# Go handler sending PHP's captured answer
# with the headers the sidecar sends with it (scripts/benchref -body
# -headers: the same bytes and headers, nothing else), and Varnish (the
# repository's VCL) keeping the sidecar's answer, alternating, ROUNDS rounds. The sidecar and the bare handler get
# all the CPUs. Bars: the kept answer >= 100x PHP and >= 0.9x the bare
# handler; during those rounds the cache's hits grow and its misses stay
# put. Then the hit ratio, hits / (hits + misses) from /metrics, of
# CHURN_DURATION of load while a loop writes the site's `cron` option row
# once a second through SQL (a row no answer is made from: the answer must
# stay kept), and, as the contrast, while it writes a post's row once a
# second instead (each write drops the site's lists, this page among
# them); with the share of requests answered from memory (hits and
# collapsed over all, bypasses counted) and every counter that grew.
# WordPress runs on a private mariadbd with its binary log on
# (scripts/bench-binlog-db.sh). The load (uptime) is printed before and
# after: on a shared machine the ratios move with it.
#
#   scripts/bench-rest-cache.sh          # ROUNDS=3 DURATION=5s CHURN_DURATION=10s
#   ROUNDS=5 SIDECAR_FLAGS='--access-log off' scripts/bench-rest-cache.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ROUNDS:=3}" "${DURATION:=5s}" "${CHURN_DURATION:=10s}" "${STATE:=.bench-rest}" "${FEED_DB_PORT:=18346}"
: "${SIDECAR_GOMAXPROCS:=$(nproc)}"
# Ports of their own, so that another bench script may run beside it.
export SIDECAR_PORT=${SIDECAR_PORT:-18340} WP_PORT=${WP_PORT:-18341} WP_PROXY_PORT=${WP_PROXY_PORT:-18342}
admin=127.0.0.1:18343 BENCHREF_PORT=${BENCHREF_PORT:-18344} bare_port=18345
mkdir -p "$STATE"
echo "bench-rest-cache: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with changes)'); load before: $(uptime)"

WP_DB_NAME=wpsidecar_bench_rest
# shellcheck source=scripts/bench-binlog-db.sh
. scripts/bench-binlog-db.sh
# SIDECAR_FLAGS (words) adds flags: --access-log off, to see what the log costs.
# shellcheck disable=SC2206
SIDECAR_ARGS=("${feed_args[@]}" --cache-rest wp/v2 --admin-listen "$admin" ${SIDECAR_FLAGS:-})
# shellcheck source=scripts/bench-site.sh
. scripts/bench-site.sh
eval "$(declare -f bench_cleanup | sed '1s/bench_cleanup/bench_cleanup_site/')"
more_pids=()
bench_cleanup() { [ ${#more_pids[@]} -eq 0 ] || kill "${more_pids[@]}" 2>/dev/null; bench_cleanup_site; stop_db; }
trap bench_cleanup EXIT
# The log is written in batches: its line may come a moment after the sidecar answers.
for _ in $(seq 1 50); do grep -q '"cache-rest on' "$STATE/sidecar.log" && break; sleep 0.1; done
grep -q '"cache-rest on' "$STATE/sidecar.log" || { echo "bench: --cache-rest is not on:" >&2; cat "$STATE/sidecar.log" >&2; exit 1; }

# metric NAME LABELS: a counter's value on the sidecar's /metrics (0 when
# it has not been counted yet).
metric() { curl -s "http://$admin/metrics" | awk -v n="$1{$2}" '$1==n {s+=$2} END {printf "%d", s}'; }
hits() { metric wpsidecar_rest_cache_requests_total 'result="hit"'; }
misses() { metric wpsidecar_rest_cache_requests_total 'result="miss"'; }
collapsed() { metric wpsidecar_rest_cache_requests_total 'result="collapsed"'; }
# sum NAME: a counter's value summed over its labels (every reason).
sum() { curl -s "http://$admin/metrics" | awk -v n="$1" 'index($1, n "{") == 1 {s+=$2} END {printf "%d", s}'; }
dropped() { sum wpsidecar_rest_cache_drops_total; }
bypassed() { sum wpsidecar_rest_cache_bypasses_total; }

# Ten posts to a page, each with a few paragraphs (the first is the
# install's Hello world, left as it is).
WP_HTTP_HOST="127.0.0.1:$SIDECAR_PORT" php scripts/wp/eval.php "$WP_DOCROOT" '
  for ($i = 1; $i <= 12; $i++) {
    wp_insert_post(["post_title" => "Bench post $i", "post_status" => "publish", "post_author" => 1,
      "post_content" => str_repeat("<!-- wp:paragraph --><p>Paragraph of bench post $i, Grüße.</p><!-- /wp:paragraph -->\n", 5)]);
  }
  return wp_count_posts()->publish;' > /dev/null

path="/wp-json/wp/v2/posts?per_page=10"
host="127.0.0.1:$SIDECAR_PORT"
php_url="http://127.0.0.1:$WP_PORT$path" side_url="$WP_SITEURL$path" bare_url="http://127.0.0.1:$bare_port$path"

# PHP's answer, once, as the sidecar's clients would get it (its Host):
# the bare handler sends its bytes back (benchref drops Date and
# Content-Length, which Go's server writes itself, and hop-by-hop headers).
curl -s -H "Host: $host" -D "$STATE/php.head" -o "$STATE/php.body" "$php_url"
grep -q '^HTTP/1.1 200' "$STATE/php.head" || { echo "bench: PHP answered $(head -n1 "$STATE/php.head")" >&2; exit 1; }
n=$(grep -o '"title":{"rendered":"Bench post' "$STATE/php.body" | wc -l)
[ "$n" -ge 9 ] || { echo "bench: PHP's page holds only $n bench posts" >&2; exit 1; }

# Warm: the first anonymous GET is a miss that keeps PHP's answer, the
# next a hit, byte for byte PHP's.
m0=$(misses) h0=$(hits)
curl -s -o /dev/null "$side_url"
for _ in $(seq 1 50); do
  curl -s -D "$STATE/side.head" -o "$STATE/side.body" "$side_url"
  [ "$(hits)" -gt "$h0" ] && break
  sleep 0.1
done
[ "$(hits)" -gt "$h0" ] || { echo "bench: the sidecar does not keep $path (misses $m0 -> $(misses), hits $h0 -> $(hits)); /readyz: $(curl -s "http://$admin/readyz")" >&2; exit 1; }
cmp -s "$STATE/php.body" "$STATE/side.body" || { echo "bench: the kept answer differs from PHP's" >&2; exit 1; }
# The bare handler: PHP's bytes with the headers the sidecar sends with
# them (PHP's, and its own: X-Request-Id, Surrogate-Key, Cache-Tag).
go build -o "$STATE/benchref" ./scripts/benchref
"$STATE/benchref" -listen "127.0.0.1:$bare_port" -body "$STATE/php.body" -headers "$STATE/side.head" & more_pids+=($!)
for _ in $(seq 1 50); do curl -fso /dev/null "$bare_url" && break; sleep 0.1; done
: > "$STATE/headers.txt"
for f in php side bare; do
  [ "$f" = bare ] && curl -s -D "$STATE/bare.head" -o /dev/null "$bare_url"
  echo "$f headers: $(tail -n +2 "$STATE/$f.head" | cut -d: -f1 | grep . | sort | tr '\n' ' ')" >> "$STATE/headers.txt"
done
echo "headers sent (PHP's, the sidecar's kept answer, the bare handler's):"
sed 's/^/  /' "$STATE/headers.txt"
echo "answer: $(wc -c < "$STATE/php.body") bytes"

# The same sidecar with --exact-reads: a kept answer given once the feed
# has applied where the log ended when the request came (one look,
# shared): what exact reads cost.
exact_port=18347
env ${SIDECAR_GOMAXPROCS:+GOMAXPROCS=$SIDECAR_GOMAXPROCS} "$STATE/wpsidecar" --upstream "$WP_URL" --wp-config "$WP_CONFIG" \
  "${SIDECAR_ARGS[@]}" --listen "127.0.0.1:$exact_port" --admin-listen 127.0.0.1:0 --exact-reads > "$STATE/exact.log" 2>&1 & more_pids+=($!)
exact_url="http://127.0.0.1:$exact_port$path"
for _ in $(seq 1 100); do
  curl -s -o /dev/null -H "Host: $host" "$exact_url" || true
  grep -q '"rest_cache":"hit"' "$STATE/exact.log" && break
  sleep 0.1
done
grep -q '"rest_cache":"hit"' "$STATE/exact.log" || { echo "bench: the sidecar with --exact-reads does not keep $path" >&2; exit 1; }

# Varnish in front of the sidecar, with the repository's VCL (its backend
# the sidecar), keeping the answer for an hour: a CDN's HIT of the same
# URL, the ceiling a cache on this machine reaches.
varnish_port=18348
mkdir -p "$STATE/varnish-conf"
sed -e 's/\.host = "sidecar";/.host = "127.0.0.1";/' -e "s/\.port = \"8080\";/.port = \"$SIDECAR_PORT\";/" -e 's/^    "sidecar";/    "127.0.0.1";/' \
  deploy/varnish/wpsidecar.vcl > "$STATE/varnish-conf/wpsidecar.vcl"
chmod 755 "$STATE" "$STATE/varnish-conf"
varnishd -F -a "127.0.0.1:$varnish_port" -f "$PWD/$STATE/varnish-conf/wpsidecar.vcl" -n "$PWD/$STATE/varnish" \
  -s malloc,64m -p default_ttl=3600 -p default_grace=0 > "$STATE/varnish.log" 2>&1 & more_pids+=($!)
varnish_url="http://127.0.0.1:$varnish_port$path"
for _ in $(seq 1 100); do
  curl -s -o /dev/null -D "$STATE/varnish.head" -H "Host: $host" "$varnish_url" || true
  grep -qi '^X-Cache: HIT' "$STATE/varnish.head" && break
  sleep 0.1
done
grep -qi '^X-Cache: HIT' "$STATE/varnish.head" || { echo "bench: Varnish does not keep $path:" >&2; cat "$STATE/varnish.head" "$STATE/varnish.log" >&2; exit 1; }

targets=(
  "php-direct|$php_url|Host: $host"
  "sidecar-kept|$side_url"
  "sidecar-kept-exact|$exact_url|Host: $host"
  "bare-same-bytes|$bare_url"
  "varnish-hit|$varnish_url|Host: $host"
)
h1=$(hits) m1=$(misses) c1=$(collapsed)
bench_run "X-Bench: anonymous" "${targets[@]}"
h2=$(hits) m2=$(misses) c2=$(collapsed)
if [ "$m2" -ne "$m1" ] || [ "$h2" -le "$h1" ]; then
  echo "bench: during the rounds the hits went $h1 -> $h2 and the misses $m1 -> $m2: the answer was not kept throughout" >&2
  exit 1
fi

# rest_counters: the cache's counters on /metrics, one "name{labels} value"
# a line; counted DIR1 DIR2: what grew between two of them.
rest_counters() { curl -s "http://$admin/metrics" | grep '^wpsidecar_rest_cache_[a-z_]*_total'; }
counted() { awk 'NR==FNR {a[$1]=$2; next} $2 != a[$1] {d=$2-a[$1]; sub(/^wpsidecar_rest_cache_/, "", $1); printf "%s+%d ", $1, d}' "$1" "$2"; }

# churn NAME SQL_FUNC: CHURN_DURATION of wrk on the kept answer while the
# statement SQL_FUNC N prints runs once a second (N counts the seconds);
# notes the counters' deltas in $STATE/churn.txt and each counter that
# grew in $STATE/churn-NAME.txt.
churn() {
  local name=$1 sql=$2 loop h m c d b out rps
  (for i in $(seq 1 100000); do $MYSQL_ADMIN "$WP_DB_NAME" -e "$($sql "$i")"; sleep 1; done) & loop=$!
  rest_counters > "$STATE/before.txt"
  h=$(hits) m=$(misses) c=$(collapsed) d=$(dropped) b=$(bypassed)
  out=$(wrk -t2 -c32 -d"$CHURN_DURATION" "$side_url")
  kill "$loop"; wait "$loop" 2>/dev/null || true
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  h=$(($(hits) - h)) m=$(($(misses) - m)) c=$(($(collapsed) - c)) d=$(($(dropped) - d)) b=$(($(bypassed) - b))
  counted "$STATE/before.txt" <(rest_counters) > "$STATE/churn-$name.txt"
  echo "$name|$rps|$h|$c|$m|$b|$d" >> "$STATE/churn.txt"
  bench_settle
}
# The cron row as WordPress writes it (serialized: one event due in an
# hour, a new time each second), and a post's row (not one on the page).
cron_sql() {
  local ts=$(($(date +%s) + 3600 + $1))
  echo "UPDATE wp_options SET option_value = 'a:2:{i:$ts;a:1:{s:10:\"bench_tick\";a:1:{s:32:\"40cd750bba9870f18aada2478b24840a\";a:2:{s:8:\"schedule\";b:0;s:4:\"args\";a:0:{}}}}s:7:\"version\";i:2;}' WHERE option_name = 'cron'"
}
first=$($MYSQL_ADMIN -N "$WP_DB_NAME" -e "SELECT MIN(ID) FROM wp_posts WHERE post_title LIKE 'Bench post%'")
post_sql() { echo "UPDATE wp_posts SET post_modified = NOW(), post_modified_gmt = UTC_TIMESTAMP(), comment_count = $1 WHERE ID = $first"; }
# WordPress must read the cron row written so as its own.
$MYSQL_ADMIN "$WP_DB_NAME" -e "$(cron_sql 0)"
WP_HTTP_HOST="$host" php scripts/wp/eval.php "$WP_DOCROOT" 'return wp_next_scheduled("bench_tick");' | grep -qx '[0-9]*' ||
  { echo "bench: WordPress does not read the cron row the bench writes" >&2; exit 1; }
: > "$STATE/churn.txt"
churn cron-row cron_sql
churn post-row post_sql

php=$(bench_median php-direct) side=$(bench_median sidecar-kept) bare=$(bench_median bare-same-bytes) exact=$(bench_median sidecar-kept-exact) varnish=$(bench_median varnish-hit)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }
# round_ratio NAME: the median, over the rounds, of the sidecar's req/s
# over NAME's in the same round (minutes apart at most: less of a shared
# machine's drift than the medians' ratio).
round_ratio() {
  awk -F'|' -v n="$1" '$1=="sidecar-kept" {s[++i]=$2} $1==n {b[++j]=$2} END {for (k=1; k<=i; k++) print s[k]/b[k]}' "$results" |
    sort -g | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}'
}
echo
echo "machine: $(nproc) cores; load after: $(uptime)"
echo "during the rounds: hits +$((h2 - h1)), collapsed +$((c2 - c1)), misses +$((m2 - m1))"
echo
echo "| target | req/s (median) | worst p99 ms | sidecar / this: medians | median of the rounds' |"
echo "|---|---|---|---|---|"
printf '| PHP directly (nginx + php-fpm) | %.0f | %s | %sx | %sx (bar >= 100x) |\n' "$php" "$(bench_worst_p99 php-direct)" "$(ratio "$side" "$php")" "$(round_ratio php-direct)"
printf '| the sidecar, answer kept (--cache-rest wp/v2) | %.0f | %s | 1.00x | |\n' "$side" "$(bench_worst_p99 sidecar-kept)"
printf '| the same, --exact-reads | %.0f | %s | %sx | %sx (exact reads / bare handler: %sx) |\n' "$exact" "$(bench_worst_p99 sidecar-kept-exact)" "$(ratio "$side" "$exact")" "$(round_ratio sidecar-kept-exact)" "$(ratio "$exact" "$bare")"
printf '| bare Go handler, the same bytes and headers | %.0f | %s | %sx | %sx (bar >= 0.9x) |\n' "$bare" "$(bench_worst_p99 bare-same-bytes)" "$(ratio "$side" "$bare")" "$(round_ratio bare-same-bytes)"
printf '| Varnish HIT in front of the sidecar (deploy/varnish) | %.0f | %s | %sx | %sx (bare handler / Varnish: %sx) |\n' "$varnish" "$(bench_worst_p99 varnish-hit)" "$(ratio "$side" "$varnish")" "$(round_ratio varnish-hit)" "$(ratio "$bare" "$varnish")"
echo
echo "| a row written once a second ($CHURN_DURATION, wrk -c32) | req/s | hits | collapsed | misses | bypasses | drops | hits / (hits + misses) | from memory / all |"
echo "|---|---|---|---|---|---|---|---|---|"
while IFS='|' read -r name rps h c m b d; do
  printf '| %s | %.0f | %d | %d | %d | %d | %d | %s | %s |\n' "$name" "$rps" "$h" "$c" "$m" "$b" "$d" \
    "$(awk -v h="$h" -v m="$m" 'BEGIN {printf "%.4f", (h+m) ? h/(h+m) : 0}')" \
    "$(awk -v h="$h" -v c="$c" -v m="$m" -v b="$b" 'BEGIN {printf "%.4f", (h+c+m+b) ? (h+c)/(h+c+m+b) : 0}')"
done < "$STATE/churn.txt"
for f in "$STATE"/churn-*.txt; do echo "counters grown, $(basename "$f" .txt): $(cat "$f")"; done

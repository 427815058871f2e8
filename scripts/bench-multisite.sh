#!/usr/bin/env bash
# A network of SITES sites (default 100, subdirectory install): authenticated
# GET /fieldmgr/v1/field-groups (20 groups on every site) with the
# requests spread over all the sites, against the single-site figure in
# the same run: the same sidecar binary over the same database with
# multisite off, serving site 1. Also the network's site 1 alone (what
# finding the site costs). Bar: spread over the network >= 90% of the
# single site.
#
#   scripts/bench-multisite.sh        # SITES=100 ROUNDS=3 DURATION=5s
set -euo pipefail
cd "$(dirname "$0")/.."
# The sidecars run the benchmark's settings only: none of the shell's
# WPSIDECAR_* variables (a site's settings, or the tests' own).
for var in $(compgen -e | grep '^WPSIDECAR_' || true); do unset "$var"; done
: "${SITES:=100}" "${ROUNDS:=3}" "${DURATION:=5s}" "${STATE:=.bench-multisite}" "${DOMAIN:=net.test}"
export WP_PORT=${WP_PORT:-18181} WP_PROXY_PORT=${WP_PROXY_PORT:-18182} WP_DB_NAME=${WP_DB_NAME:-wpsidecar_bench_multisite}
NETWORK_PORT=18183 SINGLE_PORT=18184
export WP_SITEURL="http://$DOMAIN"
command -v wrk >/dev/null || { echo "bench: wrk missing: run scripts/install-deps.sh" >&2; exit 1; }
mkdir -p "$STATE"
go build -o "$STATE/wpsidecar" ./cmd/wpsidecar
pids=()
cleanup() {
  [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null && wait "${pids[@]}" 2>/dev/null
  scripts/wordpress.sh stop "$STATE/wp"
}
trap cleanup EXIT
scripts/wordpress.sh start "$STATE/wp" > "$STATE/wp.env"
# shellcheck disable=SC1091
. "$STATE/wp.env"
mysql_db() { ${MYSQL_ADMIN:-mariadb --protocol=tcp -h127.0.0.1 -uroot} "$WP_DB_NAME" "$@"; }

# The network is made once (kept in STATE); wordpress.sh writes
# wp-config.php anew at each start, so its constants are added each time.
consts=$STATE/network-constants.php
if [ ! -s "$consts" ]; then
  WP_HTTP_HOST=$DOMAIN php scripts/wp/users.php "$WP_DOCROOT" > /dev/null
  php scripts/wp/network.php "$WP_DOCROOT" install subdirectory "$DOMAIN" > "$consts.tmp" && mv "$consts.tmp" "$consts"
fi
php -r '$f = $argv[1]; $m = "\nif ( ! defined( '"'"'ABSPATH'"'"' ) )"; file_put_contents($f, str_replace($m, "\n" . file_get_contents($argv[2]) . $m, file_get_contents($f)));' "$WP_CONFIG" "$consts"
echo "bench: making $SITES sites (once)…"
users=$(WP_HTTP_HOST=$DOMAIN WP_NETWORK_SITES=$SITES php scripts/wp/network.php "$WP_DOCROOT" sites "$DOMAIN")
login=$(php -r '$u = json_decode($argv[1], true)["users"]["super"]; echo $u["login"];' "$users")
pw=$(php -r '$u = json_decode($argv[1], true)["users"]["super"]; echo $u["application_password"];' "$users")
auth="Authorization: Basic $(printf '%s:%s' "$login" "$pw" | base64 -w0)"

"$STATE/wpsidecar" --listen "127.0.0.1:$NETWORK_PORT" --admin-listen 127.0.0.1:0 --upstream "$WP_URL" --wp-config "$WP_CONFIG" > "$STATE/network.log" 2>&1 &
pids+=($!)
# The single site: the same tables, as a site that is no network.
"$STATE/wpsidecar" --listen "127.0.0.1:$SINGLE_PORT" --admin-listen 127.0.0.1:0 --upstream "$WP_URL" --wp-config "$WP_CONFIG" --multisite=false > "$STATE/single.log" 2>&1 &
pids+=($!)
for port in $NETWORK_PORT $SINGLE_PORT; do
  for _ in $(seq 1 50); do curl -fso /dev/null -H "Host: $DOMAIN" "http://127.0.0.1:$port/static.txt" && break; sleep 0.1; done
done
# On a single site WordPress reads the flag from the site's options.
mysql_db -e "INSERT INTO wp_options (option_name, option_value) VALUES ('using_application_passwords', '1') ON DUPLICATE KEY UPDATE option_value = '1'"

# 20 groups on site 1 through the sidecar, copied to every other site.
# shellcheck source=scripts/bench-groups.sh
. scripts/bench-groups.sh
bench_make_groups "$auth" "http://127.0.0.1:$NETWORK_PORT/wp-json/fieldmgr/v1" "$DOMAIN"
for k in $(seq 2 "$SITES"); do
  mysql_db -e "CREATE TABLE IF NOT EXISTS wp_${k}_fieldmgr_groups LIKE wp_fieldmgr_groups; INSERT IGNORE INTO wp_${k}_fieldmgr_groups SELECT * FROM wp_fieldmgr_groups"
done

# Every site's path, in turn, on each connection.
paths=$(mysql_db -N -e "SELECT path FROM wp_blogs ORDER BY blog_id" | awk '{printf "%s\"%swp-json/fieldmgr/v1/field-groups\"", (NR > 1 ? "," : ""), $1}')
[ "$(mysql_db -N -e "SELECT COUNT(*) FROM wp_blogs")" -ge "$SITES" ] || { echo "bench: fewer than $SITES sites" >&2; exit 1; }
# Both runs make their requests in Lua, so that wrk costs the same.
echo 'request = function() return wrk.format("GET", "/wp-json/fieldmgr/v1/field-groups") end' > "$STATE/one.lua"
cat > "$STATE/spread.lua" <<LUA
local paths = {$paths}
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
LUA
for p in $(mysql_db -N -e "SELECT path FROM wp_blogs ORDER BY blog_id"); do
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $DOMAIN" -H "$auth" "http://127.0.0.1:$NETWORK_PORT${p}wp-json/fieldmgr/v1/field-groups")
  [ "$code" = 200 ] || { echo "bench: site $p answered $code" >&2; exit 1; }
done

results=$STATE/results.txt
: > "$results"
bench_median() { grep "^$1|" "$results" | cut -d'|' -f2 | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "machine: $(nproc) cores; wrk -t2 -c32, $DURATION runs, $ROUNDS rounds; $SITES sites"
run() { # NAME PORT SCRIPT
  local out rps non2xx
  out=$(wrk -t2 -c32 -d"$DURATION" -H "Host: $DOMAIN" -H "$auth" -s "$3" "http://127.0.0.1:$2/")
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  [ -z "$non2xx" ] || { echo "bench: $1: $non2xx error answers" >&2; exit 1; }
  echo "$1|$rps" >> "$results"
  printf 'round %d  %-24s %10s req/s\n' "$round" "$1" "$rps"
}
for round in $(seq 1 "$ROUNDS"); do
  run single-site "$SINGLE_PORT" "$STATE/one.lua"
  run network-site-1 "$NETWORK_PORT" "$STATE/one.lua"
  run "network-$SITES-sites" "$NETWORK_PORT" "$STATE/spread.lua"
done
single=$(bench_median single-site)
for name in network-site-1 "network-$SITES-sites"; do
  printf '%-24s median %9.1f req/s = %5.1f%% of the single site (%s req/s)   (bar: >= 90%%)\n' "$name" "$(bench_median "$name")" \
    "$(awk -v a="$(bench_median "$name")" -v b="$single" 'BEGIN {print 100*a/b}')" "$single"
done

#!/usr/bin/env bash
# The README's "run it" command: a local WordPress (Debian's packages, on
# loopback) with the sidecar in front, on http://127.0.0.1:8080/, running
# the way the README measures it: its own MariaDB keeps a row-based binary
# log, the sidecar follows it and answers from memory, keeps WordPress's
# wp/v2 REST answers (--cache-rest), and the companion plugin shows the
# history under Tools -> Change history.
# State (database, site, logs) lives in .demo/ and is reused by the next
# run; Ctrl-C stops everything this script started, at once.
#
# Settings (environment, with defaults): each port must be free on
# 127.0.0.1, else the demo names who holds it and stops.
#   DEMO_PORT=8080        the sidecar: the site people use
#   WP_PORT=8081          nginx + PHP-FPM serving WordPress (behind the sidecar)
#   WP_PROXY_PORT=8082    nginx as a plain reverse proxy (the benchmarks' baseline)
#   DEMO_ADMIN_PORT=9090  the sidecar's /readyz and /metrics
#   DEMO_DB_PORT=8083     the demo's own MariaDB
#   DEMO_STATE=.demo
# The demo's sidecar takes none of the shell's WPSIDECAR_* variables.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"
: "${DEMO_PORT:=8080}" "${DEMO_ADMIN_PORT:=9090}" "${DEMO_DB_PORT:=8083}" "${DEMO_STATE:=.demo}"
: "${WP_PORT:=8081}" "${WP_PROXY_PORT:=8082}"

# port_holder PORT: who listens on 127.0.0.1:PORT (or any address), empty
# when nobody does.
port_holder() {
  if command -v ss >/dev/null 2>&1; then
    local line
    line=$(ss -Hltnp "sport = :$1" 2>/dev/null | head -n1)
    [ -n "$line" ] || return 0
    local who
    who=$(grep -o '"[^"]*",pid=[0-9]*' <<<"$line" | sed -E 's/"(.*)",pid=([0-9]+)/\1 (pid \2)/' | sort -u | paste -sd, - | sed 's/,/, /g')
    echo "${who:-a process this user may not see (ss -ltnp as root names it)}"
  elif (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
    echo "another server"
  fi
}

# Every port is checked before anything starts: a server that cannot bind
# would otherwise leave the sidecar passing pages to whoever holds it.
seen=" "
for var in DEMO_PORT WP_PORT WP_PROXY_PORT DEMO_ADMIN_PORT DEMO_DB_PORT; do
  port=${!var}
  case $port in
    '' | *[!0-9]* | 0*) port=0 ;;
  esac
  if [ ${#port} -gt 5 ] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
    echo "demo: $var=${!var} is not a port number (1 to 65535)" >&2
    exit 1
  fi
  case $seen in
    *" $port "*) echo "demo: port $port is given to two of DEMO_PORT, WP_PORT, WP_PROXY_PORT, DEMO_ADMIN_PORT, DEMO_DB_PORT; give $var another" >&2; exit 1 ;;
  esac
  seen="$seen$port "
  holder=$(port_holder "$port")
  if [ -n "$holder" ]; then
    echo "demo: port $port ($var) is taken by $holder; stop it, or move the demo: $var=<free port> make demo" >&2
    exit 1
  fi
done

# step WHAT: a line as each step starts, so that a first run, which spends
# most of its time installing and building, never looks hung.
step() { echo "demo: $*"; }

step "checking Debian's packages (what is missing is installed once, as root: a minute or two)"
scripts/install-deps.sh --demo
mkdir -p "$DEMO_STATE"
state=$(cd "$DEMO_STATE" && pwd)
step "building the sidecar into $state (go build: the first build fetches modules and compiles, 30 s or more)"
go build -buildvcs=auto -o "$state/wpsidecar" ./cmd/wpsidecar

db_pid="" sidecar_pid="" wp_started=""
cleanup() {
  trap - EXIT INT TERM
  # Everything is asked to stop at once and waited for together: the
  # sidecar (no lame-duck delay, a short drain), nginx and PHP-FPM, and the
  # database (nothing it holds needs a slow, clean shutdown: InnoDB's log
  # makes the next start whole).
  [ -z "$sidecar_pid" ] || kill "$sidecar_pid" 2>/dev/null || true
  [ -z "$db_pid" ] || kill "$db_pid" 2>/dev/null || true
  [ -z "$wp_started" ] || scripts/wordpress.sh stop "$state/wp"
  [ -z "$sidecar_pid" ] || wait "$sidecar_pid" 2>/dev/null || true
  [ -z "$db_pid" ] || wait "$db_pid" 2>/dev/null || true
  echo "demo stopped"
}
trap cleanup EXIT
trap 'cleanup; exit 0' INT TERM

# The demo's own MariaDB: a row-based binary log with full row images (what
# the sidecar's change feed follows), on loopback only, its data in the
# state dir. mariadb-install-db runs once; a second run reuses the data.
db=$state/db
mariadb_q=(mariadb --no-defaults --protocol=tcp -h127.0.0.1 -P"$DEMO_DB_PORT" -uroot)
if [ ! -d "$db/data/mysql" ]; then
  echo "demo: making the database in $db (once)"
  rm -rf "$db" && mkdir -p "$db"
  mariadb-install-db --no-defaults --datadir="$db/data" --user="$(id -un)" --auth-root-authentication-method=normal \
    --skip-test-db --tmpdir="$db" > "$db/install.log" 2>&1 || { cat "$db/install.log" >&2; exit 1; }
fi
step "starting MariaDB on 127.0.0.1:$DEMO_DB_PORT (row binary log; data in $db)"
mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
"$mariadbd" --no-defaults --datadir="$db/data" --port="$DEMO_DB_PORT" --bind-address=127.0.0.1 --socket="$db/sock" \
  --pid-file="$db/pid" --log-error="$db/error.log" --user="$(id -un)" --skip-name-resolve --innodb-buffer-pool-size=64M \
  --log-bin=binlog --binlog-format=ROW --binlog-row-image=FULL --server-id=1 --expire-logs-days=2 \
  --innodb-fast-shutdown=2 --innodb-buffer-pool-dump-at-shutdown=OFF --innodb-buffer-pool-load-at-startup=OFF >> "$db/mariadbd.out" 2>&1 &
db_pid=$!
for _ in $(seq 1 100); do
  kill -0 "$db_pid" 2>/dev/null || { tail -n 20 "$db/error.log" >&2; echo "demo: MariaDB did not start; see $db/error.log" >&2; exit 1; }
  "${mariadb_q[@]}" -e 'SELECT 1' >/dev/null 2>&1 && break
  sleep 0.2
done
"${mariadb_q[@]}" -e 'SELECT 1' >/dev/null

# The change feed's own user: it may read the binary log, nothing more (the
# grants docs/caching.md asks for). Given to the sidecar through its
# environment, not its command line, which ps shows.
feed_password=wpsidecar-demo-feed
"${mariadb_q[@]}" -e "CREATE USER IF NOT EXISTS 'wpsidecar_feed'@'127.0.0.1' IDENTIFIED BY '$feed_password';
  GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'wpsidecar_feed'@'127.0.0.1';"

# The companion plugin as a must-use plugin, with a secret of this demo's
# own (kept for the next run), as the end-to-end tests install it.
[ -s "$state/companion-secret" ] || od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$state/companion-secret"
export WP_SITEURL="http://127.0.0.1:$DEMO_PORT" WP_PORT WP_PROXY_PORT
export WP_DB_HOST="127.0.0.1:$DEMO_DB_PORT" MYSQL_ADMIN="${mariadb_q[*]}"
export WP_MU_PLUGINS="$PWD/wordpress/wpsidecar-companion.php"
export WP_CONFIG_EXTRA="define( 'WPSIDECAR_COMPANION_SECRET', '$(cat "$state/companion-secret")' );"
step "starting WordPress on 127.0.0.1:$WP_PORT (nginx, PHP-FPM; installed into $state/wp on the first run)"
wp_started=1
scripts/wordpress.sh start "$state/wp" > "$state/wp.env"
# shellcheck disable=SC1091
. "$state/wp.env"

app_password=$(WP_HTTP_HOST="127.0.0.1:$DEMO_PORT" php scripts/wp/app-password.php "$WP_DOCROOT" "$WP_ADMIN_USER" demo "$state/app-password.json")

admin="http://127.0.0.1:$DEMO_ADMIN_PORT"
# The sidecar runs the demo's settings only. WPSIDECAR_* variables in the
# caller's shell (a real site's settings, or the tests' own, such as
# WPSIDECAR_STACKS) would be read as settings or refused as unknown ones.
inherited=$(compgen -e | grep '^WPSIDECAR_' | paste -sd' ' - || true)
if [ -n "$inherited" ]; then
  echo "demo: the sidecar runs without these from your environment: $inherited"
  # shellcheck disable=SC2086 # one name per word
  unset $inherited
fi
# The last run's log is kept beside this one's.
[ ! -f "$state/sidecar.log" ] || mv -f "$state/sidecar.log" "$state/sidecar.log.1"
step "starting the sidecar on 127.0.0.1:$DEMO_PORT (until /readyz says it answers from memory)"
# A demo may stop at once: no lame-duck delay (production's keeps answering
# while a load balancer notices), and a short drain.
WPSIDECAR_BINLOG_DSN="wpsidecar_feed:$feed_password@tcp(127.0.0.1:$DEMO_DB_PORT)/" \
  "$state/wpsidecar" --listen "127.0.0.1:$DEMO_PORT" --admin-listen "127.0.0.1:$DEMO_ADMIN_PORT" \
  --upstream "$WP_URL" --wp-config "$WP_CONFIG" --themeopts-config scripts/themeopts-demo.json \
  --cache-rest wp/v2 --shutdown-delay 0 --shutdown-timeout 2s --log-format console > "$state/sidecar.log" 2>&1 &
sidecar_pid=$!
# Ready, and the feed current: /readyz says serve_from_feed memory.
readyz=""
for _ in $(seq 1 150); do
  kill -0 "$sidecar_pid" 2>/dev/null || { tail -n 20 "$state/sidecar.log" >&2; echo "demo: the sidecar stopped; see $state/sidecar.log" >&2; exit 1; }
  readyz=$(curl -fs "$admin/readyz" || true)
  case $readyz in *'"serve_from_feed":"memory"'*) break ;; esac
  sleep 0.1
done
case $readyz in
  *'"serve_from_feed":"memory"'*) ;;
  *) echo "demo: after 15 s the sidecar does not answer from memory yet (/readyz: ${readyz:-no answer}); see $state/sidecar.log" >&2 ;;
esac

step "adding the demo's field groups and reading them back, then a wp/v2 answer twice"
# Demo field groups, through the sidecar's own API (a second run finds them).
auth=(-u "$WP_ADMIN_USER:$app_password" -H 'Content-Type: application/json')
curl -s -o /dev/null "${auth[@]}" "$WP_SITEURL/wp-json/fieldmgr/v1/field-groups" -d '{"group_key":"product_details","title":"Product details",
  "config":{"type":"post","post_type":"post","position":"normal","fields":{"subtitle":{"type":"text","label":"Subtitle","maxlength":120},
  "price":{"type":"number","label":"Price","min":0,"step":0.01},"hero":{"type":"image","label":"Hero image","return_format":"url"}}}}'
curl -s -o /dev/null "${auth[@]}" "$WP_SITEURL/wp-json/fieldmgr/v1/field-groups" -d '{"group_key":"author_profile","title":"Author profile",
  "config":{"type":"user","fields":{"twitter":{"type":"url","label":"Twitter"},"bio":{"type":"wysiwyg","label":"Short bio","toolbar":"basic"}}}}'

# metric NAME{LABELS}: its value on /metrics (0 when absent).
metric() { curl -fs "$admin/metrics" | awk -v m="$1" '$1 == m { v = $2 } END { print v + 0 }'; }

# What serving from the feed changes: the sidecar's own routes answer from
# memory (answers prepared once, dropped when the binary log shows a change),
# with no database round trip.
db_reads() {
  curl -fs "$admin/metrics" | awk '$1 ~ /^wpsidecar_serve_from_feed_reads_total\{source="(database|stale)"\}$/ { n += $2 } END { print n + 0 }'
}
# The POSTs above changed the field groups: a GET prepares the answer
# again, from the database until the feed has seen them in the binary log
# (milliseconds); then it is given from memory.
for _ in $(seq 1 100); do
  given_before=$(metric 'wpsidecar_prepared_answers_total{result="given"}') reads_before=$(db_reads)
  curl -fso /dev/null "${auth[@]}" "$WP_SITEURL/wp-json/fieldmgr/v1/field-groups" || true
  [ "$(db_reads)" = "$reads_before" ] && [ "$(metric 'wpsidecar_prepared_answers_total{result="given"}')" != "$given_before" ] && break
  sleep 0.05
done
given_before=$(metric 'wpsidecar_prepared_answers_total{result="given"}')
reads_before=$(db_reads)
for _ in $(seq 1 20); do curl -fso /dev/null "${auth[@]}" "$WP_SITEURL/wp-json/fieldmgr/v1/field-groups" || true; done
given=$(( $(metric 'wpsidecar_prepared_answers_total{result="given"}') - given_before ))
reads=$(( $(db_reads) - reads_before ))

# A kept answer: the same anonymous wp/v2 request twice; PHP answers the
# first (kept answers live in the sidecar's memory), the sidecar the second.
posts="$WP_SITEURL/wp-json/wp/v2/posts?per_page=1&_fields=id,title"
# PHP's first request after a start compiles WordPress (seconds): one to
# another address first, so that PHP is timed warm.
curl -fso /dev/null "$WP_SITEURL/wp-json/wp/v2/types" || true
hits_before=$(metric 'wpsidecar_rest_cache_requests_total{result="hit"}')
# curl writes the time of a failed request too: "?" instead.
t_first=$(curl -fso /dev/null -w '%{time_total}' "$posts") || t_first='?'
t_second=$(curl -fso /dev/null -w '%{time_total}' "$posts") || t_second='?'
hits_after=$(metric 'wpsidecar_rest_cache_requests_total{result="hit"}')
# The access line is written just after the answer goes out.
for _ in $(seq 1 20); do
  [ "$(grep -c 'wp/v2/posts' "$state/sidecar.log")" -ge 2 ] && break
  sleep 0.05
done
rest_line=$(grep '/wp-json/wp/v2/posts' "$state/sidecar.log" | sed 's/\x1b\[[0-9;]*m//g' | grep -o 'rest_cache=[a-z]*' | tail -n2 | tr '\n' ' ' | sed 's/ $//')

ms() { awk -v s="$1" 'BEGIN { if (s == "?") print "?"; else printf "%.1f ms", s * 1000 }'; }

cat <<EOF

  WordPress behind wpsidecar: $WP_SITEURL/
  Admin:                      $WP_SITEURL/wp-admin/   user $WP_ADMIN_USER, password $WP_ADMIN_PASSWORD
  Change history:             $WP_SITEURL/wp-admin/tools.php?page=wpsidecar-history   (the companion plugin, a must-use plugin)
  Application password:       $WP_ADMIN_USER / $app_password
  Sidecar log:                $state/sidecar.log   (the last run's: sidecar.log.1)
                              (each anonymous wp/v2 read's access line there says rest_cache=hit, miss or bypass)
  Health and metrics:         $admin/readyz   $admin/metrics
  Database:                   MariaDB on 127.0.0.1:$DEMO_DB_PORT, row binary log on (mariadb -h127.0.0.1 -P$DEMO_DB_PORT -uroot)

  Mode (/readyz):             $readyz
  Served from the feed:       20 GETs of the field groups: $given answered from memory, $reads database reads
  Kept REST answer:           $posts
                              PHP $(ms "$t_first"), then kept $(ms "$t_second"); rest_cache hits $hits_before -> $hits_after (access log: $rest_line)

  Try the field groups (answered by the sidecar from memory, kept current by the binary log):
    curl -s -u '$WP_ADMIN_USER:$app_password' $WP_SITEURL/wp-json/fieldmgr/v1/field-groups
    curl -s -u '$WP_ADMIN_USER:$app_password' $WP_SITEURL/wp-json/fieldmgr/v1/field-groups/product_details/toggle -X POST
  and the theme options (scripts/themeopts-demo.json; PHP's get_option('demo_theme_options') sees the same):
    curl -s -u '$WP_ADMIN_USER:$app_password' $WP_SITEURL/wp-json/themeopts/v1/options -H 'Content-Type: application/json' -d '{"accent_color":"#ff0066","layout":"boxed"}'
    curl -s -u '$WP_ADMIN_USER:$app_password' $WP_SITEURL/wp-json/themeopts/v1/options
    curl -s -u '$WP_ADMIN_USER:$app_password' $WP_SITEURL/wp-json/themeopts/v1/dev-panel
  and WordPress itself, through the sidecar (wp/v2 answers kept until a change in the database drops them):
    curl -s '$posts'
  Each change above shows under Tools -> Change history, with a revert.

  Ctrl-C stops everything.
EOF
wait "$sidecar_pid"

#!/usr/bin/env bash
# Installs and starts what the tests and the demo need on Debian: Go (when
# missing), MariaDB (started when none answers on 127.0.0.1:3306), Redis
# (started when none answers on 127.0.0.1:6379), and WordPress with PHP,
# phpredis and nginx from Debian's packages. Run as root, or it
# prints what to install.
#
#   scripts/install-deps.sh          # everything the tests need
#   scripts/install-deps.sh --demo   # only what `make demo` runs: no server
#                                    # started, no test tools (npm, staticcheck)
set -euo pipefail

demo=
[ "${1:-}" = --demo ] && demo=1

if [ -n "$demo" ]; then
  # The demo starts its own MariaDB (mariadbd, mariadb-install-db) and
  # WordPress; curl and ss (iproute2) are how it checks them.
  pkgs=(mariadb-server mariadb-client wordpress wordpress-theme-twentytwentyone nginx-light curl iproute2)
else
  pkgs=(mariadb-server mariadb-client docker-compose wordpress wordpress-theme-twentytwentyone php-redis redis-server nginx-light curl iproute2 wrk varnish varnish-modules apache2 caddy systemd chromium)
fi
# PHP as WordPress runs: Debian's wordpress package only suggests php-xml
# (without it wp-admin's dashboard says "RSS Error: XML or PCRE extensions
# not loaded") and php-mbstring, which sites have.
pkgs+=(php-cli php-fpm php-mysql php-xml php-mbstring)
command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || pkgs+=(golang-go)
# Node and npm from Debian only where none is installed (a machine may have
# its own Node, whose npm Debian's package would conflict with).
[ -n "$demo" ] || command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: please install: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  # apt's own output (and its hooks': needrestart's warnings) goes to a
  # log, shown only when it fails.
  log=$(mktemp -t wpsidecar-apt.XXXXXX)
  echo "install-deps: installing ${missing[*]} (apt-get; its output goes to $log)"
  export DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1
  # Debian's packages start no services inside containers; nothing listens
  # until this script or the harness starts it.
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "install-deps: apt-get failed; its whole output: $log" >&2
    exit 1
  fi
  rm -f "$log"
fi
if [ -n "$demo" ]; then
  echo "install-deps: ready for the demo"
  exit 0
fi

if ! mariadb-admin --protocol=tcp -h127.0.0.1 -uroot ping >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: no MariaDB answers on 127.0.0.1:3306; start one (root, empty password)" >&2
    exit 1
  fi
  echo "install-deps: starting MariaDB"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql --bind-address=127.0.0.1
  for _ in $(seq 1 60); do
    mariadb-admin --protocol=tcp -h127.0.0.1 -uroot ping >/dev/null 2>&1 && break
    sleep 0.5
  done
  mariadb-admin --protocol=tcp -h127.0.0.1 -uroot ping >/dev/null
  # A fresh Debian MariaDB lets root in only over the socket; the tests use TCP.
  mariadb -uroot -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket" 2>/dev/null || true
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: no Redis answers on 127.0.0.1:6379; start one" >&2
    exit 1
  fi
  echo "install-deps: starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/wpsidecar-ci.log
  for _ in $(seq 1 40); do
    redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break
    sleep 0.25
  done
  redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null
fi
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"
if ! command -v staticcheck >/dev/null 2>&1; then
  echo "install-deps: installing staticcheck"
  go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi
# Other projects' tools that check the OpenAPI description (openapi's and
# e2e's tests), at the versions of web/openapi/tools/package-lock.json, into
# web/openapi/tools/node_modules (ignored by git): installed here, never by a
# test, and again when the lock file changes. The tests fail without them
# (skip under -short).
tools="$(cd "$(dirname "$0")/../web/openapi/tools" && pwd)"
if [ ! -x "$tools/node_modules/.bin/redocly" ] || [ "$tools/package-lock.json" -nt "$tools/node_modules/.package-lock.json" ]; then
  echo "install-deps: installing Redocly, openapi-typescript and Prism (npm ci in web/openapi/tools)"
  if ! (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error); then
    echo "install-deps: npm ci failed in $tools: the npm registry must be reachable once" >&2
    exit 1
  fi
fi
echo "install-deps: ready"

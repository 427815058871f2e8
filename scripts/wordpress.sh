#!/usr/bin/env bash
# Stands up a real WordPress on loopback from Debian's packages: its own
# docroot (a copy of /usr/share/wordpress), its own wp-config.php with fixed
# keys and salts, its own database, PHP-FPM and nginx. Used by the demo, the
# benchmarks and the end-to-end tests.
#
#   scripts/wordpress.sh start STATE_DIR   # idempotent: a second start reuses the state
#   scripts/wordpress.sh stop STATE_DIR    # stops exactly what start started
#   scripts/wordpress.sh env STATE_DIR     # prints the settings as shell variables
#   scripts/wordpress.sh php-stop STATE_DIR   # stops PHP-FPM only, gracefully (SIGQUIT: requests
#                                             # under way finish); nginx answers 502 meanwhile
#   scripts/wordpress.sh php-start STATE_DIR  # starts it again
#
# Settings (environment, with defaults):
#   WP_PORT=8081          nginx serving WordPress
#   WP_PROXY_PORT=8082    nginx as a plain reverse proxy to WP_PORT (benchmark baseline)
#   WP_SITEURL=http://127.0.0.1:8080   the URL people use (the sidecar's)
#   WP_DB_NAME=wpsidecar_demo WP_DB_USER=wpsidecar WP_DB_PASSWORD=wpsidecar
#   WP_DB_HOST=127.0.0.1:3306  MYSQL_ADMIN="mariadb --protocol=tcp -h127.0.0.1 -uroot"
#   WP_ENVIRONMENT_TYPE=local  WP_ADMIN_USER=admin WP_ADMIN_PASSWORD=admin-password
#   WP_CONFIG_EXTRA=      PHP lines added to wp-config.php (e.g. WP_REDIS_* constants)
#   WP_OBJECT_CACHE=      a file installed as wp-content/object-cache.php (none when empty)
#   WP_MU_PLUGINS=        space-separated files installed in wp-content/mu-plugins (none when empty)
#   WP_SOURCE=/usr/share/wordpress   the WordPress tree the docroot is copied from
#                         (scripts/stacks.sh makes others: .cache/stacks/wordpress/*)
#   WP_PHP_CHROOT=        a chroot whose php-fpm and php run WordPress (scripts/stacks.sh's
#                         .cache/stacks/sid: PHP 8.4) instead of the machine's; STATE_DIR must
#                         then be inside it, so that nginx here and PHP there see the same files
set -euo pipefail

cmd=${1:-}
state=${2:-}
[ -n "$cmd" ] && [ -n "$state" ] || { echo "usage: $0 start|stop|env|php-stop|php-start STATE_DIR" >&2; exit 2; }
mkdir -p "$state"
state=$(cd "$state" && pwd)
here=$(cd "$(dirname "$0")" && pwd)

: "${WP_PORT:=8081}" "${WP_PROXY_PORT:=8082}" "${WP_SITEURL:=http://127.0.0.1:8080}"
: "${WP_DB_NAME:=wpsidecar_demo}" "${WP_DB_USER:=wpsidecar}" "${WP_DB_PASSWORD:=wpsidecar}"
: "${WP_DB_HOST:=127.0.0.1:3306}" "${WP_ENVIRONMENT_TYPE:=local}" "${WP_TABLE_PREFIX:=wp_}"
: "${WP_ADMIN_USER:=admin}" "${WP_ADMIN_PASSWORD:=admin-password}" "${WP_ADMIN_EMAIL:=admin@example.test}"
: "${MYSQL_ADMIN:=mariadb --protocol=tcp -h127.0.0.1 -uroot}"
: "${WP_SOURCE:=/usr/share/wordpress}" "${WP_PHP_CHROOT:=}"

docroot=$state/wordpress
php_root=
if [ -n "$WP_PHP_CHROOT" ]; then
  php_root=$(cd "$WP_PHP_CHROOT" && pwd)
  case $state/ in
    "$php_root"/*) ;;
    *) echo "wordpress.sh: with WP_PHP_CHROOT=$php_root the state dir must be inside it, not $state" >&2; exit 2 ;;
  esac
  php_fpm=$(cd "$php_root" && ls usr/sbin/php-fpm* 2>/dev/null | head -n1 || true)
  php_fpm=${php_fpm:+/$php_fpm}
else
  php_fpm=$(command -v php-fpm8.2 || ls /usr/sbin/php-fpm* 2>/dev/null | head -n1 || true)
fi

# php_path P: the path P (here) as PHP sees it, inside its chroot.
php_path() { echo "${1#"$php_root"}"; }
php_docroot=$(php_path "$docroot")
# The scripts PHP runs (scripts/wp); a copy in the state dir for a chrooted PHP.
php_scripts=$here/wp
[ -z "$php_root" ] || php_scripts=$state/scripts/wp

# run_php SCRIPT ARGS…: the php CLI of the PHP that serves the site.
run_php() {
  if [ -n "$php_root" ]; then
    chroot "$php_root" php "$(php_path "$1")" "${@:2}"
  else
    php "$@"
  fi
}

print_env() {
  cat <<EOF
WP_STATE=$state
WP_DOCROOT=$docroot
WP_PHP_DOCROOT=$php_docroot
WP_CONFIG=$docroot/wp-config.php
WP_URL=http://127.0.0.1:$WP_PORT
WP_PROXY_URL=http://127.0.0.1:$WP_PROXY_PORT
WP_SITEURL=$WP_SITEURL
WP_ADMIN_USER=$WP_ADMIN_USER
WP_ADMIN_PASSWORD=$WP_ADMIN_PASSWORD
EOF
}


wait_port() {
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "wordpress.sh: nothing listens on 127.0.0.1:$1; see $state/logs" >&2
  return 1
}

# running PID: the process runs (a zombie does not: nginx, started in the
# background of a shell that has exited, waits for init to reap it, which
# some containers' init does only every few seconds).
running() {
  local st
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $st && $st != Z* ]]
}

stop() {
  # Both are told at once and waited for together: a stop takes the
  # slower one's time, not the sum.
  local p pid pids=()
  for p in nginx php-fpm; do
    pid=$(cat "$state/$p.pid" 2>/dev/null) || continue
    if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then pids+=("$pid"); fi
    rm -f "$state/$p.pid"
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do running "$pid" || break; sleep 0.05; done
  done
}

write_configs() {
  mkdir -p "$state/logs" "$state/tmp"
  local as_root=""
  [ "$(id -u)" -eq 0 ] && as_root=1

  # Fixed keys and salts, so cookies and nonces are reproducible in tests.
  cat > "$docroot/wp-config.php" <<EOF
<?php
// Written by scripts/wordpress.sh.
define( 'DB_NAME', '$WP_DB_NAME' );
define( 'DB_USER', '$WP_DB_USER' );
define( 'DB_PASSWORD', '$WP_DB_PASSWORD' );
define( 'DB_HOST', '$WP_DB_HOST' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );

define( 'AUTH_KEY',         'wpsidecar-test auth key' );
define( 'SECURE_AUTH_KEY',  'wpsidecar-test secure auth key' );
define( 'LOGGED_IN_KEY',    'wpsidecar-test logged in key' );
define( 'NONCE_KEY',        'wpsidecar-test nonce key' );
define( 'AUTH_SALT',        'wpsidecar-test auth salt' );
define( 'SECURE_AUTH_SALT', 'wpsidecar-test secure auth salt' );
define( 'LOGGED_IN_SALT',   'wpsidecar-test logged in salt' );
define( 'NONCE_SALT',       'wpsidecar-test nonce salt' );

\$table_prefix = '$WP_TABLE_PREFIX';

define( 'WP_ENVIRONMENT_TYPE', '$WP_ENVIRONMENT_TYPE' );
define( 'WP_DEBUG', false );
define( 'DISABLE_WP_CRON', true );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'FS_METHOD', 'direct' );
${WP_CONFIG_EXTRA:-}

if ( isset( \$_SERVER['HTTP_X_FORWARDED_PROTO'] ) && strpos( \$_SERVER['HTTP_X_FORWARDED_PROTO'], 'https' ) !== false ) {
	\$_SERVER['HTTPS'] = 'on';
}

if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}
require_once ABSPATH . 'wp-settings.php';
EOF

  if [ -n "${WP_OBJECT_CACHE:-}" ]; then
    cp "$WP_OBJECT_CACHE" "$docroot/wp-content/object-cache.php"
  else
    rm -f "$docroot/wp-content/object-cache.php"
  fi
  rm -rf "$docroot/wp-content/mu-plugins"
  if [ -n "${WP_MU_PLUGINS:-}" ]; then
    mkdir -p "$docroot/wp-content/mu-plugins"
    for f in $WP_MU_PLUGINS; do cp "$f" "$docroot/wp-content/mu-plugins/"; done
  fi

  # PHP-FPM's paths are PHP's (inside its chroot, if any); nginx's are
  # this machine's, but for the script paths it hands PHP.
  cat > "$state/php-fpm.conf" <<EOF
[global]
pid = $(php_path "$state/php-fpm.pid")
error_log = $(php_path "$state/logs/php-fpm.log")
daemonize = no
; a graceful stop (SIGQUIT) lets the requests under way finish
process_control_timeout = 10s

[www]
${as_root:+user = root}
${as_root:+group = root}
listen = $(php_path "$state/php-fpm.sock")
; the web servers the recipes are tried with (Apache) run their workers
; unprivileged
listen.mode = 0666
pm = static
pm.max_children = 8
catch_workers_output = yes
php_admin_value[error_log] = $(php_path "$state/logs/php-errors.log")
php_admin_value[upload_max_filesize] = 64M
php_admin_value[post_max_size] = 64M
php_admin_value[memory_limit] = 256M
EOF

  sed "s|^fastcgi_param[[:space:]]*DOCUMENT_ROOT[[:space:]].*|fastcgi_param  DOCUMENT_ROOT      $php_docroot;|" \
    /etc/nginx/fastcgi_params > "$state/fastcgi_params"
  cat > "$state/nginx.conf" <<EOF
${as_root:+user root;}
worker_processes 2;
pid $state/nginx.pid;
error_log $state/logs/nginx-error.log warn;
daemon off;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path $state/tmp/body;
  proxy_temp_path $state/tmp/proxy;
  fastcgi_temp_path $state/tmp/fastcgi;
  uwsgi_temp_path $state/tmp/uwsgi;
  scgi_temp_path $state/tmp/scgi;
  client_max_body_size 64m;
  keepalive_requests 100000;

  # WordPress itself.
  server {
    listen 127.0.0.1:$WP_PORT;
    root $docroot;
    index index.php;
    location / { try_files \$uri \$uri/ /index.php?\$args; }
    location ~ \.php\$ {
      try_files \$uri =404;
      include $state/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME $php_docroot\$fastcgi_script_name;
      fastcgi_param HTTP_AUTHORIZATION \$http_authorization;
      fastcgi_param HTTP_HOST \$http_host;
      fastcgi_pass unix:$state/php-fpm.sock;
      fastcgi_read_timeout 300s;
    }
  }

  # nginx as a plain reverse proxy to the same WordPress: what the sidecar
  # is measured against.
  upstream wordpress { server 127.0.0.1:$WP_PORT; keepalive 64; }
  server {
    listen 127.0.0.1:$WP_PROXY_PORT;
    location / {
      proxy_pass http://wordpress;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto \$scheme;
    }
  }
}
EOF
}

php_stop() {
  local pid
  pid=$(cat "$state/php-fpm.pid" 2>/dev/null) || return 0
  if [ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null; then
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$state/php-fpm.pid"
}

php_start() {
  local root_flag=""
  [ "$(id -u)" -eq 0 ] && root_flag=-R
  rm -f "$state/php-fpm.sock"
  if [ -n "$php_root" ]; then
    chroot "$php_root" "$php_fpm" $root_flag -y "$(php_path "$state/php-fpm.conf")" -F >> "$state/logs/php-fpm.out" 2>&1 &
  else
    "$php_fpm" $root_flag -y "$state/php-fpm.conf" -F >> "$state/logs/php-fpm.out" 2>&1 &
  fi
  for _ in $(seq 1 50); do [ -S "$state/php-fpm.sock" ] && return 0; sleep 0.1; done
  echo "wordpress.sh: php-fpm did not start; see $state/logs" >&2
  return 1
}

start() {
  [ -n "$php_fpm" ] || { echo "wordpress.sh: php-fpm missing${php_root:+ in $php_root}: run scripts/install-deps.sh${php_root:+ or scripts/stacks.sh build}" >&2; exit 1; }
  [ -f "$WP_SOURCE/wp-load.php" ] || { echo "wordpress.sh: no WordPress in $WP_SOURCE (Debian's wordpress package: scripts/install-deps.sh; others: scripts/stacks.sh build)" >&2; exit 1; }
  stop
  if [ ! -f "$docroot/wp-load.php" ]; then
    mkdir -p "$docroot"
    # A copy, not links: WordPress finds wp-config.php next to the real path
    # of wp-load.php, and Debian's own there is a per-host dispatcher.
    cp -a "$WP_SOURCE/." "$docroot/"
    # Debian's package links some files to other packages' by relative
    # paths (underscore.js and the cropper in /usr/share/javascript,
    # getID3 in /usr/share/php), which the copy would leave dangling (a
    # 404 for wp-admin's underscore.js): copy the files themselves.
    (cd "$WP_SOURCE" && find . -type l -lname '../*' -print0) | while IFS= read -r -d '' link; do
      rm -f "$docroot/$link" && cp -L "$WP_SOURCE/$link" "$docroot/$link"
    done
    rm -f "$docroot/.htaccess" "$docroot/wp-config.php"
    mkdir -p "$docroot/wp-content/uploads"
    printf 'hello from nginx\n' > "$docroot/static.txt"
  fi
  write_configs
  if [ -n "$php_root" ]; then
    rm -rf "$state/scripts"
    mkdir -p "$state/scripts"
    cp -a "$here/wp" "$state/scripts/"
  fi

  $MYSQL_ADMIN -e "CREATE DATABASE IF NOT EXISTS \`$WP_DB_NAME\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci;
    CREATE USER IF NOT EXISTS '$WP_DB_USER'@'localhost' IDENTIFIED BY '$WP_DB_PASSWORD';
    CREATE USER IF NOT EXISTS '$WP_DB_USER'@'127.0.0.1' IDENTIFIED BY '$WP_DB_PASSWORD';
    GRANT ALL ON \`$WP_DB_NAME\`.* TO '$WP_DB_USER'@'localhost';
    GRANT ALL ON \`$WP_DB_NAME\`.* TO '$WP_DB_USER'@'127.0.0.1';"

  WP_SITEURL=$WP_SITEURL WP_ADMIN_USER=$WP_ADMIN_USER WP_ADMIN_PASSWORD=$WP_ADMIN_PASSWORD WP_ADMIN_EMAIL=$WP_ADMIN_EMAIL \
    run_php "$php_scripts/install.php" "$php_docroot" > "$state/logs/install.log" 2>&1 ||
    { cat "$state/logs/install.log" >&2; exit 1; }

  php_start
  /usr/sbin/nginx -p "$state" -c "$state/nginx.conf" -e "$state/logs/nginx-error.log" > "$state/logs/nginx.out" 2>&1 &
  wait_port "$WP_PORT"
  wait_port "$WP_PROXY_PORT"
  print_env
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  env) print_env ;;
  php-stop) php_stop ;;
  php-start) php_start ;;
  *) echo "usage: $0 start|stop|env|php-stop|php-start STATE_DIR" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# The database tests and the end-to-end tests on newer stacks than the
# machine's own, all from Debian's packages (make test-stacks):
#
#   MySQL 9.7 and PHP 8.4 (php-fpm, mysqli, phpredis, gd) installed with apt
#     in a Debian sid chroot made with debootstrap ($WPSIDECAR_STACKS/sid);
#   MariaDB 11.8 unpacked (dpkg-deb -x) into the chroot's /opt/mariadb, its
#     libraries installed in the chroot: its server package conflicts with
#     MySQL's, so it is never installed;
#   WordPress 7.1 (sid) and 6.8 (trixie) unpacked from the wordpress package
#     together with the packages its symlinks point into (jQuery UI, lodash,
#     getID3, PHPMailer …), made into complete trees without links
#     ($WPSIDECAR_STACKS/wordpress/{sid,trixie}); never installed anywhere.
#
# Nothing of it is installed on the machine itself (debootstrap aside).
# Servers run from the chroot (chroot DIR /usr/sbin/mysqld …) on loopback
# ports; the chroot shares the machine's network.
#
#   scripts/stacks.sh build   build what is missing; a second run reuses it
#                             (a stamp per step: a step cut short is redone)
#   scripts/stacks.sh chroot  the chroot alone, without the servers, PHP and
#                             WordPress (make test-packaging installs the
#                             Debian package in it)
#   scripts/stacks.sh test    build, then the test matrix; a summary at the
#                             end, non-zero when a leg failed
#   scripts/stacks.sh server mysql|mariadb
#                             a shared test server until Ctrl-C; prints the
#                             variables that point the tests at it
#   scripts/stacks.sh env     the paths, as shell variables
#
# Settings (environment):
#   WPSIDECAR_STACKS=.cache/stacks        where it is all built
#   WPSIDECAR_DEBIAN_MIRROR=http://deb.debian.org/debian
#   STACKS_LEGS="db-mysql db-mariadb e2e-mysql e2e-mariadb companion-php84"
#                                         the legs to run (all by default)
#   STACKS_RUN=REGEXP                     only the tests go test -run picks
#                                         (in every leg selected)
#
# The tests find the stacks through WPSIDECAR_STACKS and are pointed at
# them by WPSIDECAR_TEST_SERVER (mysql|mariadb: the servers the tests start
# themselves), WPSIDECAR_TEST_DSN (the shared server, started here),
# WPSIDECAR_TEST_WORDPRESS (a WordPress tree) and WPSIDECAR_TEST_PHP
# (chroot: the chroot's php-fpm8.4 and php8.4).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
stacks=${WPSIDECAR_STACKS:-$repo/.cache/stacks}
mirror=${WPSIDECAR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$stacks/sid
stamps=$stacks/stamps
export DEBIAN_FRONTEND=noninteractive
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH:/usr/sbin:/sbin"

# What the chroot gets with apt. mysql-server (not -core) would pull
# mariadb-common's conflicts and a postinst that starts a server.
chroot_pkgs=(mysql-server-core mysql-client-core php8.4-fpm php8.4-cli php8.4-mysql php8.4-gd php8.4-redis)
# The versions the legs are named after; others are tested but noted.
want_mysql=9.7 want_mariadb=11.8 want_php=8.4
declare -A want_wordpress=([sid]=7.1 [trixie]=6.8)

say() { printf 'stacks: %s\n' "$*"; }
die() { printf 'stacks: %s\n' "$*" >&2; exit 1; }
# No command in the chroot reads stdin; apt-cache would eat a loop's.
in_root() { chroot "$root" "$@" </dev/null; }

need_root() {
  [ "$(id -u)" -eq 0 ] || die "run as root: debootstrap and chroot need it"
}

# mounts_under DIR: mount points at or below DIR (debootstrap mounts /proc
# and /sys in its target while it runs; one killed may leave them).
mounts_under() {
  awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r
}

safe_rm() {
  local m
  for m in $(mounts_under "$1"); do umount "$m" || umount -l "$m" || die "cannot unmount $m"; done
  [ -z "$(mounts_under "$1")" ] || die "still mounted under $1; not removing it"
  rm -rf "$1"
}

# step_done NAME KEY: whether step NAME completed with the same recipe KEY.
step_done() { [ -f "$stamps/$1" ] && [ "$(cat "$stamps/$1")" = "$2" ]; }
step_ok() { mkdir -p "$stamps"; printf '%s' "$2" > "$stamps/$1"; }

timed() {
  local label=$1 t0=$SECONDS
  shift
  "$@"
  say "$label: $((SECONDS - t0)) s"
}

# --- build ---------------------------------------------------------------

host_tools() {
  local missing=()
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  command -v dpkg-deb >/dev/null 2>&1 || missing+=(dpkg)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} on the machine"
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# The chroot: debootstrap's minimal sid. Its log ends with "done RC"; a
# chroot whose log says "done 0" and that holds no debootstrap/ work
# folder (removed at the very end of a successful run) is complete, which
# lets a chroot made by hand with the same command be reused.
build_chroot() {
  local log=$stacks/debootstrap.log
  if [ ! -f "$stamps/chroot" ] && [ -d "$root/usr" ] && [ ! -e "$root/debootstrap" ] &&
    [ "$(tail -n1 "$log" 2>/dev/null)" = "done 0" ]; then
    step_ok chroot "sid minbase"
  fi
  if step_done chroot "sid minbase" && [ -x "$root/usr/bin/apt-get" ]; then
    return 0
  fi
  say "debootstrap sid into $root (log: $log)"
  rm -f "$stamps/chroot" "$stamps"/chroot-* "$stamps/mariadb" # all that lives in the chroot
  safe_rm "$root"
  mkdir -p "$stacks"
  local rc=0
  debootstrap --variant=minbase --include=ca-certificates sid "$root" "$mirror" > "$log" 2>&1 || rc=$?
  echo "done $rc" >> "$log"
  [ "$rc" -eq 0 ] || { tail -n 30 "$log" >&2; die "debootstrap failed ($rc); see $log"; }
  step_ok chroot "sid minbase"
}

# The chroot's apt: sid, with trixie beside it at a low priority (only
# asked for by name, pkg/trixie); services never started (policy-rc.d);
# the archive's Release files are taken past their Valid-Until (a frozen
# mirror or a machine with its clock ahead must still work).
configure_chroot() {
  cat > "$root/etc/apt/sources.list" <<EOF
deb $mirror sid main
deb $mirror trixie main
EOF
  mkdir -p "$root/etc/apt/preferences.d" "$root/etc/apt/apt.conf.d"
  printf 'Package: *\nPin: release n=trixie\nPin-Priority: 100\n' > "$root/etc/apt/preferences.d/wpsidecar"
  # apt-get download writes where _apt may not; this chroot is a build tree.
  printf 'Acquire::Check-Valid-Until "false";\nAPT::Sandbox::User "root";\nAPT::Install-Recommends "false";\n' \
    > "$root/etc/apt/apt.conf.d/99wpsidecar"
  printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"
  # mariadb-install-db and mysqld look up localhost; minbase has no hosts file.
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$root/etc/hosts"
  mkdir -p "$root/srv" "$root/tmp" "$root/var/cache/wpsidecar"
  chmod 1777 "$root/tmp"
}

apt_updated=
apt_update() {
  [ -n "$apt_updated" ] && return 0
  in_root apt-get update -qq || die "apt-get update in the chroot failed"
  apt_updated=1
}

build_packages() {
  local key="${chroot_pkgs[*]}"
  step_done chroot-packages "$key" && [ -x "$root/usr/sbin/mysqld" ] && return 0
  say "installing in the chroot: ${chroot_pkgs[*]}"
  apt_update
  in_root dpkg --configure -a
  in_root apt-get install -y -qq "${chroot_pkgs[@]}" > "$stacks/apt.log" 2>&1 ||
    { tail -n 30 "$stacks/apt.log" >&2; die "apt-get install in the chroot failed; see $stacks/apt.log"; }
  in_root apt-get clean # the .debs: a few hundred MB nothing reads again
  step_ok chroot-packages "$key"
}

# suite_with PKG VERSION-PREFIX: the first of sid, trixie whose PKG's
# version starts with the prefix (e.g. 1:11.8.).
suite_with() {
  local s v
  for s in sid trixie; do
    v=$(in_root apt-cache show --no-all-versions "$1/$s" 2>/dev/null | awk '/^Version: / && v == "" { v = $2 } END { print v }')
    case $v in "$2"*) echo "$s"; return 0 ;; esac
  done
  return 1
}

# hard_deps PKG/SUITE: the packages PKG depends on without alternatives.
hard_deps() {
  in_root apt-cache show --no-all-versions "$1" | sed -n 's/^\(Pre-\)\{0,1\}Depends: //p' | tr ',' '\n' |
    grep -v '|' | sed -E 's/\(.*\)//; s/:any//; s/[[:space:]]//g' | grep -v '^$' | sort -u
}

# MariaDB: the server and client cores unpacked in /opt/mariadb; the
# libraries they link with installed in the chroot (none of them
# conflicts with MySQL's packages).
build_mariadb() {
  case $(cat "$stamps/mariadb" 2>/dev/null) in
    "mariadb-server-core mariadb-client-core/"*) [ -x "$root/opt/mariadb/usr/sbin/mariadbd" ] && return 0 ;;
  esac
  local suite
  suite=$(suite_with mariadb-server-core "1:$want_mariadb.") ||
    { apt_update; suite=$(suite_with mariadb-server-core "1:$want_mariadb.") ||
      die "neither sid nor trixie has mariadb-server-core $want_mariadb"; }
  local key="mariadb-server-core mariadb-client-core/$suite"
  step_done mariadb "$key" && [ -x "$root/opt/mariadb/usr/sbin/mariadbd" ] && return 0
  say "unpacking MariaDB ($suite) into $root/opt/mariadb"
  apt_update
  local libs=() p
  for p in mariadb-server-core mariadb-client-core; do
    while read -r d; do case $d in mariadb-*|mysql-*) ;; *) libs+=("$d") ;; esac; done < <(hard_deps "$p/$suite")
  done
  in_root apt-get install -y -qq "${libs[@]}" > "$stacks/apt-mariadb.log" 2>&1 ||
    { tail -n 30 "$stacks/apt-mariadb.log" >&2; die "installing MariaDB's libraries failed"; }
  rm -rf "$root/var/cache/wpsidecar/mariadb" "$root/opt/mariadb.tmp"
  mkdir -p "$root/var/cache/wpsidecar/mariadb" "$root/opt/mariadb.tmp"
  in_root sh -c "cd /var/cache/wpsidecar/mariadb && apt-get download -qq mariadb-server-core/$suite mariadb-client-core/$suite" ||
    die "apt-get download of MariaDB failed"
  for p in "$root"/var/cache/wpsidecar/mariadb/*.deb; do dpkg-deb -x "$p" "$root/opt/mariadb.tmp"; done
  rm -rf "$root/opt/mariadb"
  mv "$root/opt/mariadb.tmp" "$root/opt/mariadb"
  in_root /opt/mariadb/usr/sbin/mariadbd --version >/dev/null || die "the unpacked mariadbd does not run in the chroot"
  in_root apt-get clean
  rm -rf "$root/var/cache/wpsidecar/mariadb"
  step_ok mariadb "$key"
}

# wp_pkgs SUITE: wordpress, its default theme and, transitively, the
# architecture-independent packages they depend on without alternatives:
# the ones its symlinks point into (PHP, MySQL and web server packages
# are architecture-dependent or alternatives).
wp_pkgs() {
  local suite=$1 todo=(wordpress wordpress-theme-twentytwentyfive) seen=" " p d
  while [ ${#todo[@]} -gt 0 ]; do
    p=${todo[0]}
    todo=("${todo[@]:1}")
    case $seen in *" $p "*) continue ;; esac
    seen="$seen$p "
    echo "$p"
    while read -r d; do
      [ "$d" = ca-certificates ] && continue # its bundle is generated: taken from the chroot
      # grep -c, not -q: -q stops reading, and apt-cache's SIGPIPE would fail the pipe (pipefail).
      if in_root apt-cache show --no-all-versions "$d/$suite" 2>/dev/null | grep -cx 'Architecture: all' >/dev/null; then
        todo+=("$d")
      fi
    done < <(hard_deps "$p/$suite")
  done
}

# A WordPress tree from SUITE's packages, complete without links: what
# WPSIDECAR_TEST_WORDPRESS names, copied by scripts/wordpress.sh.
build_wordpress() {
  local suite=$1 out=$stacks/wordpress/$1
  local key="wordpress/$suite v1"
  step_done "wordpress-$suite" "$key" && [ -f "$out/wp-load.php" ] && return 0
  say "unpacking WordPress ($suite) into $out"
  apt_update
  local pkgs debs=/var/cache/wpsidecar/wordpress-$suite tmp=$stacks/wordpress/.$suite.tmp
  pkgs=$(wp_pkgs "$suite" | sed "s|\$|/$suite|" | tr '\n' ' ')
  rm -rf "$root$debs" "$tmp"
  mkdir -p "$root$debs" "$tmp/root"
  in_root sh -c "cd $debs && apt-get download -qq $pkgs" || die "apt-get download $pkgs failed"
  local deb l t
  for deb in "$root$debs"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
  mkdir -p "$tmp/root/etc/ssl/certs"
  cp "$root/etc/ssl/certs/ca-certificates.crt" "$tmp/root/etc/ssl/certs/"
  # Absolute links point into the unpacked tree, then the copy follows
  # every link: the tree stands alone wherever it is copied.
  while IFS= read -r -d '' l; do
    t=$(readlink "$l")
    case $t in /*) ln -sfn "$tmp/root$t" "$l" ;; esac
  done < <(find "$tmp/root" -type l -print0)
  local dangling
  dangling=$(find "$tmp/root/usr/share/wordpress" -xtype l)
  [ -z "$dangling" ] || die "WordPress ($suite) links to files no unpacked package has:
$dangling"
  cp -rL "$tmp/root/usr/share/wordpress" "$tmp/wordpress"
  rm -f "$tmp/wordpress/.htaccess" "$tmp/wordpress/wp-config.php" # Debian's per-host dispatcher
  safe_rm "$out"
  mv "$tmp/wordpress" "$out"
  rm -rf "$tmp" "$root$debs"
  step_ok "wordpress-$suite" "$key"
}

wp_version() { sed -n "s/^\$wp_version = '\(.*\)';/\1/p" "$stacks/wordpress/$1/wp-includes/version.php"; }
mysql_version() { in_root /usr/sbin/mysqld --version | sed -E 's/.* Ver ([0-9.]+).*/\1/'; }
mariadb_version() { in_root /opt/mariadb/usr/sbin/mariadbd --version | sed -E 's/.* Ver ([0-9.]+)-MariaDB.*/\1/'; }
php_version() { in_root php8.4 -r 'echo PHP_VERSION;'; }

# The chroot alone, holding the build lock (unlock lets it go).
build_root() {
  need_root
  mkdir -p "$stacks"
  exec 9> "$stacks/.lock"
  flock 9 # two builds at once would trip over each other's apt
  host_tools
  timed "chroot (debootstrap sid)" build_chroot
  configure_chroot
}

unlock() {
  flock -u 9
  exec 9>&- # not held open by the servers and tests started next
}

build() {
  local t0=$SECONDS
  build_root
  timed "chroot packages (MySQL, PHP)" build_packages
  timed "MariaDB" build_mariadb
  timed "WordPress sid" build_wordpress sid
  timed "WordPress trixie" build_wordpress trixie
  local v
  v=$(mysql_version); case $v in "$want_mysql".*) ;; *) say "note: MySQL is $v, not $want_mysql" ;; esac
  v=$(mariadb_version); case $v in "$want_mariadb".*) ;; *) say "note: MariaDB is $v, not $want_mariadb" ;; esac
  v=$(php_version); case $v in "$want_php".*) ;; *) say "note: PHP is $v, not $want_php" ;; esac
  for s in sid trixie; do
    v=$(wp_version $s); case $v in "${want_wordpress[$s]}".*) ;; *) say "note: WordPress ($s) is $v, not ${want_wordpress[$s]}" ;; esac
  done
  say "built in $((SECONDS - t0)) s: MySQL $(mysql_version), MariaDB $(mariadb_version), PHP $(php_version), WordPress $(wp_version sid) and $(wp_version trixie) in $stacks"
  unlock
}

print_env() {
  cat <<EOF
WPSIDECAR_STACKS=$stacks
STACKS_ROOT=$root
STACKS_MYSQLD=$root/usr/sbin/mysqld
STACKS_MARIADBD=$root/opt/mariadb/usr/sbin/mariadbd
STACKS_WORDPRESS_SID=$stacks/wordpress/sid
STACKS_WORDPRESS_TRIXIE=$stacks/wordpress/trixie
EOF
}

# --- the shared test server ------------------------------------------------

db_pid='' db_dir='' db_port='' db_flavor=''

# A port below Linux's ephemeral range (32768–60999), where the tests'
# own :0 listeners and outgoing connections take theirs, and unused now.
pick_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 12000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  die "no free port found"
}

# start_db FLAVOR: the default test server (WPSIDECAR_TEST_DSN) of
# FLAVOR (mysql|mariadb) from the chroot, its data in the chroot's /tmp,
# with root reachable over TCP without a password as on the machine's.
start_db() {
  db_flavor=$1
  db_dir=$(mktemp -d "$root/tmp/wpsidecar-stacks-db.XXXXXX")
  local in=${db_dir#"$root"} server=()
  case $db_flavor in
    mysql)
      printf "CREATE USER 'root'@'127.0.0.1' IDENTIFIED BY '';\nGRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n" > "$db_dir/init.sql"
      in_root /usr/sbin/mysqld --no-defaults --initialize-insecure --user=root --datadir="$in/data" \
        --init-file="$in/init.sql" --log-error="$in/init.log" || { cat "$db_dir/init.log" >&2; die "mysqld --initialize-insecure failed"; }
      server=(/usr/sbin/mysqld --no-defaults --user=root --datadir="$in/data" --mysqlx=OFF --secure-file-priv=)
      ;;
    mariadb)
      in_root /opt/mariadb/usr/bin/mariadb-install-db --no-defaults --basedir=/opt/mariadb/usr --datadir="$in/data" \
        --user=root --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve > "$db_dir/init.log" 2>&1 ||
        { cat "$db_dir/init.log" >&2; die "mariadb-install-db failed"; }
      server=(/opt/mariadb/usr/sbin/mariadbd --no-defaults --basedir=/opt/mariadb/usr --lc-messages-dir=/opt/mariadb/usr/share/mariadb
        --plugin-dir=/opt/mariadb/usr/lib/mysql/plugin --datadir="$in/data" --user=root)
      ;;
  esac
  server+=(--bind-address=127.0.0.1 --socket="$in/sock" --pid-file="$in/pid" --log-error="$in/error.log"
    --skip-name-resolve --max-connections=500)
  # The flavor's own client, from the chroot: nothing needed on the machine.
  local client=(mysql)
  # (MariaDB's verifies the server's certificate by default, and says it
  # will not over a passwordless loopback login.)
  [ "$db_flavor" = mysql ] || client=(/opt/mariadb/usr/bin/mariadb --skip-ssl-verify-server-cert)
  client+=(--protocol=tcp -h127.0.0.1 -uroot)
  # The port is free when picked, not necessarily when the server binds
  # it: a server that exits saying so is started again on another.
  for _ in 1 2 3 4 5; do
    db_port=$(pick_port)
    : > "$db_dir/error.log"
    chroot "$root" "${server[@]}" --port="$db_port" >> "$db_dir/console.log" 2>&1 &
    db_pid=$!
    while kill -0 "$db_pid" 2>/dev/null; do
      in_root "${client[@]}" -P"$db_port" -e 'SELECT 1' >/dev/null 2>&1 && break
      sleep 0.1
    done
    if kill -0 "$db_pid" 2>/dev/null; then
      say "$db_flavor $(in_root "${client[@]}" -P"$db_port" -N -e 'SELECT VERSION()') on 127.0.0.1:$db_port (pid $db_pid, $db_dir)"
      return 0
    fi
    wait "$db_pid" 2>/dev/null || true
    db_pid=
    grep -qiE 'address already in use|bind on tcp/ip port' "$db_dir/error.log" || break
  done
  cat "$db_dir/error.log" >&2
  die "the $db_flavor test server did not start"
}

stop_db() {
  if [ -n "$db_pid" ]; then
    kill -TERM "$db_pid" 2>/dev/null || true
    wait "$db_pid" 2>/dev/null || true
    db_pid=
  fi
  if [ -n "$db_dir" ]; then
    rm -rf "$db_dir"
    db_dir=
  fi
}

# --- the matrix --------------------------------------------------------------

legs_run=() legs_result=() legs_secs=()

# leg NAME LABEL ENV… -- GO-TEST-ARGS…: one go test run, its output in
# logs/NAME.log; the failures (test and first error line) printed.
leg() {
  local name=$1 label=$2 envs=() log=$stacks/logs/$1.log
  shift 2
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  selected "$name" || return 0
  say "== $name: $label"
  local t0=$SECONDS rc=0
  local run=()
  [ -z "${STACKS_RUN:-}" ] || run=(-run "$STACKS_RUN")
  (cd "$repo" && env "${envs[@]}" go test -count=1 "$@" "${run[@]}") > "$log" 2>&1 || rc=$?
  local secs=$((SECONDS - t0)) result=ok
  if [ "$rc" -ne 0 ]; then
    result=FAIL
    say "$name failed after $secs s; failures (full output: $log):"
    failures "$log" | sed 's/^/    /'
  else
    say "$name passed in $secs s"
  fi
  legs_run+=("$name: $label") legs_result+=("$result") legs_secs+=("$secs")
}

# failures LOG: each failed test with the first lines it logged (a
# screenshot's path alone does not say what went wrong), and each
# package that failed without a failed test (build failures, TestMain).
failures() {
  awk '
    # Build errors come under "# PKG" (or "# PKG_test [PKG.test]"), perhaps
    # amid the output of other packages.
    /^# / { hdr = $2; sub(/_test$/, "", hdr); inhdr = 1; next }
    inhdr { if (!(hdr in builderr)) builderr[hdr] = substr($0, 1, 300); inhdr = 0 }
    /^[[:space:]]*--- FAIL: / { name = $3; want = 8; shown = 0; named = 1; next }
    want && /^[[:space:]]*(--- |=== |FAIL$|PASS$)/ {
      if (!shown) printf "%s: (no message)\n", name
      want = 0
    }
    want && NF > 0 {
      line = $0; sub(/^[[:space:]]+/, "", line)
      printf "%s: %s\n", name, substr(line, 1, 300); want--; shown = 1; next
    }
    /^FAIL[[:space:]]+[^[:space:]]+[[:space:]]/ {
      if (!named) printf "package %s: %s\n", $2, (/\[build failed\]/ && ($2 in builderr)) ? builderr[$2] : first
      named = 0; first = ""; next
    }
    /^(ok|\?)[[:space:]]/ { named = 0; first = ""; next }
    first == "" && NF > 0 && !/^(=== |FAIL$|PASS$)/ { first = substr($0, 1, 300) }
  ' "$1"
}

all_legs="db-mysql db-mariadb e2e-mysql e2e-mariadb companion-php84"
# selected LEG…: whether STACKS_LEGS has one of them.
selected() {
  local l
  for l; do case " ${STACKS_LEGS:-$all_legs} " in *" $l "*) return 0 ;; esac; done
  return 1
}

run_tests() {
  build
  # The machine's own part of the stacks: Go, nginx, PHP 8.2, Redis,
  # Varnish … (what make test needs too).
  "$here/install-deps.sh"
  mkdir -p "$stacks/logs"
  trap stop_db EXIT
  local common=(WPSIDECAR_STACKS="$stacks")
  local companion
  companion=$(grep -o '^func TestCompanion_[A-Za-z0-9_]*' "$repo/e2e/companion_test.go" | sed 's/^func //' | paste -sd'|')
  [ -n "$companion" ] || die "no TestCompanion_ tests in e2e/companion_test.go"
  local my ma wp71 wp68 php
  my="MySQL $(mysql_version)" ma="MariaDB $(mariadb_version)" php="PHP $(php_version)"
  wp71="WordPress $(wp_version sid)" wp68="WordPress $(wp_version trixie)"
  local host_php
  host_php="PHP $(php -r 'echo PHP_VERSION;')"

  # One shared server per flavor (WPSIDECAR_TEST_DSN) for the legs on it;
  # the tests start their private ones (testdb.StartServer) of the same
  # flavor (WPSIDECAR_TEST_SERVER).
  local dsn
  selected db-mysql e2e-mysql && start_db mysql
  dsn="root@tcp(127.0.0.1:$db_port)/"
  leg db-mysql "database tests on $my" "${common[@]}" WPSIDECAR_TEST_SERVER=mysql WPSIDECAR_TEST_DSN="$dsn" -- -timeout 30m ./...
  leg e2e-mysql "end-to-end on $wp71, $host_php (machine), $my" "${common[@]}" WPSIDECAR_TEST_SERVER=mysql WPSIDECAR_TEST_DSN="$dsn" \
    WPSIDECAR_TEST_WORDPRESS="$stacks/wordpress/sid" -- -tags e2e -timeout 30m ./e2e/
  stop_db

  selected db-mariadb e2e-mariadb companion-php84 && start_db mariadb
  dsn="root@tcp(127.0.0.1:$db_port)/"
  leg db-mariadb "database tests on $ma" "${common[@]}" WPSIDECAR_TEST_SERVER=mariadb WPSIDECAR_TEST_DSN="$dsn" -- -timeout 30m ./...
  leg e2e-mariadb "end-to-end on $wp68, $host_php (machine), $ma" "${common[@]}" WPSIDECAR_TEST_SERVER=mariadb WPSIDECAR_TEST_DSN="$dsn" \
    WPSIDECAR_TEST_WORDPRESS="$stacks/wordpress/trixie" -- -tags e2e -timeout 30m ./e2e/
  # The companion plugin on PHP 8.4 over MariaDB, so that what fails there
  # is PHP's (or WordPress 7.1's), not MySQL's: e2e-mysql shows MySQL's.
  leg companion-php84 "companion plugin on $wp71, $php (chroot), $ma" "${common[@]}" WPSIDECAR_TEST_SERVER=mariadb WPSIDECAR_TEST_DSN="$dsn" \
    WPSIDECAR_TEST_WORDPRESS="$stacks/wordpress/sid" WPSIDECAR_TEST_PHP=chroot -- -tags e2e -timeout 30m -run "^($companion)\$" ./e2e/
  stop_db

  [ ${#legs_run[@]} -gt 0 ] || die "no leg matched STACKS_LEGS=${STACKS_LEGS:-}"
  local i w=5 failed=0
  for i in "${legs_run[@]}"; do [ ${#i} -le "$w" ] || w=${#i}; done
  echo
  printf "%-${w}s  %-6s  %s\n" stack result seconds
  for i in "${!legs_run[@]}"; do
    printf "%-${w}s  %-6s  %s\n" "${legs_run[$i]}" "${legs_result[$i]}" "${legs_secs[$i]}"
    [ "${legs_result[$i]}" = ok ] || failed=1
  done
  say "logs in $stacks/logs"
  return $failed
}

# A shared test server by hand, until Ctrl-C: for running some tests on a
# stack, e.g. eval "$(…)" in another shell, then go test ./store/.
serve() {
  case ${1:-} in mysql|mariadb) ;; *) echo "usage: $0 server mysql|mariadb" >&2; exit 2 ;; esac
  build >&2
  trap stop_db EXIT
  trap 'exit 130' INT TERM
  start_db "$1" >&2
  echo "export WPSIDECAR_STACKS='$stacks' WPSIDECAR_TEST_SERVER=$1 WPSIDECAR_TEST_DSN='root@tcp(127.0.0.1:$db_port)/'"
  wait "$db_pid" || true
}

case ${1:-} in
  build) build ;;
  chroot) build_root; unlock ;;
  test) run_tests ;;
  server) serve "${2:-}" ;;
  env) print_env ;;
  *) echo "usage: $0 build|chroot|test|server mysql|mariadb|env" >&2; exit 2 ;;
esac

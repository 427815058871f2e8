# Sourced by the benchmark scripts: builds the sidecar, stands up the bench
# WordPress (scripts/wordpress.sh) and starts the sidecar in front of it;
# stops both on exit. Sets WP_* (see wordpress.sh env), SIDECAR_PORT, STATE.
# SIDECAR_GOMAXPROCS sets the sidecar's GOMAXPROCS by hand; SIDECAR_ARGS
# (an array) adds flags.
: "${STATE:=.bench}"
# The sidecars run the benchmark's settings only: none of the shell's
# WPSIDECAR_* variables (a site's settings, or the tests' own).
for var in $(compgen -e | grep '^WPSIDECAR_' || true); do unset "$var"; done
export WP_PORT=${WP_PORT:-18081} WP_PROXY_PORT=${WP_PROXY_PORT:-18082}
SIDECAR_PORT=${SIDECAR_PORT:-18080}
export WP_SITEURL="http://127.0.0.1:$SIDECAR_PORT" WP_DB_NAME=${WP_DB_NAME:-wpsidecar_bench}

command -v wrk >/dev/null || { echo "bench: wrk missing: run scripts/install-deps.sh" >&2; exit 1; }
mkdir -p "$STATE"
go build -o "$STATE/wpsidecar" ./cmd/wpsidecar
sidecar_pid=""
bench_cleanup() {
  if [ -n "$sidecar_pid" ]; then kill "$sidecar_pid" 2>/dev/null && wait "$sidecar_pid" 2>/dev/null || true; fi
  scripts/wordpress.sh stop "$STATE/wp"
}
trap bench_cleanup EXIT
scripts/wordpress.sh start "$STATE/wp" > "$STATE/wp.env"
# shellcheck disable=SC1091
. "$STATE/wp.env"

env ${SIDECAR_GOMAXPROCS:+GOMAXPROCS=$SIDECAR_GOMAXPROCS} "$STATE/wpsidecar" --listen "127.0.0.1:$SIDECAR_PORT" \
  --admin-listen 127.0.0.1:0 --upstream "$WP_URL" --wp-config "$WP_CONFIG" ${SIDECAR_ARGS[@]+"${SIDECAR_ARGS[@]}"} > "$STATE/sidecar.log" 2>&1 &
sidecar_pid=$!
for _ in $(seq 1 50); do curl -fso /dev/null "$WP_SITEURL/static.txt" && break; sleep 0.1; done

# bench_start_ref FLAGS...: starts scripts/benchref (one MariaDB point read
# per request, the machine's floor; FLAGS say which) on BENCHREF_PORT.
bench_start_ref() {
  go build -o "$STATE/benchref" ./scripts/benchref
  : "${BENCHREF_PORT:=18095}"
  "$STATE/benchref" -listen "127.0.0.1:$BENCHREF_PORT" -dsn "${BENCHREF_DSN:-root@tcp(127.0.0.1:3306)/$WP_DB_NAME}" "$@" &
  ref_pid=$!
  trap 'kill $ref_pid 2>/dev/null; bench_cleanup' EXIT
  for _ in $(seq 1 50); do curl -fso /dev/null "http://127.0.0.1:$BENCHREF_PORT/" && break; sleep 0.1; done
}

# shellcheck source=scripts/bench-groups.sh
. scripts/bench-groups.sh

# bench_run AUTH_HEADER NAME|URL[|HEADER[|STATUS]]...: checks that every
# target answers STATUS (default 200) when sent HEADER as well, then runs
# wrk (2 threads, 32 connections) on each in turn, ROUNDS times, into
# $STATE/results.txt (name|req/s|p99 ms). Stops at any 4xx/5xx answer.
bench_run() {
  local auth=$1 t name url header want out rps p99 non2xx code round
  shift
  for t in "$@"; do
    IFS='|' read -r name url header want <<<"$t"
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "$auth" ${header:+-H "$header"} "$url")
    [ "$code" = "${want:-200}" ] || { echo "bench: $name answered $code, not ${want:-200}" >&2; exit 1; }
  done
  results=$STATE/results.txt
  : > "$results"
  echo "machine: $(nproc) cores; wrk -t2 -c32, $DURATION runs, $ROUNDS rounds"
  for round in $(seq 1 "$ROUNDS"); do
    for t in "$@"; do
      IFS='|' read -r name url header want <<<"$t"
      out=$(wrk -t2 -c32 -d"$DURATION" --latency -H "$auth" ${header:+-H "$header"} "$url")
      rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
      # wrk prints 850.00us, 12.34ms or 1.02s; kept in ms so they sort.
      p99=$(awk '$1=="99%" {v=$2; u=v; gsub(/[0-9.]/,"",u); sub(/[a-z]+$/,"",v)
        printf "%.2f", (u=="us" ? v/1000 : (u=="s" ? v*1000 : v))}' <<<"$out")
      # wrk counts 4xx and 5xx here (its label says "Non-2xx or 3xx").
      non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
      [ -z "$non2xx" ] || { echo "bench: $name: $non2xx error answers" >&2; exit 1; }
      echo "$name|$rps|$p99" >> "$results"
      printf 'round %d  %-20s %10s req/s  p99 %s ms\n' "$round" "$name" "$rps" "$p99"
      bench_settle
    done
  done
}

# bench_settle waits (at most 20 s) until the machine is quiet again: what
# a target left running when wrk stopped (PHP finishing a backlog of
# requests) must not run during the next target's measurement. Quiet: at
# least 90% of the CPU idle over 200 ms.
bench_settle() {
  local i a b
  for i in $(seq 1 100); do
    a=$(awk '/^cpu / {print $5+$6, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
    sleep 0.2
    b=$(awk '/^cpu / {print $5+$6, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN {split(a, x, " "); split(b, y, " "); exit !((y[1]-x[1]) >= 0.9*(y[2]-x[2]))}' && return
  done
  # Another process keeps the machine busy: measure anyway (the rounds
  # alternate, so each target shares the load), but say so.
  echo "bench: the machine did not quiet down within 20 s (another process is busy); measuring anyway" >&2
}

bench_median() { grep "^$1|" "$results" | cut -d'|' -f2 | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
bench_worst_p99() { grep "^$1|" "$results" | cut -d'|' -f3 | sort -g | tail -n1; }

# bench_report NAME: NAME's median against wordpress-settings' (the bar:
# at least 30 times, p99 under 10 ms).
bench_report() {
  local wp
  wp=$(bench_median wordpress-settings)
  printf '%-14s median %9.1f req/s = %5.1fx WordPress (%s req/s); worst p99 %s ms   (bar: >= 30x, p99 < 10ms)\n' \
    "$1" "$(bench_median "$1")" "$(awk -v a="$(bench_median "$1")" -v b="$wp" 'BEGIN {print a/b}')" "$wp" "$(bench_worst_p99 "$1")"
}

bench_report_ref() {
  printf 'bare point read median %9.1f req/s; worst p99 %s ms   (the floor: one MariaDB read, nothing else)\n' \
    "$(bench_median bare-point-read)" "$(bench_worst_p99 bare-point-read)"
}

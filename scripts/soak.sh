#!/usr/bin/env bash
# The soak-and-faults harness (scripts/soak/soak_test.go): a mixed load
# through a loopback balancer over two sidecar instances in front of a real
# WordPress, for DURATION, while MariaDB, PHP and Redis of its own are
# stopped and started, the instances reloaded (SIGHUP), their theme
# options configuration rewritten, and one of them stopped (SIGTERM) and
# started again, one fault every FAULT_EVERY. It reports per fault the
# statuses clients saw, the longest answer, the recovery after the
# dependency returned, lost and wrong answers and the sidecar's 500s, and
# the memory, goroutines and descriptors of the instance never stopped;
# with README=1 it writes the table into docs/operations.md. Exits non-zero when a
# bar is missed (any lost or wrong answer or sidecar 500, a recovery over
# 1 s).
#
# Then (scripts/soak/purges_test.go) --cache-rest wp/v2 behind a real
# Varnish keeping answers for an hour, PURGE_DURATION of readers through
# both and writers by SQL, PHP and bulk statements, with the feed's grants
# revoked for a while, the purge target hung for a while and the leading
# instance killed (a second one takes over the purges); it prints the
# count of URLs that differ from PHP's own answers once the load stops,
# which must be 0.
#
#   scripts/soak.sh                 # DURATION=10m FAULT_EVERY=25s WORKERS=12 README=1 PURGE_DURATION=2m
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DURATION:=10m}" "${FAULT_EVERY:=25s}" "${WORKERS:=12}" "${README:=1}" "${PURGE_DURATION:=2m}"
readme=()
[ "$README" = 1 ] && readme=(-readme "$PWD/docs/operations.md")
exec go test -tags soak -count=1 -timeout 2h -run TestSoak -v ./scripts/soak \
  -duration "$DURATION" -fault-every "$FAULT_EVERY" -workers "$WORKERS" -purge-duration "$PURGE_DURATION" "${readme[@]}"

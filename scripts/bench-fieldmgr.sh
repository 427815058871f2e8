#!/usr/bin/env bash
# fieldmgr/v1 benchmark: GET /field-groups (20 groups of 10 fields) and
# GET /field-groups/{id} through the sidecar, authenticated with an
# application password, against WordPress's own authenticated
# GET /wp-json/wp/v2/settings through the same sidecar, in the same run,
# alternating. Bar: at least 30 times WordPress's requests/s, p99 < 10 ms.
# Also measured, as the machine's floor: scripts/benchref, a bare Go handler
# doing one MariaDB point read per request (no auth, no routing, no log).
#
#   scripts/bench-fieldmgr.sh          # ROUNDS=3 DURATION=5s
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ROUNDS:=3}" "${DURATION:=5s}"
# shellcheck source=scripts/bench-site.sh
. scripts/bench-site.sh

pw=$(WP_HTTP_HOST="127.0.0.1:$SIDECAR_PORT" php scripts/wp/app-password.php "$WP_DOCROOT" "$WP_ADMIN_USER" bench "$STATE/bench-app-password.json")
auth="Authorization: Basic $(printf '%s:%s' "$WP_ADMIN_USER" "$pw" | base64 -w0)"
api="$WP_SITEURL/wp-json/fieldmgr/v1"

bench_make_groups "$auth" "$api"

bench_start_ref -key bench_7

targets=(
  "bare-point-read|http://127.0.0.1:$BENCHREF_PORT/"
  "wordpress-settings|$WP_SITEURL/wp-json/wp/v2/settings"
  "field-groups|$api/field-groups"
  "field-group|$api/field-groups/bench_7"
)
bench_run "$auth" "${targets[@]}"
for name in field-groups field-group; do bench_report "$name"; done
bench_report_ref

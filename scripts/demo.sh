#!/usr/bin/env bash
# The README's "run it" command: a local WordPress (Debian's packages, on
# loopback) with the sidecar in front, on http://127.0.0.1:8080/.
# State lives in .demo/ and is reused by the next run; Ctrl-C stops
# everything this script started.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"
: "${DEMO_PORT:=8080}" "${DEMO_STATE:=.demo}"
export WP_SITEURL="http://127.0.0.1:$DEMO_PORT" WP_PORT=${WP_PORT:-8081} WP_PROXY_PORT=${WP_PROXY_PORT:-8082}

scripts/install-deps.sh
mkdir -p "$DEMO_STATE"
go build -o "$DEMO_STATE/wpsidecar" ./cmd/wpsidecar
sidecar_pid=""
cleanup() {
  trap - EXIT INT TERM
  if [ -n "$sidecar_pid" ]; then kill "$sidecar_pid" 2>/dev/null || true; wait "$sidecar_pid" 2>/dev/null || true; fi
  scripts/wordpress.sh stop "$DEMO_STATE/wp"
  echo "demo stopped"
}
trap cleanup EXIT
trap 'cleanup; exit 0' INT TERM
scripts/wordpress.sh start "$DEMO_STATE/wp" > "$DEMO_STATE/wp.env"
# shellcheck disable=SC1091
. "$DEMO_STATE/wp.env"

app_password=$(WP_HTTP_HOST="127.0.0.1:$DEMO_PORT" php scripts/wp/app-password.php "$WP_DOCROOT" "$WP_ADMIN_USER" demo "$DEMO_STATE/app-password.json")


"$DEMO_STATE/wpsidecar" --listen "127.0.0.1:$DEMO_PORT" --upstream "$WP_URL" --wp-config "$WP_CONFIG" \
  --themeopts-config scripts/themeopts-demo.json --log-format console > "$DEMO_STATE/sidecar.log" 2>&1 &
sidecar_pid=$!
for _ in $(seq 1 50); do curl -fso /dev/null "$WP_SITEURL/" && break; sleep 0.1; done

# Demo field groups, through the sidecar's own API (a second run finds them).
auth=(-u "$WP_ADMIN_USER:$app_password" -H 'Content-Type: application/json')
curl -s -o /dev/null "${auth[@]}" "$WP_SITEURL/wp-json/fieldmgr/v1/field-groups" -d '{"group_key":"product_details","title":"Product details",
  "config":{"type":"post","post_type":"post","position":"normal","fields":{"subtitle":{"type":"text","label":"Subtitle","maxlength":120},
  "price":{"type":"number","label":"Price","min":0,"step":0.01},"hero":{"type":"image","label":"Hero image","return_format":"url"}}}}'
curl -s -o /dev/null "${auth[@]}" "$WP_SITEURL/wp-json/fieldmgr/v1/field-groups" -d '{"group_key":"author_profile","title":"Author profile",
  "config":{"type":"user","fields":{"twitter":{"type":"url","label":"Twitter"},"bio":{"type":"wysiwyg","label":"Short bio","toolbar":"basic"}}}}'

cat <<EOF

  WordPress behind wpsidecar: $WP_SITEURL/
  Admin:                      $WP_SITEURL/wp-admin/   user $WP_ADMIN_USER, password $WP_ADMIN_PASSWORD
  Application password:       $WP_ADMIN_USER / $app_password
  Sidecar log:                $DEMO_STATE/sidecar.log
  Health and metrics:         http://127.0.0.1:9090/readyz   http://127.0.0.1:9090/metrics

  Try the field groups (answered by the sidecar from MySQL):
    curl -s -u '$WP_ADMIN_USER:$app_password' $WP_SITEURL/wp-json/fieldmgr/v1/field-groups
    curl -s -u '$WP_ADMIN_USER:$app_password' $WP_SITEURL/wp-json/fieldmgr/v1/field-groups/product_details/toggle -X POST
  and the theme options (scripts/themeopts-demo.json; PHP's get_option('demo_theme_options') sees the same):
    curl -s -u '$WP_ADMIN_USER:$app_password' $WP_SITEURL/wp-json/themeopts/v1/options -H 'Content-Type: application/json' -d '{"accent_color":"#ff0066","layout":"boxed"}'
    curl -s -u '$WP_ADMIN_USER:$app_password' $WP_SITEURL/wp-json/themeopts/v1/options
    curl -s -u '$WP_ADMIN_USER:$app_password' $WP_SITEURL/wp-json/themeopts/v1/dev-panel
  and WordPress itself, through the sidecar:
    curl -s '$WP_SITEURL/wp-json/wp/v2/posts?per_page=1&_fields=id,title'

  Ctrl-C stops everything.
EOF
wait "$sidecar_pid"

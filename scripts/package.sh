#!/usr/bin/env bash
# Builds the Debian packages (amd64 and arm64) into DIR (default dist/):
#   scripts/package.sh            # version from git describe, else 0.0.0
#   VERSION=1.2.3 scripts/package.sh
#   scripts/package.sh DIR        # e.g. a test's temporary folder
# The binaries are static (CGO off), stamped with version and commit; nfpm
# runs as a Go tool of this module: nothing beyond the module proxy.
set -euo pipefail
# DIR as the caller named it, before moving to the repository.
out=$(realpath -m "${1:-$(dirname "$0")/../dist}")
cd "$(dirname "$0")/.."
: "${VERSION:=$(git describe --tags --match 'v[0-9]*' 2>/dev/null | sed 's/^v//' || true)}"
: "${VERSION:=0.0.0}"
COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
mkdir -p "$out"
for arch in ${ARCHES:-amd64 arm64}; do
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath \
    -ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT" -o "$out/wpsidecar" ./cmd/wpsidecar
  BINARY=$out/wpsidecar VERSION=$VERSION ARCH=$arch go tool nfpm package --config deploy/debian/nfpm.yaml --packager deb --target "$out/"
done
ls "$out"/*.deb

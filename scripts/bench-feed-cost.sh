#!/usr/bin/env bash
# What noticing changes costs the database while nothing changes: the CPU
# time and statements per minute of a private mariadbd (binary log on, 200
# field groups of 4 KB) with no sidecar, a polling sidecar (every 2 s) and a
# sidecar following the binary log, measured one after the other in one run.
#
#   scripts/bench-feed-cost.sh              # ROUNDS=30 two-second intervals per mode: about 3½ minutes
#   ROUNDS=60 scripts/bench-feed-cost.sh
# Needs: MariaDB's server binaries (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ROUNDS:=30}"
go test -tags e2e -run '^$' -bench ChangeDetectionDatabaseCost -benchtime "${ROUNDS}x" ./cmd/wpsidecar/

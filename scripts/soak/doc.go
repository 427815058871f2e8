// Package soak is the soak-and-faults harness (soak_test.go, build tag
// soak): a mixed load through a loopback balancer over two sidecar
// instances in front of a real WordPress, with MariaDB, PHP and Redis of
// its own stopped and started on a schedule, reloads, a rewritten
// configuration and SIGTERMs; it reports per fault what clients saw and
// writes the table into docs/operations.md. Run it with scripts/soak.sh.
package soak

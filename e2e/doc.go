// Package e2e runs the sidecar in front of a real WordPress (Debian's
// packages, PHP-FPM and nginx on loopback) and checks what a browser or a
// REST client sees through it. Its tests build only with -tags e2e (make
// test sets it), so that go test ./... needs nothing but MariaDB and Redis.
package e2e

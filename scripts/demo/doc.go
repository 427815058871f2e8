// Package demo holds the test of `make demo` (scripts/demo.sh), the
// README's first command, run as a newcomer runs it: demo_test.go, build
// tag e2e (make test sets it).
package demo

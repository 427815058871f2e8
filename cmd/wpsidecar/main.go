// Command wpsidecar is a reverse proxy in front of WordPress that answers
// the fieldmgr/v1 and themeopts/v1 REST namespaces from MySQL and passes
// every other request to PHP.
package main

import (
	// Site time zones are looked up by name; the binary carries the database
	// for hosts (distroless) that have none.
	_ "time/tzdata"

	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/wpsidecar/wpsidecar/cmd/command"
	"github.com/wpsidecar/wpsidecar/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "wpsidecar:", err)
		if config.IsConfigError(err) || command.IsUsageError(err) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

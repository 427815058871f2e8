package main

import (
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/rs/zerolog"
)

// version and commit are set when a release is built
// (-ldflags "-X main.version=… -X main.commit=…", scripts/package.sh).
var (
	version = "dev"
	commit  = ""
)

// versionLine is what --version prints: the version, the commit it was
// built from (the build's VCS stamp when not set) and the Go version.
func versionLine() string {
	c := commit
	if c == "" {
		c = "unknown"
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, s := range info.Settings {
				if s.Key == "vcs.revision" && s.Value != "" {
					c = s.Value
				}
			}
		}
	}
	if len(c) > 12 {
		c = c[:12]
	}
	return "wpsidecar " + version + " (commit " + c + ", " + runtime.Version() + ")"
}

// notifySystemd tells systemd (Type=notify, deploy/systemd) the service's
// state: ready once it listens, stopping once the signal came. Nothing is
// sent when NOTIFY_SOCKET is unset (not run by systemd).
func notifySystemd(logger zerolog.Logger, states ...string) {
	if _, err := daemon.SdNotify(false, strings.Join(states, "\n")); err != nil {
		logger.Warn().Err(err).Msg("systemd notify failed")
	}
}

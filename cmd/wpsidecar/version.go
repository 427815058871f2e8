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
// built from and when that was committed, and the Go version.
func versionLine() string {
	info, _ := debug.ReadBuildInfo()
	return versionOf(version, commit, info)
}

// versionOf is the version line of a build: its commit is the one set at
// link time (a release), else the one Go stamped from the checkout it was
// built in (info's vcs settings: the commit, its time, and whether files
// were changed since), else "unknown" (a build outside a checkout, or with
// -buildvcs=false).
func versionOf(version, commit string, info *debug.BuildInfo) string {
	vcs := map[string]string{}
	if info != nil {
		for _, s := range info.Settings {
			vcs[s.Key] = s.Value
		}
	}
	c := commit
	if c == "" {
		c = vcs["vcs.revision"]
	}
	if c == "" {
		return "wpsidecar " + version + " (commit unknown, " + runtime.Version() + ")"
	}
	if len(c) > 12 {
		c = c[:12]
	}
	if commit == "" && vcs["vcs.time"] != "" {
		c += " of " + vcs["vcs.time"]
	}
	if commit == "" && vcs["vcs.modified"] == "true" {
		c += ", with changes not committed"
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

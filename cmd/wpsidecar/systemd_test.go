package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
)

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{arg}, nil, &out, io.Discard, nil); err != nil {
			t.Fatal(err)
		}
		// A test binary carries no VCS stamp.
		if want := "wpsidecar dev (commit unknown, " + runtime.Version() + ")\n"; out.String() != want {
			t.Errorf("%s: %q, want %q", arg, out.String(), want)
		}
	}
}

// TestVersionOf: the commit set at link time wins; else Go's VCS stamp
// gives the commit, its time and whether the checkout had changes.
func TestVersionOf(t *testing.T) {
	stamp := func(kv ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{}
		for i := 0; i < len(kv); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return info
	}
	stamped := stamp("vcs", "git", "vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-12-07T17:20:00Z", "vcs.modified", "false")
	gov := runtime.Version()
	for _, c := range []struct {
		name, version, commit string
		info                  *debug.BuildInfo
		want                  string
	}{
		{"release", "1.2.3", "fedcba9876543210", stamped, "wpsidecar 1.2.3 (commit fedcba987654, " + gov + ")"},
		{"checkout", "dev", "", stamped, "wpsidecar dev (commit 0123456789ab of 2026-12-07T17:20:00Z, " + gov + ")"},
		{"changed checkout", "dev", "", stamp("vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-12-07T17:20:00Z", "vcs.modified", "true"),
			"wpsidecar dev (commit 0123456789ab of 2026-12-07T17:20:00Z, with changes not committed, " + gov + ")"},
		{"no stamp", "dev", "", stamp("-trimpath", "true"), "wpsidecar dev (commit unknown, " + gov + ")"},
		{"no build info", "dev", "", nil, "wpsidecar dev (commit unknown, " + gov + ")"},
	} {
		if got := versionOf(c.version, c.commit, c.info); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersion_Checkout: the sidecar built from this checkout as the README
// and the demo build it says the commit checked out and its time.
func TestVersion_Checkout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sidecar; skipped under -short")
	}
	head, err := exec.Command("git", "log", "-1", "--format=%H %cI").Output()
	if err != nil {
		t.Fatalf("git log: %v", err)
	}
	rev, when, _ := strings.Cut(strings.TrimSpace(string(head)), " ")
	at, err := time.Parse(time.RFC3339, when)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "wpsidecar")
	// GOFLAGS as a machine may set it (-buildvcs=false): the build's own
	// flag wins, as in the Makefile and the demo.
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^wpsidecar dev \(commit ` + rev[:12] + ` of ` + regexp.QuoteMeta(at.UTC().Format(time.RFC3339)) + `(, with changes not committed)?, ` + regexp.QuoteMeta(runtime.Version()) + `\)\n$`)
	if !want.Match(out) {
		t.Errorf("--version: %q, want %s", out, want)
	}
}

// TestRun_SystemdNotify: under systemd (NOTIFY_SOCKET), the sidecar says
// READY=1 once it listens and STOPPING=1 when the signal comes.
func TestRun_SystemdNotify(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	msgs := make(chan string, 8)
	go func() {
		b := make([]byte, 4096)
		for {
			n, _, err := conn.ReadFromUnix(b)
			if err != nil {
				return
			}
			msgs <- string(b[:n])
		}
	}()
	next := func(want string) {
		t.Helper()
		select {
		case m := <-msgs:
			if !strings.Contains(m, want) {
				t.Errorf("systemd was told %q, want %s", m, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("systemd was never told %s", want)
		}
	}
	tdb := testdb.New(t)
	args, env := sidecarArgs(t, tdb, "http://127.0.0.1:9")
	s := start(t, args, env)
	next("READY=1")
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	next("STOPPING=1")
}

// TestSystemdUnit: deploy/systemd/wpsidecar.service verifies with
// systemd-analyze (its ExecStart pointed at a built binary) and keeps the
// hardening it promises.
func TestSystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze: not found (Debian's systemd package: scripts/install-deps.sh)")
	}
	unit, err := os.ReadFile("../../deploy/systemd/wpsidecar.service")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "wpsidecar")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	local := strings.Replace(string(unit), "ExecStart=/usr/bin/wpsidecar", "ExecStart="+bin, 1)
	path := filepath.Join(dir, "wpsidecar.service")
	if err := os.WriteFile(path, []byte(local), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(analyze, "verify", path).CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "wpsidecar.service") {
			t.Errorf("systemd-analyze verify: %s", line)
		}
	}
	directives := map[string][]string{} // a directive may be given more than once
	sc := bufio.NewScanner(bytes.NewReader(unit))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.HasPrefix(k, "#") {
			directives[k] = append(directives[k], v)
		}
	}
	for k, v := range map[string]string{
		"Type": "notify", "DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"PrivateTmp": "yes", "PrivateDevices": "yes", "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes",
		"ProtectKernelLogs": "yes", "ProtectControlGroups": "yes", "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
		"RestrictNamespaces": "yes", "LockPersonality": "yes", "MemoryDenyWriteExecute": "yes", "SystemCallArchitectures": "native",
		"SystemCallFilter": "@system-service", "CapabilityBoundingSet": "", "Restart": "on-failure",
		"EnvironmentFile": "-/etc/default/wpsidecar", "ExecStart": "/usr/bin/wpsidecar", "TimeoutStopSec": "45s", "KillSignal": "SIGTERM",
	} {
		if got := directives[k]; !slices.Contains(got, v) {
			t.Errorf("%s=%q, want %q", k, got, v)
		}
	}
}

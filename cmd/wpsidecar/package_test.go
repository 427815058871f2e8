//go:build packaging

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
)

// TestPackaging_Debian: scripts/package.sh builds the .deb files; the
// amd64 one installs with dpkg in the Debian sid chroot of
// scripts/stacks.sh (make test-packaging builds it when missing), never on
// the machine: it runs (--version), holds the unit, the defaults and the
// recipes, starts nothing, keeps the defaults as a conffile, and removes
// and purges cleanly. The arm64 one says it is for arm64.
func TestPackaging_Debian(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("installing a package in the chroot needs root (make test-packaging; CI runs as root)")
	}
	root, err := filepath.Abs(filepath.Join(testdb.StacksDir(), "sid"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "usr/bin/dpkg")); err != nil {
		t.Fatalf("no Debian root to install the package in: make test-packaging builds it (scripts/stacks.sh chroot; WPSIDECAR_STACKS names where): %v", err)
	}
	in := func(args ...string) *exec.Cmd { return exec.Command("chroot", append([]string{root}, args...)...) }
	// The chroot is a build tree of its own: what a run cut short left
	// there goes (dpkg ignores purging a package it does not have).
	if out, err := in("dpkg", "--purge", "wpsidecar").CombinedOutput(); err != nil {
		t.Fatalf("dpkg --purge of an earlier run's package: %v\n%s", err, out)
	}
	// The packages are built into a folder of the chroot's /tmp, which
	// dpkg there reads them from; removed at the end.
	dist, err := os.MkdirTemp(filepath.Join(root, "tmp"), "wpsidecar-package.")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dist) })
	inDist := "/tmp/" + filepath.Base(dist)
	build := exec.Command("bash", "scripts/package.sh", dist)
	build.Dir = "../.."
	build.Env = append(os.Environ(), "VERSION=9.8.7")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("package.sh: %v\n%s", err, out)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		info, err := in("dpkg-deb", "-f", inDist+"/wpsidecar_9.8.7_"+arch+".deb", "Architecture", "Version", "Package").Output()
		if err != nil || string(info) != "Architecture: "+arch+"\nVersion: 9.8.7\nPackage: wpsidecar\n" {
			t.Errorf("%s: %q %v", arch, info, err)
		}
	}
	t.Cleanup(func() { in("dpkg", "--purge", "wpsidecar").Run() })
	if out, err := in("dpkg", "-i", inDist+"/wpsidecar_9.8.7_amd64.deb").CombinedOutput(); err != nil {
		t.Fatalf("dpkg -i: %v\n%s", err, out)
	}
	bin := filepath.Join(root, "usr/bin/wpsidecar")
	// Installing starts nothing: no process runs the installed binary.
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, e := range exes {
		if p, _ := os.Readlink(e); p == bin {
			t.Errorf("%s runs %s after installing", filepath.Dir(e), p)
		}
	}
	out, err := in("/usr/bin/wpsidecar", "--version").Output()
	if err != nil || !regexp.MustCompile(`^wpsidecar 9\.8\.7 \(commit [0-9a-f]+, go[0-9.]+\)\n$`).Match(out) {
		t.Errorf("--version: %q %v", out, err)
	}
	files, _ := in("dpkg", "-L", "wpsidecar").Output()
	for _, f := range []string{"/usr/bin/wpsidecar", "/lib/systemd/system/wpsidecar.service", "/etc/default/wpsidecar",
		"/usr/share/doc/wpsidecar/examples/nginx/wpsidecar.conf", "/usr/share/doc/wpsidecar/examples/apache/wpsidecar.conf",
		"/usr/share/doc/wpsidecar/examples/caddy/wpsidecar.caddy", "/usr/share/doc/wpsidecar/README.md",
		"/usr/share/doc/wpsidecar/CHANGELOG.md"} {
		if !strings.Contains(string(files), f+"\n") {
			t.Errorf("%s not installed:\n%s", f, files)
		}
	}
	if conf, _ := in("dpkg-query", "-W", "-f", "${Conffiles}", "wpsidecar").Output(); !strings.Contains(string(conf), "/etc/default/wpsidecar") {
		t.Errorf("/etc/default/wpsidecar is not a conffile: %q", conf)
	}
	if out, err := in("dpkg", "-r", "wpsidecar").CombinedOutput(); err != nil {
		t.Fatalf("dpkg -r: %v\n%s", err, out)
	}
	if _, err := os.Stat(bin); err == nil {
		t.Error("/usr/bin/wpsidecar left after removal")
	}
	defaults := filepath.Join(root, "etc/default/wpsidecar")
	if _, err := os.Stat(defaults); err != nil {
		t.Errorf("/etc/default/wpsidecar not kept on removal: %v", err)
	}
	if out, err := in("dpkg", "--purge", "wpsidecar").CombinedOutput(); err != nil {
		t.Fatalf("dpkg --purge: %v\n%s", err, out)
	}
	if _, err := os.Stat(defaults); err == nil {
		t.Error("/etc/default/wpsidecar left after purging")
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDebianPackage: scripts/package.sh builds the .deb files; the amd64
// one installs with dpkg, runs (--version), holds the unit, the defaults
// and the recipes, starts nothing, and removes cleanly. The arm64 one says
// it is for arm64.
func TestDebianPackage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("installing a package needs root (CI runs as root; scripts/install-deps.sh)")
	}
	if _, err := exec.LookPath("dpkg"); err != nil {
		t.Fatal("dpkg: not found")
	}
	if out, err := exec.Command("dpkg-query", "-W", "wpsidecar").CombinedOutput(); err == nil {
		t.Fatalf("a wpsidecar package is installed already; the test will not touch it: %s", out)
	}
	dist := t.TempDir()
	build := exec.Command("bash", "scripts/package.sh")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "VERSION=9.8.7")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("package.sh: %v\n%s", err, out)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		src := filepath.Join("../../dist", "wpsidecar_9.8.7_"+arch+".deb")
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dist, filepath.Base(src)), b, 0o644)
		os.Remove(src)
		info, err := exec.Command("dpkg-deb", "-f", filepath.Join(dist, filepath.Base(src)), "Architecture", "Version", "Package").Output()
		if err != nil || string(info) != "Architecture: "+arch+"\nVersion: 9.8.7\nPackage: wpsidecar\n" {
			t.Errorf("%s: %q %v", arch, info, err)
		}
	}
	deb := filepath.Join(dist, "wpsidecar_9.8.7_amd64.deb")
	t.Cleanup(func() { exec.Command("dpkg", "--purge", "wpsidecar").Run() })
	if out, err := exec.Command("dpkg", "-i", deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg -i: %v\n%s", err, out)
	}
	out, err := exec.Command("/usr/bin/wpsidecar", "--version").Output()
	if err != nil || !regexp.MustCompile(`^wpsidecar 9\.8\.7 \(commit [0-9a-f]+, go[0-9.]+\)\n$`).Match(out) {
		t.Errorf("--version: %q %v", out, err)
	}
	files, _ := exec.Command("dpkg", "-L", "wpsidecar").Output()
	for _, f := range []string{"/usr/bin/wpsidecar", "/lib/systemd/system/wpsidecar.service", "/etc/default/wpsidecar",
		"/usr/share/doc/wpsidecar/examples/nginx/wpsidecar.conf", "/usr/share/doc/wpsidecar/examples/apache/wpsidecar.conf",
		"/usr/share/doc/wpsidecar/examples/caddy/wpsidecar.caddy", "/usr/share/doc/wpsidecar/README.md"} {
		if !strings.Contains(string(files), f+"\n") {
			t.Errorf("%s not installed:\n%s", f, files)
		}
	}
	if conf, _ := exec.Command("dpkg-query", "-W", "-f", "${Conffiles}", "wpsidecar").Output(); !strings.Contains(string(conf), "/etc/default/wpsidecar") {
		t.Errorf("/etc/default/wpsidecar is not a conffile: %q", conf)
	}
	if out, err := exec.Command("dpkg", "-r", "wpsidecar").CombinedOutput(); err != nil {
		t.Fatalf("dpkg -r: %v\n%s", err, out)
	}
	if _, err := os.Stat("/usr/bin/wpsidecar"); err == nil {
		t.Error("/usr/bin/wpsidecar left after removal")
	}
}

package config

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestIsDropin_NotBlockedByAPipe: an object-cache.php that is a FIFO or a
// device is no drop-in, and reading it does not hang start-up.
func TestIsDropin_NotBlockedByAPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "object-cache.php")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real.php")
	os.WriteFile(real, []byte("<?php // "+dropinMark), 0o600)
	for path, want := range map[string]bool{fifo: false, "/dev/zero": false, dir: false, real: true} {
		if got := isDropin(path); got != want {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
}

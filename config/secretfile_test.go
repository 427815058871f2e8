package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoad_SecretFileBounds: a NAME_FILE variable names a regular file of
// at most 1 MiB, and at most 64 of them are read.
func TestLoad_SecretFileBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 2<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	// A named pipe nothing writes to: opening it to read would block.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var many []string
	for _, s := range settings[:70] {
		many = append(many, EnvName(s.name)+"_FILE="+small)
	}
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"/dev/zero", []string{"WORDPRESS_DB_PASSWORD_FILE=/dev/zero"}, "WORDPRESS_DB_PASSWORD_FILE: read /dev/zero: a device, not a regular file"},
		{"a named pipe", []string{"WORDPRESS_DB_PASSWORD_FILE=" + fifo}, "WORDPRESS_DB_PASSWORD_FILE: read " + fifo + ": a named pipe (FIFO), not a regular file"},
		{"a directory", []string{"WORDPRESS_DB_PASSWORD_FILE=" + dir}, "a directory, not a file"},
		{"2 MiB", []string{"WORDPRESS_DB_PASSWORD_FILE=" + big}, "WORDPRESS_DB_PASSWORD_FILE: read " + big + ": larger than 1 MiB"},
		{"70 files", many, "_FILE: more than 64 files read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			_, err = load(t, []string{"--upstream=http://php"}, tt.env...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

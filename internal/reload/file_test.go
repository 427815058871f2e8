package reload

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rs/zerolog"
)

// TestOpen_OnlyRegularFiles: a configuration file that is a pipe, a device
// or a directory is refused at once (a FIFO used to block start-up, deaf
// to SIGTERM; /dev/zero to fill memory), and so is one past the bound.
func TestOpen_OnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, maxFileBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte("x"), 0o600)
	parse := func(b []byte) (*string, error) { s := string(b); return &s, nil }
	loaded := func(_ *string, e *zerolog.Event) *zerolog.Event { return e }
	for path, want := range map[string]string{
		fifo:        "test file: read " + fifo + ": a named pipe (FIFO), not a regular file",
		"/dev/zero": "test file: read /dev/zero: a device, not a regular file",
		dir:         "test file: read " + dir + ": a directory, not a file",
		big:         "test file: read " + big + ": larger than 8 MiB",
		good:        "",
	} {
		done := make(chan error, 1)
		go func() { _, err := Open(path, "test file", parse, loaded, zerolog.Nop()); done <- err }()
		err := <-done // a blocked open would hang the test here: go test's timeout fails it
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}

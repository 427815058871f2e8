package regularfile

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f, failing the test when it blocks (a FIFO opened to read
// without O_NONBLOCK waits for a writer forever).
func within(t *testing.T, f func() ([]byte, error)) ([]byte, error) {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() { b, err := f(); done <- result{b, err} }()
	select {
	case r := <-done:
		return r.b, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("the read blocks")
		return nil, nil
	}
}

// files makes, in a new directory, a file of every kind Read refuses and
// two it reads (one through a link), and gives the directory.
func files(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "small"), []byte("0123456789"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "big"), make([]byte, 11), 0o600))
	must(os.WriteFile(filepath.Join(dir, "mib"), make([]byte, 1<<20+1), 0o600))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	must(os.Mkdir(filepath.Join(dir, "dir"), 0o700))
	must(os.Symlink("small", filepath.Join(dir, "link")))
	must(os.Symlink("/dev/null", filepath.Join(dir, "null")))
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	must(err)
	t.Cleanup(func() { l.Close() })
	return dir
}

// TestRead: a regular file within the limit is read, through a link to it
// too; a pipe, a device, a directory, a socket and a file over the limit
// are refused at once, named and said why.
func TestRead(t *testing.T) {
	dir := files(t)
	for _, c := range []struct {
		name  string
		limit int64
		want  string // the error ("" none)
	}{
		{"small", 10, ""},
		{"link", 10, ""},
		{"big", 10, "read DIR/big: larger than 10 bytes"},
		{"mib", 1 << 20, "read DIR/mib: larger than 1 MiB"},
		{"fifo", 10, "read DIR/fifo: a named pipe (FIFO), not a regular file"},
		{"dir", 10, "read DIR/dir: a directory, not a file"},
		{"sock", 10, "read DIR/sock: a socket, not a regular file"},
		{"null", 10, "read DIR/null: a device, not a regular file"},
		{"none", 10, "stat DIR/none: no such file or directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := within(t, func() ([]byte, error) { return Read(filepath.Join(dir, c.name), c.limit) })
			want := strings.ReplaceAll(c.want, "DIR", dir)
			switch {
			case want == "" && (err != nil || string(b) != "0123456789"):
				t.Errorf("%q, %v", b, err)
			case want != "" && (err == nil || err.Error() != want):
				t.Errorf("%v, want %s", err, want)
			}
		})
	}
	if _, err := Read("/dev/zero", 10); err == nil || err.Error() != "read /dev/zero: a device, not a regular file" {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "none"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file that is not there: %v, not fs.ErrNotExist", err)
	}
}

// TestReadIn: under a root a symbolic link is refused, not followed (even
// to a file Read would read), and so is what Read refuses.
func TestReadIn(t *testing.T) {
	dir := files(t)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, c := range []struct{ name, want string }{
		{"small", ""},
		{"link", "read DIR/link: a symbolic link: not followed"},
		{"null", "read DIR/null: a symbolic link: not followed"},
		{"big", "read DIR/big: larger than 10 bytes"},
		{"fifo", "read DIR/fifo: a named pipe (FIFO), not a regular file"},
		{"dir", "read DIR/dir: a directory, not a file"},
		{"sock", "read DIR/sock: a socket, not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := within(t, func() ([]byte, error) { return ReadIn(root, c.name, 10) })
			want := strings.ReplaceAll(c.want, "DIR", dir)
			switch {
			case want == "" && (err != nil || string(b) != "0123456789"):
				t.Errorf("%q, %v", b, err)
			case want != "" && (err == nil || err.Error() != want):
				t.Errorf("%v, want %s", err, want)
			}
		})
	}
	if _, err := ReadIn(root, "none", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file that is not there: %v, not fs.ErrNotExist", err)
	}
}

// TestReadIn_Changed: a file opened that is not the one looked at (the
// name given to another between the two) is refused.
func TestReadIn_Changed(t *testing.T) {
	dir := files(t)
	f, err := os.Open(filepath.Join(dir, "small"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	other, _ := os.Lstat(filepath.Join(dir, "big"))
	if _, err := read(f, "small", other, 10); !errors.Is(err, ErrChanged) || err.Error() != "read small: changed while read" {
		t.Errorf("%v", err)
	}
}

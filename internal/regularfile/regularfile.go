// Package regularfile reads a file only when it is a regular file of
// bounded size, and never blocks doing so: the one reader of every file an
// operator or a site names (wp-config.php and what it includes, NAME_FILE
// secrets, the configuration files followed while running, an import's
// files).
//
// A named pipe would block the read (and the sidecar's start, deaf to
// SIGTERM) until something writes to it; a device such as /dev/zero never
// ends; a directory or a socket is no file to read. So the kind and the
// size are checked before the file is opened, again on what was opened
// (opened with O_NONBLOCK, so that a file swapped for a pipe in between
// cannot block the open), and the read stops past the limit whatever the
// file said its size was (a file can grow).
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Read reads the file name, following a symbolic link to it, when it is a
// regular file of at most limit bytes. Its errors are *fs.PathError (Op
// "read" for a file refused; those of os.Stat and os.Open otherwise).
func Read(name string, limit int64) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := Check(fi, limit); err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, name, nil, limit)
}

// ReadIn reads rel under root, as Read does, but refuses a symbolic link
// rather than follow it (root keeps the path's other elements inside it):
// what a directory given to the sidecar holds may not lead out of it. The
// file opened must be the one first looked at; the errors name the file as
// root's name joined with rel.
func ReadIn(root *os.Root, rel string, limit int64) ([]byte, error) {
	name := filepath.Join(root.Name(), filepath.FromSlash(rel))
	fi, err := root.Lstat(rel)
	if err != nil {
		return nil, err
	}
	if err := Check(fi, limit); err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, name, fi, limit)
}

// ErrChanged: the file opened is not the one looked at before.
var ErrChanged = errors.New("changed while read")

// read reads f (name, for errors) once it is checked again as opened, and
// when before is given, found to be the file it describes.
func read(f *os.File, name string, before fs.FileInfo, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if before != nil && !os.SameFile(before, fi) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrChanged}
	}
	if err := Check(fi, limit); err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: tooLarge(limit)}
	}
	return b, nil
}

// Check refuses, saying why, what fi says is not a regular file (a
// symbolic link included, as os.Lstat describes one) or is larger than
// limit bytes.
func Check(fi fs.FileInfo, limit int64) error {
	switch m := fi.Mode(); {
	case m.IsRegular():
	case m&fs.ModeSymlink != 0:
		return errors.New("a symbolic link: not followed")
	case m.IsDir():
		return errors.New("a directory, not a file")
	case m&fs.ModeNamedPipe != 0:
		return errors.New("a named pipe (FIFO), not a regular file")
	case m&fs.ModeSocket != 0:
		return errors.New("a socket, not a regular file")
	case m&fs.ModeDevice != 0:
		return errors.New("a device, not a regular file")
	default:
		return errors.New("not a regular file")
	}
	if fi.Size() > limit {
		return tooLarge(limit)
	}
	return nil
}

// tooLarge says a file is over limit, in MiB when limit is whole MiB.
func tooLarge(limit int64) error {
	if limit >= 1<<20 && limit%(1<<20) == 0 {
		return fmt.Errorf("larger than %d MiB", limit>>20)
	}
	return fmt.Errorf("larger than %d bytes", limit)
}

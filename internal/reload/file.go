// Package reload holds the configuration files the sidecar follows while
// it runs: read at start, again on SIGHUP and whenever they change.
package reload

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/internal/regularfile"
)

// File is a configuration file the sidecar follows while it runs (the
// theme options configuration, the public routes): checked at start, read
// again by Reload (on SIGHUP) and whenever it changes (Watch). A reload
// that fails is logged and the value in force stays: requests are never
// without one, and never wait for a reload.
type File[T any] struct {
	path   string
	what   string // for messages: "theme options configuration"
	parse  func([]byte) (*T, error)
	loaded func(*T, *zerolog.Event) *zerolog.Event // what the "loaded" line says
	log    zerolog.Logger

	cur   atomic.Pointer[T]
	mu    sync.Mutex
	stamp fileStamp
	hooks []func() // OnReload's
}

// Open reads and checks the file at path; an invalid file is an error.
// loaded adds what is worth saying of a loaded value to its log line.
func Open[T any](path, what string, parse func([]byte) (*T, error), loaded func(*T, *zerolog.Event) *zerolog.Event, log zerolog.Logger) (*File[T], error) {
	f := &File[T]{path: path, what: what, parse: parse, loaded: loaded, log: log}
	v, err := f.read()
	if err != nil {
		return nil, err
	}
	f.cur.Store(v)
	return f, nil
}

// maxFileBytes bounds a configuration file: far above any real one.
const maxFileBytes = 8 << 20

func (f *File[T]) read() (*T, error) {
	f.stamp = stampOf(f.path)
	// A pipe, a device or a directory is refused before it is read (a
	// FIFO would block start-up, and SIGTERM with it).
	b, err := regularfile.Read(f.path, maxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.what, err)
	}
	v, err := f.parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", f.what, f.path, err)
	}
	return v, nil
}

// Current is the value in force.
func (f *File[T]) Current() *T { return f.cur.Load() }

// Path is the file's path.
func (f *File[T]) Path() string { return f.path }

// Reload reads the file again.
func (f *File[T]) Reload() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, err := f.read()
	if err != nil {
		f.log.Error().Err(err).Msg(f.what + " not reloaded; the previous one stays in force")
		return err
	}
	f.cur.Store(v)
	f.loaded(v, f.log.Info().Str("path", f.path)).Msg(f.what + " loaded")
	for _, fn := range f.hooks {
		fn()
	}
	return nil
}

// OnReload has fn called after every reload that put a new value in
// force (what was made of the old one is then out of date).
func (f *File[T]) OnReload(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hooks = append(f.hooks, fn)
}

// Watch reloads the file whenever it changes (checked every interval; a
// rename over it counts), until ctx ends.
func (f *File[T]) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.mu.Lock()
			changed := stampOf(f.path) != f.stamp
			f.mu.Unlock()
			if changed {
				_ = f.Reload() // logged by Reload
			}
		}
	}
}

// fileStamp tells a changed file from an unchanged one, also when an
// editor replaces it by renaming.
type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
}

package exportdir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/internal/regularfile"
)

// Bounds of what export and import read and walk (docs/api.md §13): a
// directory's files are read only up to these, and a PHP value is walked
// only up to its budget, references expanded as serialize() writes them.
const (
	// MaxFileBytes bounds one file: twice MariaDB's default
	// max_allowed_packet, the largest row a default server takes.
	MaxFileBytes = 32 << 20
	// MaxDirBytes bounds all the files one directory's import reads.
	MaxDirBytes = 256 << 20
	// MaxFiles bounds the .json files of a namespace's folder.
	MaxFiles = 100_000
	// MaxValueBytes bounds a PHP value (a serialized config, an options
	// row) as serialize() would write it with its references expanded.
	MaxValueBytes = 32 << 20
)

// maxFiles and maxDirBytes are MaxFiles and MaxDirBytes (tests lower
// them).
var maxFiles, maxDirBytes int64 = MaxFiles, MaxDirBytes

// ErrTooLarge: a PHP value over MaxValueBytes once its references are
// expanded.
var ErrTooLarge = fmt.Errorf("over %d MiB with its references expanded", MaxValueBytes>>20)

// Budget walks PHP values within MaxValueBytes (shared by every value it
// walks), noticing objects and ctx's end: what a kind's import checks a
// value read from a file with.
type Budget struct {
	ctx    context.Context
	left   int64
	nodes  int
	object string // the class of the first object seen ("" none)
}

// NewBudget is a budget of MaxValueBytes, until ctx ends.
func NewBudget(ctx context.Context) *Budget { return &Budget{ctx: ctx, left: MaxValueBytes} }

// Object is the class of the first object the walks saw ("" none).
func (b *Budget) Object() string { return b.object }

// Walk visits v and everything in it: ErrTooLarge past the budget, ctx's
// error once it ends. Each value costs at least what serialize() writes
// for it, so the walk is bounded whatever the references.
func (b *Budget) Walk(v phpserial.Value) error {
	b.left -= int64(8 + len(v.Str) + len(v.Class) + len(v.FloatText))
	if b.left < 0 {
		return ErrTooLarge
	}
	if b.nodes++; b.nodes%4096 == 0 {
		if err := b.ctx.Err(); err != nil {
			return err
		}
	}
	if (v.Kind == phpserial.Object || v.Kind == phpserial.Enum) && b.object == "" {
		// An enum case is an object too: unserialize() makes one.
		b.object = v.Class
		if v.Kind == phpserial.Enum {
			b.object, _, _ = strings.Cut(v.Str, ":")
		}
	}
	for _, e := range v.Entries {
		b.left -= int64(8 + len(e.Key.Str))
		if err := b.Walk(e.Value); err != nil {
			return err
		}
	}
	return nil
}

// ObjectIn is the class of the first object (O:, C:, or an enum case) in
// v, "" when none; v is within the budget already.
func ObjectIn(v phpserial.Value) string {
	b := &Budget{ctx: context.Background(), left: math.MaxInt64}
	b.Walk(v)
	return b.object
}

// NonFinite names the first number in a JSON config that PHP's
// json_decode reads as INF, as the REST routes name it (config.a.b[0]).
func NonFinite(v phpserial.Value, at string) (string, bool) {
	switch v.Kind {
	case phpserial.Float:
		return at, math.IsInf(v.Float, 0) || math.IsNaN(v.Float)
	case phpserial.Object:
		for _, e := range v.Entries {
			if p, bad := NonFinite(e.Value, at+"."+e.Key.String()); bad {
				return p, true
			}
		}
	case phpserial.Array:
		for i, e := range v.Entries {
			if p, bad := NonFinite(e.Value, fmt.Sprintf("%s[%d]", at, i)); bad {
				return p, true
			}
		}
	}
	return "", false
}

// reader reads a directory's files within the bounds: regular files only
// (no link is followed, no device or pipe opened: regularfile.ReadIn),
// each at most MaxFileBytes, together at most MaxDirBytes.
type reader struct {
	ctx  context.Context
	root *os.Root
	dir  string // root's path, for messages
	read int64
}

// name is a path under the root as messages show it.
func (r *reader) name(rel string) string { return filepath.Join(r.dir, filepath.FromSlash(rel)) }

// file reads rel; fs.ErrNotExist when there is none. Its size counts
// against the directory's bound before it is read.
func (r *reader) file(rel string) ([]byte, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	st, err := r.root.Lstat(rel)
	if err != nil {
		return nil, err
	}
	if err := regularfile.Check(st, MaxFileBytes); err != nil {
		return nil, fmt.Errorf("%s: %w", r.name(rel), err)
	}
	if r.read+st.Size() > maxDirBytes {
		return nil, fmt.Errorf("%s: the directory's files are over the limit of %d bytes together", r.name(rel), maxDirBytes)
	}
	b, err := regularfile.ReadIn(r.root, rel, MaxFileBytes)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Op == "read" {
		err = pe.Err // named below as the other errors are
	}
	if err == nil && int64(len(b)) > st.Size() {
		err = regularfile.ErrChanged // grown past what was counted
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.name(rel), err)
	}
	r.read += int64(len(b))
	return b, nil
}

// subdir tells whether rel is a directory under the root: false when
// there is none; an error when it is a link or anything but a directory.
func subdir(root *os.Root, dir, rel string) (bool, error) {
	st, err := root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case st.Mode()&fs.ModeSymlink != 0:
		return false, fmt.Errorf("%s is a symbolic link: not followed (it may lead out of %s)", filepath.Join(dir, rel), dir)
	case !st.IsDir():
		return false, fmt.Errorf("%s is not a directory", filepath.Join(dir, rel))
	}
	return true, nil
}

// jsonFiles are the names of sub's .json files, sorted (at most MaxFiles).
func (r *reader) jsonFiles(sub string) ([]string, error) {
	d, err := r.root.Open(sub)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var out []string
	for {
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		ents, err := d.ReadDir(1024)
		for _, e := range ents {
			if path.Ext(e.Name()) == ".json" {
				out = append(out, e.Name())
			}
		}
		if int64(len(out)) > maxFiles {
			return nil, fmt.Errorf("%s: over %d .json files", r.name(sub), maxFiles)
		}
		if errors.Is(err, io.EOF) || (err == nil && len(ents) == 0) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

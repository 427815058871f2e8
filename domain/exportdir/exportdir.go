// Package exportdir keeps a site's namespaces as files (docs/api.md §13):
// Export writes each namespace's items into DIR/<namespace>/<name>.json
// and lists them in DIR/export.json; Read reads such a directory back
// within bounds, PlanImport compares it with the database and Apply writes
// the difference.
//
// What is the same for every namespace is here: the manifest, writing the
// tree atomically and confined to DIR, reading it bounded, a plan's lines
// and conflicts, applying it in order. What a namespace's items are as
// files, how they are checked, planned and written is its Part's, which
// its handler package provides (fieldmgr.Part, themeopts.Part, handed
// through its module): this package names no namespace.
package exportdir

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"

	"github.com/wpsidecar/wpsidecar"
)

// Part is one namespace of a site as export and import handle it: its part of the directory.
type Part interface {
	// Namespace names its directory under DIR and its list in
	// export.json.
	Namespace() wpsidecar.Namespace
	// Noun is what the commands count its items as ("field groups").
	Noun() string
	// Export is what it stores now, an item a file.
	Export(ctx context.Context) (Exported, error)
	// Read reads its files (d) as an import wants them stored, refusing
	// one that is not of its kind; what it reads is planned later.
	Read(ctx context.Context, d Dir) (Wanted, error)
}

// Exported is what a kind's export writes.
type Exported struct {
	Items []Item
	// ListNone: export.json lists the kind even when it has no item (as
	// null: the export saw none), as it always listed the field groups;
	// else it is left out then.
	ListNone bool
}

// Item is one item as a file: Name names it in export.json and names its
// file, <namespace>/<name>.json; Value is written as indented JSON.
type Item struct {
	Name  string
	Value any
}

// Wanted are a kind's files as read, to be compared with the database.
type Wanted interface {
	// Plan is the steps that would store what the files want; prune: the
	// items without a file are deleted too (for a kind that deletes).
	Plan(ctx context.Context, prune bool) ([]Step, error)
}

// fileName is a name as a file name: what is not safe in one is escaped
// as in a URL path.
func fileName(name string) string {
	return strings.ReplaceAll(url.PathEscape(name), "%", "%25") + ".json"
}

// Export writes the kinds' items into dir, removing the files the
// previous export there wrote of what is no longer stored, and tells how
// many items of each kind it wrote. No link out of dir is followed.
func Export(ctx context.Context, kinds []Part, dir string) ([]int, error) {
	files := map[string][]byte{}
	lists := make([][]string, len(kinds))
	listNone := make([]bool, len(kinds))
	counts := make([]int, len(kinds))
	for i, k := range kinds {
		e, err := k.Export(ctx)
		if err != nil {
			return nil, err
		}
		for _, it := range e.Items {
			files[path.Join(string(k.Namespace()), fileName(it.Name))] = encode(it.Value)
			lists[i] = append(lists[i], it.Name)
		}
		slices.Sort(lists[i])
		listNone[i], counts[i] = e.ListNone, len(e.Items)
	}
	m := newManifest(kinds, listNone)
	if err := writeTree(ctx, dir, kinds, files, m, m.encode(lists)); err != nil {
		return nil, err
	}
	return counts, nil
}

// manifestName is the file that says what the export saw and wrote: a
// group stored now and not among its groups was created since, and is not
// pruned without --force; the next export into the directory removes the
// files it lists and does not write again, and no other.
const manifestName = "export.json"

// manifest is export.json's shape: a list of names under each kind's
// namespace. It is a struct type made from the kinds, so that it is read
// as encoding/json reads a struct (an unknown key refused, a key's letter
// case ignored) and written as one, with the same bytes and messages the
// two namespaces' struct had.
type manifest struct {
	kinds []Part
	typ   reflect.Type
}

// newManifest is the kinds' manifest; listNone[i]: kind i is written even
// without names (nil: none is).
func newManifest(kinds []Part, listNone []bool) manifest {
	fields := make([]reflect.StructField, len(kinds))
	for i, k := range kinds {
		tag := string(k.Namespace())
		if listNone == nil || !listNone[i] {
			tag += ",omitempty"
		}
		fields[i] = reflect.StructField{Name: fmt.Sprintf("K%d", i), Type: reflect.TypeFor[[]string](), Tag: reflect.StructTag(`json:"` + tag + `"`)}
	}
	return manifest{kinds: kinds, typ: reflect.StructOf(fields)}
}

// encode is the manifest listing lists[i] under kind i.
func (m manifest) encode(lists [][]string) []byte {
	v := reflect.New(m.typ).Elem()
	for i, l := range lists {
		v.Field(i).Set(reflect.ValueOf(l))
	}
	return encode(v.Interface())
}

// decode reads a manifest: each kind's names, in the kinds' order.
func (m manifest) decode(b []byte) ([][]string, error) {
	v := reflect.New(m.typ)
	if err := strictDecode(b, v.Interface()); err != nil {
		// Named as the struct of the two namespaces was named.
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) && te.Struct == "" {
			if te.Field == "" { // not an object at all
				return nil, fmt.Errorf("json: cannot unmarshal %s into Go value of type exportdir.manifest", te.Value)
			}
			te.Struct = "manifest"
		}
		return nil, err
	}
	lists := make([][]string, len(m.kinds))
	for i := range lists {
		lists[i] = v.Elem().Field(i).Interface().([]string)
	}
	return lists, nil
}

// files are the paths (under the directory) of the files lists names.
func (m manifest) files(lists [][]string) []string {
	var out []string
	for i, l := range lists {
		for _, name := range l {
			out = append(out, path.Join(string(m.kinds[i].Namespace()), fileName(name)))
		}
	}
	return out
}

// encode is v as indented JSON: the same data, the same bytes.
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v) // only strings and valid raw JSON
	return b.Bytes()
}

// writeTree writes files (path under dir → bytes) and the manifest (m's
// bytes, manifestBytes), each by a rename so that none is half-written,
// and removes the files the previous manifest lists and files does not
// hold. Everything is done through an os.Root of dir: each kind's
// directory must be a directory of dir, not a link, and nothing outside
// dir is written or removed.
func writeTree(ctx context.Context, dir string, kinds []Part, files map[string][]byte, m manifest, manifestBytes []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var missing []string
	for _, k := range kinds {
		sub := string(k.Namespace())
		ok, err := subdir(root, dir, sub)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if !ok {
			missing = append(missing, sub)
		}
	}
	for _, sub := range missing {
		if err := root.Mkdir(sub, 0o755); err != nil {
			return err
		}
	}
	// What the previous export wrote (none known without its manifest:
	// then nothing is removed).
	var old [][]string
	r := &reader{ctx: ctx, root: root, dir: dir}
	if b, err := r.file(manifestName); err == nil {
		old, _ = m.decode(b) // unreadable: none
	}
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := writeFile(root, name, files[name]); err != nil {
			return err
		}
	}
	for _, name := range m.files(old) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, keep := files[name]; keep {
			continue
		}
		// Only a file: what else is there now is not the export's.
		if st, err := root.Lstat(name); err == nil && st.Mode().IsRegular() {
			if err := root.Remove(name); err != nil {
				return err
			}
		}
	}
	return writeFile(root, manifestName, manifestBytes)
}

// writeFile writes name under root whole or not at all: into a new file
// beside it, renamed over it (a link there is replaced, not followed).
func writeFile(root *os.Root, name string, b []byte) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := path.Join(path.Dir(name), ".export-"+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// Files are a directory's files as the kinds read them.
type Files struct {
	kinds  []Part
	wanted []Wanted
}

// Dir is what an import's directory holds of one kind.
type Dir struct {
	// Found: the directory has the kind's subdirectory (a kind that
	// deletes what has no file refuses to when it has none).
	Found bool
	// Listed are the names export.json lists of the kind: what the export
	// saw (nil without export.json).
	Listed []string
	r      *reader
	sub    string
}

// File is one of a kind's files as an import reads it.
type File struct {
	// Path is the file as messages name it.
	Path string
	Data []byte
}

// Decode reads f as one JSON object into v: a field v lacks, or anything
// after the object, is refused.
func (f File) Decode(v any) error { return strictDecode(f.Data, v) }

// Each calls each with the kind's .json files in name order, each read
// within the bounds; an error, a read's or each's, stops it and is
// returned.
func (d Dir) Each(each func(File) error) error {
	if !d.Found {
		return nil
	}
	names, err := d.r.jsonFiles(d.sub)
	if err != nil {
		return err
	}
	for _, n := range names {
		rel := path.Join(d.sub, n)
		b, err := d.r.file(rel)
		if err != nil {
			return err
		}
		if err := each(File{Path: d.r.name(rel), Data: b}); err != nil {
			return err
		}
	}
	return nil
}

// Read reads dir's files within the bounds (MaxFileBytes, MaxDirBytes,
// MaxFiles: regular files only, no link followed), each kind its own; an
// error names the file and what is wrong, and nothing is read then.
func Read(ctx context.Context, kinds []Part, dir string) (Files, error) {
	out := Files{kinds: kinds}
	if _, err := os.Stat(dir); err != nil {
		return out, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return out, err
	}
	defer root.Close()
	r := &reader{ctx: ctx, root: root, dir: dir}
	dirs := make([]Dir, len(kinds))
	var subs []string
	anyFound := false
	for i, k := range kinds {
		sub := string(k.Namespace())
		found, err := subdir(root, dir, sub)
		if err != nil {
			return out, err
		}
		dirs[i] = Dir{Found: found, r: r, sub: sub}
		anyFound = anyFound || found
		subs = append(subs, sub+"/")
	}
	if !anyFound {
		return out, fmt.Errorf("%s holds no export: %s (on a network, each site's is in sites/<blog id>/)", dir, neither(subs))
	}
	switch b, err := r.file(manifestName); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return out, err
	default:
		lists, err := newManifest(kinds, nil).decode(b)
		if err != nil {
			return out, fmt.Errorf("%s: %w", filepath.Join(dir, manifestName), err)
		}
		for i := range dirs {
			dirs[i].Listed = append([]string{}, lists[i]...)
		}
	}
	for i, k := range kinds {
		w, err := k.Read(ctx, dirs[i])
		if err != nil {
			return out, err
		}
		out.wanted = append(out.wanted, w)
	}
	return out, nil
}

// neither says none of names is there.
func neither(names []string) string {
	switch len(names) {
	case 1:
		return "no " + names[0]
	case 2:
		return "neither " + names[0] + " nor " + names[1]
	}
	return "none of " + strings.Join(names, ", ")
}

func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the object")
	}
	return nil
}

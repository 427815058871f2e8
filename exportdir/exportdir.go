// Package exportdir keeps a site's field groups and theme options as files
// (docs/api.md §13): Export writes DIR/fieldmgr/<key>.json and
// DIR/themeopts/<option>.json; Plan compares such a directory with the
// database and Apply writes the difference through the store's writes,
// recorded in the history like the REST writes.
//
// An options file carries the values twice: "values" to read and edit, as
// json_encode shows them, and "php", the row exactly as the export saw
// it. An id whose value is unedited is written back from "php", so what
// JSON cannot tell apart (integer keys, 1.0, stdClass) survives byte for
// byte; "php" is also what tells a row changed since the export.
package exportdir

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
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
	"slices"
	"strings"
	"syscall"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/fieldgroup"
	"github.com/wpsidecar/wpsidecar/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/themeopt"
)

// Site is what export and import reach of one site.
type Site struct {
	DB     *store.DB
	Groups *store.FieldGroups
	// Themeopts is the site's theme options configuration (nil: none):
	// the row it names is exported, and imported values are checked
	// against it as POST /themeopts/v1/options checks them.
	Themeopts *themeopt.Config
}

// optName is the theme options row; "" when the site has none.
func (s Site) optName() string {
	if s.Themeopts == nil {
		return ""
	}
	return s.Themeopts.OptName
}

// groupFile is DIR/fieldmgr/<key>.json. Config is the stored JSON text as
// a JSON value, or a string when an older writer stored it PHP-serialized.
type groupFile struct {
	Key      string          `json:"key"`
	Title    string          `json:"title"`
	Status   string          `json:"status"`
	Config   json.RawMessage `json:"config"`
	Exported string          `json:"exported"`
}

// optionsFile is DIR/themeopts/<option>.json.
type optionsFile struct {
	Option string          `json:"option"`
	Values json.RawMessage `json:"values"`
	PHP    string          `json:"php"`
}

// digest names a group's stored state, for telling it changed.
func digest(g fieldgroup.Value) string {
	h := sha256.Sum256([]byte(g.Title + "\x00" + g.Status + "\x00" + g.Config))
	return "sha256:" + hex.EncodeToString(h[:])
}

// fileName is a key or option name as a file name: what is not safe in
// one is escaped as in a URL path.
func fileName(name string) string {
	return strings.ReplaceAll(url.PathEscape(name), "%", "%25") + ".json"
}

// Export writes the site's groups and theme options into dir, removing
// the files the previous export there wrote of what is no longer stored,
// and tells how many it wrote. No link out of dir is followed.
func Export(ctx context.Context, s Site, dir string) (groups, options int, err error) {
	list, err := s.Groups.List(ctx)
	if err != nil {
		return 0, 0, err
	}
	files := map[string][]byte{}
	var m manifest
	for _, g := range list {
		m.Groups = append(m.Groups, g.Key)
		f := groupFile{Key: g.Key, Title: g.Title, Status: g.Status, Exported: digest(g.Value())}
		if json.Valid([]byte(g.Config)) && strings.HasPrefix(g.Config, "{") {
			f.Config = json.RawMessage(g.Config)
		} else {
			f.Config, _ = json.Marshal(g.Config)
		}
		files[path.Join(groupsDir, fileName(g.Key))] = encode(f)
	}
	if name := s.optName(); name != "" {
		raw, err := s.DB.RawOption(ctx, name)
		switch {
		case errors.Is(err, wpsidecar.ErrNotFound):
		case err != nil:
			return 0, 0, err
		default:
			v, err := phpserial.MaybeUnserialize(raw)
			if err != nil || (v.Kind != phpserial.Array && v.Kind != phpserial.Object) {
				return 0, 0, fmt.Errorf("export: option %s is not a PHP array; not exported", name)
			}
			// Its JSON is written with the references expanded.
			if err := newBudget(ctx).walk(v); err != nil {
				return 0, 0, fmt.Errorf("export: option %s: %w; not exported", name, err)
			}
			files[path.Join(optionsDir, fileName(name))] = encode(optionsFile{Option: name, Values: phpserial.JSON(v), PHP: raw})
			m.Options = append(m.Options, name)
			options++
		}
	}
	slices.Sort(m.Groups)
	if err := writeTree(ctx, dir, files, m); err != nil {
		return 0, 0, err
	}
	return len(list), options, nil
}

// manifestName is the file that says what the export saw and wrote: a
// group stored now and not among its groups was created since, and is not
// pruned without --force; the next export into the directory removes the
// files it lists and does not write again, and no other.
const manifestName = "export.json"

type manifest struct {
	Groups  []string `json:"fieldmgr"`
	Options []string `json:"themeopts,omitempty"`
}

// files are the paths (under the directory) of the files m lists.
func (m manifest) files() []string {
	var out []string
	for _, k := range m.Groups {
		out = append(out, path.Join(groupsDir, fileName(k)))
	}
	for _, o := range m.Options {
		out = append(out, path.Join(optionsDir, fileName(o)))
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

// Each namespace's files are in a directory named after it.
const (
	groupsDir  = string(wpsidecar.FieldGroups)
	optionsDir = string(wpsidecar.ThemeOptions)
)

// subdirs are where an export writes, under its directory.
var subdirs = []string{groupsDir, optionsDir}

// writeTree writes files (path under dir → bytes) and the manifest m,
// each by a rename so that none is half-written, and removes the files
// the previous manifest lists and files does not hold. Everything is done
// through an os.Root of dir: fieldmgr/ and themeopts/ must be directories
// of dir, not links, and nothing outside dir is written or removed.
func writeTree(ctx context.Context, dir string, files map[string][]byte, m manifest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var missing []string
	for _, sub := range subdirs {
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
	var old manifest
	r := &reader{ctx: ctx, root: root, dir: dir}
	if b, err := r.file(manifestName); err == nil {
		if strictDecode(b, &old) != nil {
			old = manifest{}
		}
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
	for _, name := range old.files() {
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
	return writeFile(root, manifestName, encode(m))
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

// Files are a directory's groups and options sets, as read.
type Files struct {
	Groups  []GroupWant
	Options []OptionsWant
	// HasGroups: the directory has a fieldmgr/ (else pruning is refused:
	// it would delete every group). Exported: the groups the export saw
	// (nil without its manifest).
	HasGroups bool
	Exported  []string
}

// GroupWant is a group as its file wants it stored.
type GroupWant struct {
	Key      string
	Value    fieldgroup.Value
	Exported string
	file     string
	// configJSON: the file's config was a JSON object (validated, and
	// compared with what is stored as JSON), not stored text.
	configJSON bool
	// invalid says why the config would be refused as a new value: it is
	// imported only as what is stored already.
	invalid string
}

// OptionsWant is an options row as its file wants it.
type OptionsWant struct {
	Option string
	// base is the file's "php" as read (an empty array when none), within
	// the walk's budget; values are the file's "values", in order.
	base   phpserial.Value
	values []optionValue
	php    string
	file   string
}

// optionValue is one id of an options file's "values".
type optionValue struct {
	id    string
	json  []byte          // the value as compact JSON
	value phpserial.Value // as json_decode($v, true) reads it
}

// Read reads dir's files within the bounds (MaxFileBytes, MaxDirBytes,
// MaxFiles: regular files only, no link followed); an error names the
// file and what is wrong, and nothing is read then.
func Read(ctx context.Context, dir string) (Files, error) {
	var out Files
	if _, err := os.Stat(dir); err != nil {
		return out, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return out, err
	}
	defer root.Close()
	r := &reader{ctx: ctx, root: root, dir: dir}
	if out.HasGroups, err = subdir(root, dir, groupsDir); err != nil {
		return out, err
	}
	hasOptions, err := subdir(root, dir, optionsDir)
	if err != nil {
		return out, err
	}
	if !out.HasGroups && !hasOptions {
		return out, fmt.Errorf("%s holds no export: neither fieldmgr/ nor themeopts/ (on a network, each site's is in sites/<blog id>/)", dir)
	}
	switch b, err := r.file(manifestName); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return out, err
	default:
		var m manifest
		if err := strictDecode(b, &m); err != nil {
			return out, fmt.Errorf("%s: %w", filepath.Join(dir, manifestName), err)
		}
		out.Exported = append([]string{}, m.Groups...)
	}
	if out.HasGroups {
		names, err := r.jsonFiles(groupsDir)
		if err != nil {
			return out, err
		}
		// Keys as the table's unique index compares them (a key is ASCII).
		seen := map[string]bool{}
		for _, n := range names {
			w, err := readGroup(r, path.Join(groupsDir, n))
			if err != nil {
				return out, err
			}
			if lower := strings.ToLower(w.Key); seen[lower] {
				return out, fmt.Errorf("%s: group %q is in another file too", w.file, w.Key)
			} else {
				seen[lower] = true
			}
			out.Groups = append(out.Groups, w)
		}
	}
	if hasOptions {
		names, err := r.jsonFiles(optionsDir)
		if err != nil {
			return out, err
		}
		for _, n := range names {
			rel := path.Join(optionsDir, n)
			p := r.name(rel)
			b, err := r.file(rel)
			if err != nil {
				return out, err
			}
			var f optionsFile
			if err := strictDecode(b, &f); err != nil {
				return out, fmt.Errorf("%s: %w", p, err)
			}
			if f.Option == "" {
				return out, fmt.Errorf("%s: option: required", p)
			}
			w := OptionsWant{Option: f.Option, php: f.PHP, file: p}
			if w.base, w.values, err = readOptions(ctx, f); err != nil {
				if ctx.Err() != nil {
					return out, ctx.Err()
				}
				return out, fmt.Errorf("%s: %w", p, err)
			}
			out.Options = append(out.Options, w)
		}
	}
	return out, nil
}

// readGroup reads a group file.
func readGroup(r *reader, rel string) (GroupWant, error) {
	p := r.name(rel)
	b, err := r.file(rel)
	if err != nil {
		return GroupWant{}, err
	}
	var f groupFile
	if err := strictDecode(b, &f); err != nil {
		return GroupWant{}, fmt.Errorf("%s: %w", p, err)
	}
	if f.Status != fieldgroup.StatusActive && f.Status != fieldgroup.StatusInactive {
		return GroupWant{}, fmt.Errorf("%s: status: must be active or inactive", p)
	}
	w := GroupWant{Key: f.Key, Value: fieldgroup.Value{Title: f.Title, Status: f.Status}, Exported: f.Exported, file: p}
	if _, err := fieldgroup.Validate(f.Key, f.Title, nil); err != nil {
		return w, fmt.Errorf("%s: %w", p, err)
	}
	var text string
	if err := json.Unmarshal(f.Config, &text); err == nil {
		// Stored as an older writer stored it: PHP-serialized, an array
		// of plain values (no object PHP would make on reading it), walked
		// within the budget whatever its references.
		w.Value.Config = text
		v, err := phpserial.Unserialize(text)
		if err != nil || v.Kind != phpserial.Array {
			w.invalid = "config: a string must be a PHP-serialized array without objects"
			return w, nil
		}
		b := newBudget(r.ctx)
		switch err := b.walk(v); {
		case errors.Is(err, errTooLarge):
			w.invalid = "config: " + err.Error()
		case err != nil:
			return w, err
		case b.object != "":
			w.invalid = "config: a string must be a PHP-serialized array without objects"
		}
		return w, nil
	}
	c, err := fieldgroup.Validate(f.Key, f.Title, f.Config)
	if err != nil {
		// Refused unless it is what is stored (a group another writer
		// made, exported and imported unchanged).
		var compact bytes.Buffer
		json.Compact(&compact, f.Config)
		w.Value.Config, w.invalid = compact.String(), err.Error()
		return w, nil
	}
	w.Value.Config, w.configJSON = c, true
	// What the routes refuse of a body besides: a number json_decode
	// reads as INF (no JSON answer of the group could be written).
	if v, err := phpserial.FromJSONStrict(f.Config); err == nil {
		if at, bad := nonFinite(v, "config"); bad {
			w.invalid = at + ": number beyond what a PHP float holds"
		}
	}
	return w, nil
}

// readOptions reads an options file's "php" (an array, or an object set,
// within the budget) and "values" (an object, each id once).
func readOptions(ctx context.Context, f optionsFile) (phpserial.Value, []optionValue, error) {
	base := phpserial.Value{Kind: phpserial.Array}
	if f.PHP != "" {
		v, err := phpserial.Unserialize(f.PHP)
		if err != nil || (v.Kind != phpserial.Array && v.Kind != phpserial.Object) {
			return base, nil, errors.New("php: not a serialized PHP array")
		}
		if err := newBudget(ctx).walk(v); err != nil {
			return base, nil, fmt.Errorf("php: %w", err)
		}
		base = v
	}
	pairs, err := rawPairs(f.Values)
	if err != nil {
		return base, nil, fmt.Errorf("values: %w", err)
	}
	var out []optionValue
	seen := map[phpserial.Key]bool{}
	for i, p := range pairs {
		if i%4096 == 0 && ctx.Err() != nil {
			return base, nil, ctx.Err()
		}
		if key := phpserial.StrKey(p.key); seen[key] {
			return base, nil, fmt.Errorf("values: %q is given twice", p.key)
		} else {
			seen[key] = true
		}
		var compact bytes.Buffer
		json.Compact(&compact, p.raw)
		v, err := phpserial.FromJSON(p.raw)
		if err != nil {
			return base, nil, fmt.Errorf("values.%s: %w", p.key, err)
		}
		out = append(out, optionValue{id: p.key, json: compact.Bytes(), value: v})
	}
	return base, out, nil
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

type rawPair struct {
	key string
	raw json.RawMessage
}

// rawPairs are an object's members (or a list's elements, keyed 0…n-1, as
// json_encode writes an array whose keys are those), in order, as sent.
func rawPairs(data json.RawMessage) ([]rawPair, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	var out []rawPair
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			out = append(out, rawPair{k.(string), raw})
		}
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			out = append(out, rawPair{fmt.Sprint(i), raw})
		}
	default:
		return nil, errors.New("must be an object")
	}
	return out, nil
}

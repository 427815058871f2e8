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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wpsidecar/wpsidecar/proxy/fieldmgr"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/store/phpserial"
	"github.com/wpsidecar/wpsidecar/wpjson"
)

// Site is what export and import reach of one site.
type Site struct {
	DB      *store.DB
	Groups  *store.FieldGroups
	OptName string // the theme options row; "" when the site has none
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
func digest(g store.GroupValue) string {
	h := sha256.Sum256([]byte(g.Title + "\x00" + g.Status + "\x00" + g.Config))
	return "sha256:" + hex.EncodeToString(h[:])
}

// fileName is a key or option name as a file name: what is not safe in
// one is escaped as in a URL path.
func fileName(name string) string {
	return strings.ReplaceAll(url.PathEscape(name), "%", "%25") + ".json"
}

// Export writes the site's groups and theme options into dir, replacing
// the files of what is no longer stored, and tells how many it wrote.
func Export(ctx context.Context, s Site, dir string) (groups, options int, err error) {
	list, err := s.Groups.List(ctx)
	if err != nil {
		return 0, 0, err
	}
	files := map[string][]byte{}
	var m manifest
	for _, g := range list {
		m.Groups = append(m.Groups, g.Key)
		f := groupFile{Key: g.Key, Title: g.Title, Status: g.Status, Exported: digest(store.GroupValue{Title: g.Title, Status: g.Status, Config: g.Config})}
		if json.Valid([]byte(g.Config)) && strings.HasPrefix(g.Config, "{") {
			f.Config = json.RawMessage(g.Config)
		} else {
			f.Config, _ = json.Marshal(g.Config)
		}
		files[filepath.Join("fieldmgr", fileName(g.Key))] = encode(f)
	}
	if s.OptName != "" {
		raw, err := s.DB.RawOption(ctx, s.OptName)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return 0, 0, err
		default:
			v, err := phpserial.MaybeUnserialize(raw)
			if err != nil || (v.Kind != phpserial.Array && v.Kind != phpserial.Object) {
				return 0, 0, fmt.Errorf("export: option %s is not a PHP array; not exported", s.OptName)
			}
			files[filepath.Join("themeopts", fileName(s.OptName))] = encode(optionsFile{Option: s.OptName, Values: phpserial.JSON(v), PHP: raw})
			options++
		}
	}
	slices.Sort(m.Groups)
	files[manifestName] = encode(m)
	if err := writeTree(dir, files); err != nil {
		return 0, 0, err
	}
	return len(list), options, nil
}

// manifestName is the file that says which groups the export saw: a group
// stored now and not among them was created since, and is not pruned
// without --force.
const manifestName = "export.json"

type manifest struct {
	Groups []string `json:"fieldmgr"`
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

// writeTree writes files (path → bytes) under dir, each by a rename so
// that none is half-written, and removes the other .json files of the
// subdirectories it writes to.
func writeTree(dir string, files map[string][]byte) error {
	for _, sub := range []string{"fieldmgr", "themeopts"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	for name, b := range files {
		path := filepath.Join(dir, name)
		tmp, err := os.CreateTemp(filepath.Dir(path), ".export-*")
		if err != nil {
			return err
		}
		_, err = tmp.Write(b)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o644)
		}
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return err
		}
	}
	for _, sub := range []string{"fieldmgr", "themeopts"} {
		old, _ := filepath.Glob(filepath.Join(dir, sub, "*.json"))
		for _, p := range old {
			if _, keep := files[filepath.Join(sub, filepath.Base(p))]; !keep {
				if err := os.Remove(p); err != nil {
					return err
				}
			}
		}
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
	Value    store.GroupValue
	Exported string
	file     string
	// configJSON: the file's config was a JSON object (validated, and
	// compared with what is stored as JSON), not stored text.
	configJSON bool
	// invalid says why the config would be refused as a new value: it is
	// imported only as what is stored already.
	invalid string
}

// hasObject tells whether v holds a PHP object anywhere.
func hasObject(v phpserial.Value) bool {
	if v.Kind == phpserial.Object {
		return true
	}
	return slices.ContainsFunc(v.Entries, func(e phpserial.Entry) bool { return hasObject(e.Value) })
}

// OptionsWant is an options row as its file wants it.
type OptionsWant struct {
	Option string
	values json.RawMessage
	php    string
	file   string
}

// Read reads dir's files; an error names the file and what is wrong, and
// nothing is read then.
func Read(dir string) (Files, error) {
	var out Files
	if _, err := os.Stat(dir); err != nil {
		return out, err
	}
	if st, err := os.Stat(filepath.Join(dir, "fieldmgr")); err == nil && st.IsDir() {
		out.HasGroups = true
	}
	if st, err := os.Stat(filepath.Join(dir, "themeopts")); !out.HasGroups && (err != nil || !st.IsDir()) {
		return out, fmt.Errorf("%s holds no export: neither fieldmgr/ nor themeopts/ (on a network, each site's is in sites/<blog id>/)", dir)
	}
	if b, err := os.ReadFile(filepath.Join(dir, manifestName)); err == nil {
		var m manifest
		if err := strictDecode(b, &m); err != nil {
			return out, fmt.Errorf("%s: %w", filepath.Join(dir, manifestName), err)
		}
		out.Exported = append([]string{}, m.Groups...)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "fieldmgr", "*.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return out, err
		}
		var f groupFile
		if err := strictDecode(b, &f); err != nil {
			return out, fmt.Errorf("%s: %w", p, err)
		}
		if f.Status != store.StatusActive && f.Status != store.StatusInactive {
			return out, fmt.Errorf("%s: status: must be active or inactive", p)
		}
		w := GroupWant{Key: f.Key, Value: store.GroupValue{Title: f.Title, Status: f.Status}, Exported: f.Exported, file: p}
		if _, err := fieldmgr.Validate(f.Key, f.Title, nil); err != nil {
			return out, fmt.Errorf("%s: %s", p, message(err))
		}
		var text string
		if err := json.Unmarshal(f.Config, &text); err == nil {
			// Stored as an older writer stored it: PHP-serialized, an array
			// of plain values (no object PHP would make on reading it).
			w.Value.Config = text
			if v, err := phpserial.Unserialize(text); err != nil || v.Kind != phpserial.Array || hasObject(v) {
				w.invalid = "config: a string must be a PHP-serialized array without objects"
			}
		} else if c, err := fieldmgr.Validate(f.Key, f.Title, f.Config); err != nil {
			// Refused unless it is what is stored (a group another writer
			// made, exported and imported unchanged).
			var compact bytes.Buffer
			json.Compact(&compact, f.Config)
			w.Value.Config, w.invalid = compact.String(), message(err)
		} else {
			w.Value.Config, w.configJSON = c, true
		}
		if slices.ContainsFunc(out.Groups, func(g GroupWant) bool { return strings.EqualFold(g.Key, f.Key) }) {
			return out, fmt.Errorf("%s: group %q is in another file too", p, f.Key)
		}
		out.Groups = append(out.Groups, w)
	}
	paths, _ = filepath.Glob(filepath.Join(dir, "themeopts", "*.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
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
		if _, err := wanted(f.Values, f.PHP); err != nil {
			return out, fmt.Errorf("%s: %w", p, err)
		}
		out.Options = append(out.Options, OptionsWant{Option: f.Option, values: f.Values, php: f.PHP, file: p})
	}
	return out, nil
}

// message is what a validation error says.
func message(err error) string {
	var e *wpjson.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
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

// wanted is the options row a file wants: its values in its order, an
// id whose value reads as it did at export written back as PHP had it.
func wanted(values json.RawMessage, php string) (string, error) {
	base := phpserial.Value{Kind: phpserial.Array}
	if php != "" {
		v, err := phpserial.Unserialize(php)
		if err != nil || (v.Kind != phpserial.Array && v.Kind != phpserial.Object) {
			return "", errors.New("php: not a serialized PHP array")
		}
		base = v
	}
	pairs, err := rawPairs(values)
	if err != nil {
		return "", fmt.Errorf("values: %w", err)
	}
	set := phpserial.Value{Kind: base.Kind, Class: base.Class}
	for _, p := range pairs {
		key := phpserial.StrKey(p.key)
		if slices.ContainsFunc(set.Entries, func(e phpserial.Entry) bool { return e.Key == key }) {
			return "", fmt.Errorf("values: %q is given twice", p.key)
		}
		var compact bytes.Buffer
		json.Compact(&compact, p.raw)
		if old, ok := base.Get(p.key); ok && bytes.Equal(compact.Bytes(), phpserial.JSON(old)) {
			set.Entries = append(set.Entries, phpserial.Entry{Key: key, Value: old})
			continue
		}
		v, err := phpserial.FromJSON(p.raw)
		if err != nil {
			return "", fmt.Errorf("values.%s: %w", p.key, err)
		}
		set.Entries = append(set.Entries, phpserial.Entry{Key: key, Value: v})
	}
	return phpserial.Serialize(set), nil
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

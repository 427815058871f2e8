package themeopts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
)

// Part is themeopts/v1 as files: DIR/themeopts/<option>.json the
// site's saved set.
//
// An options file carries the values twice: "values" to read and edit, as
// json_encode shows them, and "php", the row exactly as the export saw
// it. An id whose value is unedited is written back from "php", so what
// JSON cannot tell apart (integer keys, 1.0, stdClass) survives byte for
// byte; "php" is also what tells a row changed since the export.
type Part struct {
	DB *store.DB
	// Config is the site's theme options configuration (nil: none): the
	// row it names is exported, and imported values are checked against
	// it as POST /themeopts/v1/options checks them.
	Config *themeoption.Config
}

func (Part) Namespace() wpsidecar.Namespace { return wpsidecar.ThemeOptions }
func (Part) Noun() string                   { return "theme options sets" }

// optName is the theme options row; "" when the site has none.
func (k Part) optName() string {
	if k.Config == nil {
		return ""
	}
	return k.Config.OptName
}

// optionsFile is DIR/themeopts/<option>.json.
type optionsFile struct {
	Option string          `json:"option"`
	Values json.RawMessage `json:"values"`
	PHP    string          `json:"php"`
}

// Export is the site's options row, when it has one stored.
func (k Part) Export(ctx context.Context) (exportdir.Exported, error) {
	name := k.optName()
	if name == "" {
		return exportdir.Exported{}, nil
	}
	raw, err := k.DB.RawOption(ctx, name)
	switch {
	case errors.Is(err, wpsidecar.ErrNotFound):
		return exportdir.Exported{}, nil
	case err != nil:
		return exportdir.Exported{}, err
	}
	v, err := phpserial.MaybeUnserialize(raw)
	if err != nil || (v.Kind != phpserial.Array && v.Kind != phpserial.Object) {
		return exportdir.Exported{}, fmt.Errorf("export: option %s is not a PHP array; not exported", name)
	}
	// Its JSON is written with the references expanded.
	if err := exportdir.NewBudget(ctx).Walk(v); err != nil {
		return exportdir.Exported{}, fmt.Errorf("export: option %s: %w; not exported", name, err)
	}
	return exportdir.Exported{Items: []exportdir.Item{{Name: name, Value: optionsFile{Option: name, Values: phpserial.JSON(v), PHP: raw}}}}, nil
}

// optionsWant is an options row as its file wants it.
type optionsWant struct {
	option string
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

// optionsWanted are the options files of a directory.
type optionsWanted struct {
	k    Part
	sets []optionsWant
}

// Read reads the options files.
func (k Part) Read(ctx context.Context, d exportdir.Dir) (exportdir.Wanted, error) {
	out := optionsWanted{k: k}
	err := d.Each(func(file exportdir.File) error {
		p := file.Path
		var f optionsFile
		if err := file.Decode(&f); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if f.Option == "" {
			return fmt.Errorf("%s: option: required", p)
		}
		w := optionsWant{option: f.Option, php: f.PHP, file: p}
		var err error
		if w.base, w.values, err = readOptions(ctx, f); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%s: %w", p, err)
		}
		out.sets = append(out.sets, w)
		return nil
	})
	return out, err
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
		if err := exportdir.NewBudget(ctx).Walk(v); err != nil {
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

// Plan compares each file with the site's options row: only that row is
// imported (prune deletes nothing here).
func (ow optionsWanted) Plan(ctx context.Context, _ bool) ([]exportdir.Step, error) {
	var out []exportdir.Step
	for _, o := range ow.sets {
		name := ow.k.optName()
		if o.option != name {
			if name == "" {
				return nil, fmt.Errorf("%s: the site has no theme options configuration (--themeopts-config): no options row is imported", o.file)
			}
			return nil, fmt.Errorf("%s: option %q is not the site's theme options row (%s)", o.file, o.option, name)
		}
		raw, err := ow.k.DB.RawOption(ctx, o.option)
		found := err == nil
		if err != nil && !errors.Is(err, wpsidecar.ErrNotFound) {
			return nil, err
		}
		want, err := wanted(ctx, ow.k.Config, o, raw, found)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%s: %w", o.file, err)
		}
		if found && raw == want {
			continue
		}
		out = append(out, ow.k.step(o.option, want, raw, found, raw != o.php))
	}
	return out, nil
}

// step writes want into the row option, found as seen (seenFound false:
// missing) when planned: a line per id it changes.
func (k Part) step(option, want, seen string, seenFound, conflict bool) exportdir.Step {
	var lines []string
	changes := themeoption.Diff(seen, want)
	for _, c := range changes {
		op := exportdir.OpChange
		switch {
		case c.Before == nil:
			op = "add"
		case c.After == nil:
			op = "remove"
		}
		lines = append(lines, fmt.Sprintf("%s %s: %s %s", wpsidecar.ThemeOptions, option, op, c.Key))
	}
	if len(changes) == 0 {
		lines = append(lines, fmt.Sprintf("%s %s: rewrite (order or container)", wpsidecar.ThemeOptions, option))
	}
	return exportdir.Step{
		Key:      option,
		Lines:    lines,
		Conflict: conflict,
		// Its autoload is what the site's update_option would leave
		// (w.DBVersion: store.ModifyOption).
		Write: func(ctx context.Context, w exportdir.Writing) error {
			rec := &store.Recorded{Namespace: wpsidecar.ThemeOptions, Diff: themeoption.Diff, By: w.By}
			return k.DB.ModifyOption(ctx, option, w.DBVersion, rec, func(raw string, found bool) (string, error) {
				if !w.Force && (found != seenFound || raw != seen) {
					return "", fmt.Errorf("%s %s: %w", wpsidecar.ThemeOptions, option, exportdir.ErrConflict)
				}
				return want, nil
			})
		},
	}
}

// wanted is the options row a file wants, in its order: an id whose value
// reads as it did at export is taken from "php", so what JSON cannot tell
// apart survives; an edited one is json_decode'd. An id whose value is not
// what the row (raw) stores for it now is checked as POST /options checks
// a value (c): an id the configuration does not have, a value its field
// does not take and a non-finite number are refused; so is a PHP object
// (O:, C:, an enum case), in a value or as the set, whatever the flags:
// objects are imported only where the row holds them already.
func wanted(ctx context.Context, c *themeoption.Config, o optionsWant, raw string, found bool) (string, error) {
	// The row as stored, within the budget (the plan and the history
	// compare it id by id, references expanded).
	cur := phpserial.Value{Kind: phpserial.Array}
	if found {
		if v, err := phpserial.MaybeUnserialize(raw); err == nil && (v.Kind == phpserial.Array || v.Kind == phpserial.Object) {
			if err := exportdir.NewBudget(ctx).Walk(v); err != nil {
				return "", fmt.Errorf("the row %s stores: %w; not imported", o.option, err)
			}
			cur = v
		}
	}
	set := phpserial.Value{Kind: phpserial.Array}
	if o.base.Kind == phpserial.Object {
		if cur.Kind != phpserial.Object || cur.Class != o.base.Class || cur.Custom || o.base.Custom {
			return "", fmt.Errorf("php: the set is a PHP object (%s) where the row is not: objects are not imported", o.base.Class)
		}
		set.Kind, set.Class = o.base.Kind, o.base.Class
	}
	exported, stored := index(o.base), index(cur)
	for i, iv := range o.values {
		if i%4096 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		v := iv.value
		key := phpserial.StrKey(iv.id)
		if old, ok := exported[key]; ok && bytes.Equal(iv.json, phpserial.JSON(old)) {
			v = old
		}
		set.Entries = append(set.Entries, phpserial.Entry{Key: key, Value: v})
		if old, ok := stored[key]; ok && phpserial.Serialize(old) == phpserial.Serialize(v) {
			continue // as the row holds it (another writer's value, kept)
		}
		if class := exportdir.ObjectIn(v); class != "" {
			return "", fmt.Errorf("php: %q holds a PHP object (%s) the row does not hold: objects are not imported", iv.id, class)
		}
		if err := c.CheckValue(iv.id, v); err != nil {
			return "", err
		}
	}
	return phpserial.Serialize(set), nil
}

// index is a set's values by key, looked up as PHP would ($a["10"] finds
// integer key 10); the first of a key that repeats, as Get finds it.
func index(set phpserial.Value) map[phpserial.Key]phpserial.Value {
	m := make(map[phpserial.Key]phpserial.Value, len(set.Entries))
	for _, e := range set.Entries {
		k := e.Key
		if !k.IsInt {
			k = phpserial.StrKey(k.Str)
		}
		if _, dup := m[k]; !dup {
			m[k] = e.Value
		}
	}
	return m
}

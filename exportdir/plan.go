package exportdir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/fieldgroup"
	"github.com/wpsidecar/wpsidecar/phpserial"
	"github.com/wpsidecar/wpsidecar/themeopt"
)

// Plan is what an import would change.
type Plan struct {
	Groups  []GroupStep
	Options []OptionsStep
}

// Group and option-id operations.
const (
	OpCreate = "create"
	OpChange = "change"
	OpDelete = "delete"
)

// GroupStep is one group to write.
type GroupStep struct {
	Key  string
	Op   string
	Want fieldgroup.Value
	// Seen is the row as planned against (found false: missing); the
	// write checks it is still that.
	Seen      fieldgroup.Value
	SeenFound bool
	// Conflict: the row is not what the export saw.
	Conflict bool
}

// OptionsStep is one options row to write.
type OptionsStep struct {
	Option    string
	Want      string
	Seen      string
	SeenFound bool
	Changes   []wpsidecar.Item
	Conflict  bool
}

// Empty tells whether the import writes nothing.
func (p Plan) Empty() bool { return len(p.Groups)+len(p.Options) == 0 }

// Conflicts are the steps whose rows changed since the export.
func (p Plan) Conflicts() []string {
	var out []string
	for _, g := range p.Groups {
		if g.Conflict {
			out = append(out, groupsDir+" "+g.Key)
		}
	}
	for _, o := range p.Options {
		if o.Conflict {
			out = append(out, optionsDir+" "+o.Option)
		}
	}
	return out
}

// Lines say what the plan does, a line per group and per option id.
func (p Plan) Lines() []string {
	var out []string
	mark := func(conflict bool) string {
		if conflict {
			return " (changed in the database since the export)"
		}
		return ""
	}
	for _, g := range p.Groups {
		out = append(out, fmt.Sprintf("%s: %s %s%s", wpsidecar.FieldGroups, g.Op, g.Key, mark(g.Conflict)))
	}
	for _, o := range p.Options {
		for _, c := range o.Changes {
			op := OpChange
			switch {
			case c.Before == nil:
				op = "add"
			case c.After == nil:
				op = "remove"
			}
			out = append(out, fmt.Sprintf("%s %s: %s %s%s", wpsidecar.ThemeOptions, o.Option, op, c.Key, mark(o.Conflict)))
		}
		if len(o.Changes) == 0 {
			out = append(out, fmt.Sprintf("%s %s: rewrite (order or container)%s", wpsidecar.ThemeOptions, o.Option, mark(o.Conflict)))
		}
	}
	return out
}

// PlanImport compares files with what the site stores. prune deletes the
// groups that have no file.
func PlanImport(ctx context.Context, s Site, files Files, prune bool) (Plan, error) {
	var p Plan
	list, err := s.Groups.List(ctx)
	if err != nil {
		return p, err
	}
	// Keys are compared as the table's unique index compares them.
	stored := map[string]fieldgroup.Group{}
	for _, g := range list {
		stored[strings.ToLower(g.Key)] = g
	}
	for _, w := range files.Groups {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		g, found := stored[strings.ToLower(w.Key)]
		if found && g.Key != w.Key {
			return p, fmt.Errorf("%s: group %q is stored as %q: keys differ only in letter case; rename the file's key or the group", w.file, w.Key, g.Key)
		}
		cur := g.Value()
		if found && (w.configJSON || w.invalid != "") && w.Value.Config != cur.Config && sameJSON(w.Value.Config, cur.Config) {
			w.Value.Config = cur.Config // the same config, stored by another writer's hand
		}
		if w.invalid != "" && (!found || w.Value.Config != cur.Config) {
			return p, fmt.Errorf("%s: %s", w.file, w.invalid)
		}
		step := GroupStep{Key: w.Key, Want: w.Value, Seen: cur, SeenFound: found}
		switch {
		case !found:
			step.Op = OpCreate
			// The export saw it: deleted since.
			step.Conflict = w.Exported != ""
		case cur != w.Value:
			step.Op = OpChange
			step.Conflict = w.Exported != "" && digest(cur) != w.Exported
		default:
			continue
		}
		p.Groups = append(p.Groups, step)
	}
	if prune {
		if !files.HasGroups {
			return p, errors.New("--prune: the directory has no fieldmgr/: pruning would delete every field group")
		}
		have := map[string]bool{}
		for _, w := range files.Groups {
			have[strings.ToLower(w.Key)] = true
		}
		exported := map[string]bool{}
		for _, k := range files.Exported {
			exported[k] = true
		}
		for _, g := range list {
			if !have[strings.ToLower(g.Key)] {
				// Created since the export (or no manifest says): a conflict.
				p.Groups = append(p.Groups, GroupStep{Key: g.Key, Op: OpDelete, Seen: g.Value(),
					SeenFound: true, Conflict: !exported[g.Key]})
			}
		}
	}
	for _, o := range files.Options {
		name := s.optName()
		if o.Option != name {
			if name == "" {
				return p, fmt.Errorf("%s: the site has no theme options configuration (--themeopts-config): no options row is imported", o.file)
			}
			return p, fmt.Errorf("%s: option %q is not the site's theme options row (%s)", o.file, o.Option, name)
		}
		raw, err := s.DB.RawOption(ctx, o.Option)
		found := err == nil
		if err != nil && !errors.Is(err, wpsidecar.ErrNotFound) {
			return p, err
		}
		want, err := wanted(ctx, s.Themeopts, o, raw, found)
		if err != nil {
			if ctx.Err() != nil {
				return p, ctx.Err()
			}
			return p, fmt.Errorf("%s: %w", o.file, err)
		}
		if found && raw == want {
			continue
		}
		p.Options = append(p.Options, OptionsStep{Option: o.Option, Want: want, Seen: raw, SeenFound: found,
			Changes: themeopt.Diff(raw, want), Conflict: raw != o.php})
	}
	return p, nil
}

// wanted is the options row a file wants, in its order: an id whose value
// reads as it did at export is taken from "php", so what JSON cannot tell
// apart survives; an edited one is json_decode'd. An id whose value is not
// what the row (raw) stores for it now is checked as POST /options checks
// a value (c): an id the configuration does not have, a value its field
// does not take and a non-finite number are refused; so is a PHP object
// (O:, C:, an enum case), in a value or as the set, whatever the flags:
// objects are imported only where the row holds them already.
func wanted(ctx context.Context, c *themeopt.Config, o OptionsWant, raw string, found bool) (string, error) {
	// The row as stored, within the budget (the plan and the history
	// compare it id by id, references expanded).
	cur := phpserial.Value{Kind: phpserial.Array}
	if found {
		if v, err := phpserial.MaybeUnserialize(raw); err == nil && (v.Kind == phpserial.Array || v.Kind == phpserial.Object) {
			if err := newBudget(ctx).walk(v); err != nil {
				return "", fmt.Errorf("the row %s stores: %w; not imported", o.Option, err)
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
		if class := objectIn(v); class != "" {
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

// sameJSON: a and b are the same JSON text but for whitespace.
func sameJSON(a, b string) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, []byte(a)) == nil && json.Compact(&cb, []byte(b)) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// ErrConflict: an import would overwrite rows changed since the export.
var ErrConflict = errors.New("changed in the database since the export (--force overwrites them)")

// Apply writes the plan: each group and each options row in a transaction
// of its own, checked to be still what was planned against (unless
// force), recorded in the history as by's; an options row's autoload is
// what the site's update_option would leave (dbVersion, the site's
// db_version: store.ModifyOption). With conflicts and no force, nothing is
// written.
func Apply(ctx context.Context, s Site, p Plan, force bool, by wpsidecar.Author, now string, dbVersion int64) error {
	if c := p.Conflicts(); len(c) > 0 && !force {
		return fmt.Errorf("%s: %w", strings.Join(c, ", "), ErrConflict)
	}
	by.Via = wpsidecar.ViaImport
	for _, g := range p.Groups {
		// Stopped (a signal): the rows before stay written.
		if err := ctx.Err(); err != nil {
			return err
		}
		check := func(cur fieldgroup.Group, found bool) error {
			if !force && (found != g.SeenFound || (found && cur.Value() != g.Seen)) {
				return fmt.Errorf("%s %s: %w", wpsidecar.FieldGroups, g.Key, ErrConflict)
			}
			return nil
		}
		var err error
		if g.Op == OpDelete {
			err = s.Groups.Delete(ctx, g.Key, func(cur fieldgroup.Group) error { return check(cur, true) }, by)
		} else {
			err = s.Groups.Put(ctx, g.Key, g.Want, now, check, by)
		}
		if err != nil {
			return err
		}
	}
	for _, o := range p.Options {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := s.DB.ModifyOption(ctx, o.Option, dbVersion, &by, func(raw string, found bool) (string, error) {
			if !force && (found != o.SeenFound || raw != o.Seen) {
				return "", fmt.Errorf("%s %s: %w", wpsidecar.ThemeOptions, o.Option, ErrConflict)
			}
			return o.Want, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

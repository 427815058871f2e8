package fieldmgr

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// Part is fieldmgr/v1 as files: DIR/fieldmgr/<key>.json a group.
// An import checks a group as POST /field-groups checks a body, and
// --prune deletes the groups without a file.
type Part struct {
	Table *fieldgrouptable.Groups
}

func (Part) Namespace() wpsidecar.Namespace { return wpsidecar.FieldGroups }
func (Part) Noun() string                   { return "field groups" }

// groupFile is DIR/fieldmgr/<key>.json. Config is the stored JSON text as
// a JSON value, or a string when an older writer stored it PHP-serialized.
type groupFile struct {
	Key      string          `json:"key"`
	Title    string          `json:"title"`
	Status   string          `json:"status"`
	Config   json.RawMessage `json:"config"`
	Exported string          `json:"exported"`
}

// digest names a group's stored state, for telling it changed.
func digest(g fieldgroup.Value) string {
	h := sha256.Sum256([]byte(g.Title + "\x00" + g.Status + "\x00" + g.Config))
	return "sha256:" + hex.EncodeToString(h[:])
}

// Export is every group; export.json lists the groups even when there is
// none, as what the export saw (--prune's conflicts).
func (k Part) Export(ctx context.Context) (exportdir.Exported, error) {
	list, err := k.Table.List(ctx)
	if err != nil {
		return exportdir.Exported{}, err
	}
	out := exportdir.Exported{ListNone: true}
	for _, g := range list {
		f := groupFile{Key: g.Key, Title: g.Title, Status: g.Status, Exported: digest(g.Value())}
		if json.Valid([]byte(g.Config)) && strings.HasPrefix(g.Config, "{") {
			f.Config = json.RawMessage(g.Config)
		} else {
			f.Config, _ = json.Marshal(g.Config)
		}
		out.Items = append(out.Items, exportdir.Item{Name: g.Key, Value: f})
	}
	return out, nil
}

// groupWant is a group as its file wants it stored.
type groupWant struct {
	key      string
	value    fieldgroup.Value
	exported string
	file     string
	// configJSON: the file's config was a JSON object (validated, and
	// compared with what is stored as JSON), not stored text.
	configJSON bool
	// invalid says why the config would be refused as a new value: it is
	// imported only as what is stored already.
	invalid string
}

// groupsWanted are the group files of a directory.
type groupsWanted struct {
	k      Part
	groups []groupWant
	// found: the directory has a fieldmgr/ (else pruning is refused: it
	// would delete every group). listed: the groups the export saw (nil
	// without its manifest).
	found  bool
	listed []string
}

// Read reads the group files; a key in two files (as the table's unique
// index compares keys: a key is ASCII) is refused.
func (k Part) Read(ctx context.Context, d exportdir.Dir) (exportdir.Wanted, error) {
	out := groupsWanted{k: k, found: d.Found, listed: d.Listed}
	seen := map[string]bool{}
	err := d.Each(func(f exportdir.File) error {
		w, err := readGroup(ctx, f)
		if err != nil {
			return err
		}
		if lower := strings.ToLower(w.key); seen[lower] {
			return fmt.Errorf("%s: group %q is in another file too", w.file, w.key)
		} else {
			seen[lower] = true
		}
		out.groups = append(out.groups, w)
		return nil
	})
	return out, err
}

// readGroup reads a group file.
func readGroup(ctx context.Context, file exportdir.File) (groupWant, error) {
	p := file.Path
	var f groupFile
	if err := file.Decode(&f); err != nil {
		return groupWant{}, fmt.Errorf("%s: %w", p, err)
	}
	if f.Status != fieldgroup.StatusActive && f.Status != fieldgroup.StatusInactive {
		return groupWant{}, fmt.Errorf("%s: status: must be active or inactive", p)
	}
	w := groupWant{key: f.Key, value: fieldgroup.Value{Title: f.Title, Status: f.Status}, exported: f.Exported, file: p}
	if _, err := fieldgroup.Validate(f.Key, f.Title, nil); err != nil {
		return w, fmt.Errorf("%s: %w", p, err)
	}
	var text string
	if err := json.Unmarshal(f.Config, &text); err == nil {
		// Stored as an older writer stored it: PHP-serialized, an array
		// of plain values (no object PHP would make on reading it), walked
		// within the budget whatever its references.
		w.value.Config = text
		v, err := phpserial.Unserialize(text)
		if err != nil || v.Kind != phpserial.Array {
			w.invalid = "config: a string must be a PHP-serialized array without objects"
			return w, nil
		}
		b := exportdir.NewBudget(ctx)
		switch err := b.Walk(v); {
		case errors.Is(err, exportdir.ErrTooLarge):
			w.invalid = "config: " + err.Error()
		case err != nil:
			return w, err
		case b.Object() != "":
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
		w.value.Config, w.invalid = compact.String(), err.Error()
		return w, nil
	}
	w.value.Config, w.configJSON = c, true
	// What the routes refuse of a body besides: a number json_decode
	// reads as INF (no JSON answer of the group could be written).
	if v, err := phpserial.FromJSONStrict(f.Config); err == nil {
		if at, bad := exportdir.NonFinite(v, "config"); bad {
			w.invalid = at + ": number beyond what a PHP float holds"
		}
	}
	return w, nil
}

// groupStep is one group to write.
type groupStep struct {
	key  string
	op   string
	want fieldgroup.Value
	// seen is the row as planned against (seenFound false: missing); the
	// write checks it is still that.
	seen      fieldgroup.Value
	seenFound bool
}

// Plan compares the files with the stored groups; prune deletes the
// groups that have no file.
func (gw groupsWanted) Plan(ctx context.Context, prune bool) ([]exportdir.Step, error) {
	var out []exportdir.Step
	list, err := gw.k.Table.List(ctx)
	if err != nil {
		return nil, err
	}
	// Keys are compared as the table's unique index compares them.
	stored := map[string]fieldgroup.Group{}
	for _, g := range list {
		stored[strings.ToLower(g.Key)] = g
	}
	for _, w := range gw.groups {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g, found := stored[strings.ToLower(w.key)]
		if found && g.Key != w.key {
			return nil, fmt.Errorf("%s: group %q is stored as %q: keys differ only in letter case; rename the file's key or the group", w.file, w.key, g.Key)
		}
		cur := g.Value()
		if found && (w.configJSON || w.invalid != "") && w.value.Config != cur.Config && sameJSON(w.value.Config, cur.Config) {
			w.value.Config = cur.Config // the same config, stored by another writer's hand
		}
		if w.invalid != "" && (!found || w.value.Config != cur.Config) {
			return nil, fmt.Errorf("%s: %s", w.file, w.invalid)
		}
		step := groupStep{key: w.key, want: w.value, seen: cur, seenFound: found}
		var conflict bool
		switch {
		case !found:
			step.op = exportdir.OpCreate
			// The export saw it: deleted since.
			conflict = w.exported != ""
		case cur != w.value:
			step.op = exportdir.OpChange
			conflict = w.exported != "" && digest(cur) != w.exported
		default:
			continue
		}
		out = append(out, gw.k.step(step, conflict))
	}
	if prune {
		if !gw.found {
			return nil, errors.New("--prune: the directory has no fieldmgr/: pruning would delete every field group")
		}
		have := map[string]bool{}
		for _, w := range gw.groups {
			have[strings.ToLower(w.key)] = true
		}
		exported := map[string]bool{}
		for _, k := range gw.listed {
			exported[k] = true
		}
		for _, g := range list {
			if !have[strings.ToLower(g.Key)] {
				// Created since the export (or no manifest says): a conflict.
				out = append(out, gw.k.step(groupStep{key: g.Key, op: exportdir.OpDelete, seen: g.Value(), seenFound: true}, !exported[g.Key]))
			}
		}
	}
	return out, nil
}

// step is s as a plan's step: a line, and its write, checked to find the
// row as planned against.
func (k Part) step(s groupStep, conflict bool) exportdir.Step {
	return exportdir.Step{
		Key:      s.key,
		Lines:    []string{fmt.Sprintf("%s: %s %s", wpsidecar.FieldGroups, s.op, s.key)},
		Conflict: conflict,
		Write: func(ctx context.Context, w exportdir.Writing) error {
			check := func(cur fieldgroup.Group, found bool) error {
				if !w.Force && (found != s.seenFound || (found && cur.Value() != s.seen)) {
					return fmt.Errorf("%s %s: %w", wpsidecar.FieldGroups, s.key, exportdir.ErrConflict)
				}
				return nil
			}
			if s.op == exportdir.OpDelete {
				return k.Table.Delete(ctx, s.key, func(cur fieldgroup.Group) error { return check(cur, true) }, w.By)
			}
			return k.Table.Put(ctx, s.key, s.want, w.Now, check, w.By)
		},
	}
}

// sameJSON: a and b are the same JSON text but for whitespace.
func sameJSON(a, b string) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, []byte(a)) == nil && json.Compact(&cb, []byte(b)) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

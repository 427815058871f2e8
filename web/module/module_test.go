package module_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/history"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/module"
	"github.com/wpsidecar/wpsidecar/web/openapi"
)

// Two toy namespaces, known only to this test: menus kept in a table of
// their own, notes in an option row.
type unit wpsidecar.Namespace

func (u unit) Namespace() wpsidecar.Namespace     { return wpsidecar.Namespace(u) }
func (unit) Summary() string                      { return "toy" }
func (unit) ItemsField() string                   { return "keys" }
func (unit) Listed() bool                         { return true }
func (unit) HistoryTag() string                   { return "t" }
func (unit) Labels() (one, many string)           { return "thing", "things" }
func (unit) HistoryCapability() string            { return "manage_options" }
func (unit) WriteValue(b *bytes.Buffer, v string) { b.WriteString(v) }

type reverter struct{}

func (reverter) Revert(context.Context, *store.DB, history.Entry, store.Revert) error { return nil }

type kind wpsidecar.Namespace

func (k kind) Namespace() wpsidecar.Namespace { return wpsidecar.Namespace(k) }
func (kind) Noun() string                     { return "toys" }
func (kind) Export(context.Context) (exportdir.Exported, error) {
	return exportdir.Exported{}, nil
}
func (kind) Read(context.Context, exportdir.Dir) (exportdir.Wanted, error) {
	return nil, nil
}

func toy(ns wpsidecar.Namespace, inTable bool, kindErr error) module.Module {
	m := module.Module{
		Unit: unit(ns), Reverter: reverter{},
		API: func() openapi.NamespaceDoc { return openapi.NamespaceDoc{Name: string(ns) + "/v1", Unit: unit(ns)} },
		Part: func(*store.DB, *multisite.Site) (exportdir.Part, error) {
			return kind(ns), kindErr
		},
	}
	if inTable {
		m.Table = &changes.Table{Namespace: ns, Name: "wp_" + string(ns)}
	} else {
		m.OptionRow = &changes.OptionRow{Namespace: ns, Name: func(int64) string { return string(ns) }}
	}
	return m
}

// TestDerived: every list the shared parts are handed is the modules',
// in their order, each kept where it says.
func TestDerived(t *testing.T) {
	mods := []module.Module{toy("menus", true, nil), toy("notes", false, nil)}
	var got []string
	for _, u := range module.Units(mods) {
		got = append(got, string(u.Namespace()))
	}
	for _, h := range module.HistoryUnits(mods) {
		got = append(got, string(h.Unit.Namespace()))
	}
	for _, a := range module.API(mods) {
		got = append(got, a.Name)
	}
	for _, tb := range module.Tables(mods) {
		got = append(got, "table "+tb.Name)
	}
	for _, r := range module.OptionRows(mods) {
		got = append(got, "row "+r.Name(1))
	}
	kinds, err := module.Parts(mods)(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		got = append(got, "kind "+string(k.Namespace()))
	}
	want := []string{"menus", "notes", "menus", "notes", "menus/v1", "notes/v1", "table wp_menus", "row notes", "kind menus", "kind notes"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestKinds_Error: a module's kind that cannot be opened fails them all.
func TestKinds_Error(t *testing.T) {
	broken := errors.New("broken")
	tests := []struct {
		name string
		mods []module.Module
		want error
	}{
		{"none", nil, nil},
		{"ok", []module.Module{toy("menus", true, nil)}, nil},
		{"second broken", []module.Module{toy("menus", true, nil), toy("notes", false, broken)}, broken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kinds, err := module.Parts(tt.mods)(nil, nil)
			if !errors.Is(err, tt.want) || (err == nil && len(kinds) != len(tt.mods)) {
				t.Errorf("kinds %v, err %v; want %v", kinds, err, tt.want)
			}
		})
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/cmd/namespaces"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/module"
	"github.com/wpsidecar/wpsidecar/web/openapi"
	"github.com/wpsidecar/wpsidecar/wire/routetable"
)

// menus is a third namespace that exists only here, kept in an option row
// of each site: what a new namespace's packages would provide.
const menus wpsidecar.Namespace = "menus"

type menuUnit struct{}

func (menuUnit) Namespace() wpsidecar.Namespace { return menus }
func (menuUnit) Summary() string                { return "Menus (menus/v1); edit_theme_options." }
func (menuUnit) ItemsField() string             { return "ids" }
func (menuUnit) Labels() (one, many string)     { return "menu", "menus" }
func (menuUnit) HistoryTag() string             { return "m" }
func (menuUnit) Listed() bool                   { return false }
func (menuUnit) HistoryCapability() string      { return "edit_theme_options" }
func (menuUnit) WriteValue(b *bytes.Buffer, v string) {
	json.NewEncoder(b).Encode(v)
}

// menusModule is the third namespace's module: its unit, history,
// OpenAPI namespace, option row and public kind.
func menusModule() module.Module {
	noDiff := func(before, after string) []wpsidecar.Item { return nil }
	return module.Module{
		Unit:     menuUnit{},
		Reverter: store.OptionArrayReverter{Namespace: menus, Diff: noDiff},
		API: func() openapi.NamespaceDoc {
			return openapi.NamespaceDoc{Name: "menus/v1", Unit: menuUnit{}, Routes: []routetable.Route{{Path: "/menus", Handlers: []routetable.MethodHandler{
				{Method: http.MethodGet, Doc: routetable.Operation{ID: "listMenus", Summary: "List the menus", Answer: "MenuList"}}}}},
				Schemas: map[string]any{"MenuList": map[string]any{"type": "array"}}}
		},
		OptionRow: &changes.OptionRow{Namespace: menus, Name: func(int64) string { return "menus" }, Diff: noDiff},
		Public: &publicroute.Source{Key: "menus", Namespace: menus, Parse: func(json.RawMessage, string) (publicroute.Selection, []string) {
			return nil, nil
		}},
	}
}

// TestThirdNamespace: a namespace added to the list is in everything
// derived from it — the recipes' and the companion's lists, the history's
// routes and units, OpenAPI, the option rows change detection follows,
// and the namespaces no public route may shadow — with no shared file
// edited.
func TestThirdNamespace(t *testing.T) {
	mods := append(namespaces.Modules(&config.Config{}, nil), menusModule())
	api := apiOf(mods)
	list, options, labels := listsOf(api)
	if list != "(fieldmgr|themeopts|menus|wpsidecar)" {
		t.Errorf("the recipes' list: %s", list)
	}
	if !strings.Contains(options, `<option value="menus"><?php esc_html_e( 'Menus', 'wpsidecar' ); ?></option>`) ||
		!strings.Contains(labels, "if ( 'menus' === namespace ) {\n\treturn __( 'Menu', 'wpsidecar' );") {
		t.Errorf("the companion's lists:\n%s\n%s", options, labels)
	}
	history := api[len(api)-1].Routes[0].Handlers[0].Doc
	if history.Summary != "List the history of field groups, theme options and menus" || history.Query[0].Description != "fieldmgr, themeopts or menus" {
		t.Errorf("the history's route: %q, its namespace parameter %q", history.Summary, history.Query[0].Description)
	}
	doc := string(openapi.Document(api, openapi.Configured{}))
	for _, want := range []string{`"title": "wpsidecar: field groups, theme options and menus"`, `"/wp-json/menus/v1/menus"`, `"menus"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("the OpenAPI description lacks %s", want)
		}
	}
	if rows := module.OptionRows(mods); len(rows) != 1 || rows[0].Namespace != menus {
		t.Errorf("the option rows followed: %+v", rows)
	}
	db, err := store.Open(store.Options{TablePrefix: "wp_", HistoryUnits: module.HistoryUnits(mods)})
	if err != nil {
		t.Fatalf("the store with the three namespaces' history: %v", err)
	}
	db.Close()
	if u := module.Units(mods).Find(menus); u == nil {
		t.Error("the units lack menus")
	}
	_, err = publicroute.ParseConfig([]byte(`{"routes":[{"path":"/wp-json/menus/v1/main","menus":[]}]}`), module.PublicSources(mods)...)
	if err == nil || !strings.Contains(err.Error(), "would shadow the routes under /wp-json/menus/") {
		t.Errorf("a public route over menus/v1: %v", err)
	}
}

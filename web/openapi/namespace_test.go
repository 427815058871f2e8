package openapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/web/historyapi"
	. "github.com/wpsidecar/wpsidecar/web/openapi"
	"github.com/wpsidecar/wpsidecar/wire/routetable"
)

// menus is a third namespace, known only to this test: menus/v1, menus by
// their key.
type menus struct{}

func (menus) Namespace() wpsidecar.Namespace       { return "menus" }
func (menus) Summary() string                      { return "Navigation menus (menus/v1); edit_theme_options." }
func (menus) ItemsField() string                   { return "keys" }
func (menus) Listed() bool                         { return true }
func (menus) HistoryTag() string                   { return "m" }
func (menus) Labels() (one, many string)           { return "menu", "menus" }
func (menus) HistoryCapability() string            { return "edit_theme_options" }
func (menus) WriteValue(b *bytes.Buffer, v string) { b.WriteString(v) }

// obj is a JSON object, as the package spells one.
type obj = map[string]any

var menuSchema = obj{"type": "object", "required": []string{"key", "title", "items"}}

func menusNamespace() NamespaceDoc {
	return NamespaceDoc{
		Name: "menus/v1",
		Routes: []routetable.Route{{Path: "/menus/{key:[a-z_]{1,64}}", Handlers: []routetable.MethodHandler{{Method: http.MethodGet,
			Doc: routetable.Operation{ID: "getMenu", Summary: "A menu", Answer: "Menu", Read: true,
				Errors: []routetable.ErrorDoc{{Status: http.StatusNotFound, Bare: true}}}}}}},
		Unit:       menus{},
		Schemas:    obj{"Menu": menuSchema},
		PathParams: obj{"key": obj{"description": "the menu's key", "schema": obj{"type": "string", "pattern": "^[a-z_]{1,64}$"}}},
	}
}

// described is what a test reads of a description.
type described struct {
	Info       struct{ Title, Description string }
	Tags       []struct{ Name, Description string }
	Paths      map[string]map[string]json.RawMessage
	Components struct{ Schemas map[string]json.RawMessage }
}

func describeAPI(t *testing.T, api []NamespaceDoc) described {
	t.Helper()
	var d described
	if err := json.Unmarshal(Document(api, Configured{}), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDocument_ThirdNamespace: a namespace this package does not know is
// described from what it gives: its paths under its tag, with its path
// parameter, its tag with its unit's summary, its schemas, its place in
// the history and the title; nothing of the others changes.
func TestDocument_ThirdNamespace(t *testing.T) {
	two := api(nil)
	d := describeAPI(t, []NamespaceDoc{two[0], two[1], menusNamespace(), two[2]})

	var get struct {
		Tags       []string
		Parameters []map[string]any
		Responses  map[string]json.RawMessage
	}
	if err := json.Unmarshal(d.Paths["/wp-json/menus/v1/menus/{key}"]["get"], &get); err != nil {
		t.Fatalf("no GET /wp-json/menus/v1/menus/{key}: %v (paths %v)", err, keys(d.Paths))
	}
	if !reflect.DeepEqual(get.Tags, []string{"menus"}) {
		t.Errorf("tags %v", get.Tags)
	}
	if !strings.Contains(string(get.Responses["200"]), `"$ref": "#/components/schemas/Menu"`) || !strings.Contains(string(get.Responses["404"]), "BareError") {
		t.Errorf("responses %s", get.Responses)
	}
	var params []map[string]any
	json.Unmarshal(d.Paths["/wp-json/menus/v1/menus/{key}"]["parameters"], &params)
	if len(params) != 1 || params[0]["name"] != "key" || params[0]["in"] != "path" || params[0]["description"] != "the menu's key" {
		t.Errorf("path parameters %v", params)
	}

	var names []string
	for _, tg := range d.Tags {
		names = append(names, tg.Name)
		if tg.Name == "menus" && tg.Description != (menus{}).Summary() {
			t.Errorf("menus tag: %q", tg.Description)
		}
		if tg.Name == "wpsidecar" && !strings.Contains(tg.Description, "field groups, theme options and menus") {
			t.Errorf("history tag: %q", tg.Description)
		}
	}
	if want := []string{"fieldmgr", "themeopts", "menus", "public", "wpsidecar"}; !reflect.DeepEqual(names, want) {
		t.Errorf("tags %v, want %v", names, want)
	}

	want, _ := json.Marshal(menuSchema)
	var got bytes.Buffer
	json.Compact(&got, d.Components.Schemas["Menu"])
	if got.String() != string(want) {
		t.Errorf("schema Menu: %s, want %s", got.String(), want)
	}
	var history struct {
		Items struct {
			Properties struct{ Namespace struct{ Enum []string } }
		}
	}
	json.Unmarshal(d.Components.Schemas["HistoryList"], &history)
	if want := []string{"fieldmgr", "themeopts", "menus"}; !reflect.DeepEqual(history.Items.Properties.Namespace.Enum, want) {
		t.Errorf("history's namespaces %v, want %v", history.Items.Properties.Namespace.Enum, want)
	}
	if d.Info.Title != "wpsidecar: field groups, theme options and menus" ||
		!strings.Contains(d.Info.Description, "The fieldmgr/v1, themeopts/v1 and menus/v1 REST namespaces") ||
		!strings.Contains(d.Info.Description, `fieldmgr's and menus's own errors are {"error": message}.`) {
		t.Errorf("info: %q, %q", d.Info.Title, d.Info.Description)
	}

	// The two namespaces' part is as without the third.
	without := describeAPI(t, two)
	for p, item := range without.Paths {
		if !reflect.DeepEqual(d.Paths[p], item) {
			t.Errorf("%s differs with a third namespace", p)
		}
	}
	for name, s := range without.Components.Schemas {
		if name != "HistoryList" && !bytes.Equal(d.Components.Schemas[name], s) {
			t.Errorf("schema %s differs with a third namespace", name)
		}
	}
}

// TestDocument_OnlyThird: the description needs neither field groups nor
// theme options: a sidecar of menus alone is described as such.
func TestDocument_OnlyThird(t *testing.T) {
	d := describeAPI(t, []NamespaceDoc{menusNamespace(), {Name: "wpsidecar/v1", Routes: historyapi.Routes(wpsidecar.Units{menus{}})}})
	if d.Info.Title != "wpsidecar: menus" || !strings.HasPrefix(d.Info.Description, "The menus/v1 REST namespace of") {
		t.Errorf("info: %q, %q", d.Info.Title, d.Info.Description)
	}
	for p := range d.Paths {
		if !strings.HasPrefix(p, "/wp-json/menus/v1/") && !strings.HasPrefix(p, "/wp-json/wpsidecar/v1/") {
			t.Errorf("path %s", p)
		}
	}
	if _, ok := d.Components.Schemas["FieldGroup"]; ok {
		t.Error("field groups' schemas without their namespace")
	}
	if _, ok := d.Paths["/wp-json/wpsidecar/v1/history/{entry}/revert"]; !ok {
		t.Errorf("no history revert path: %v", keys(d.Paths))
	}
}

// TestDocument_SchemaTwice: two namespaces giving one schema name is a
// wiring mistake, said at once rather than one silently winning.
func TestDocument_SchemaTwice(t *testing.T) {
	twin := menusNamespace()
	twin.Name = "menus2/v1"
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "schema Menu given twice (menus2/v1's)") {
			t.Errorf("recovered %v", r)
		}
	}()
	Document([]NamespaceDoc{menusNamespace(), twin}, Configured{})
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

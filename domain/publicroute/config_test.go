package publicroute_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
)

// kinds are the namespaces routes may show, as cmd's modules give them.
var kinds = []publicroute.Source{fieldgroup.PublicSource(), themeoption.PublicSource()}

func TestParseConfig(t *testing.T) {
	ok := `{"routes":[{"path":"/wp-json/site/v1/brand","themeopts":["accent_color"],"max_age":30,"s_maxage":600,"stale_while_revalidate":60,"stale_if_error":86400},
		{"path":"/wp-json/site/v1/product-fields","fieldmgr":{"status":"active","type":"post","post_type":"product"}}],"cors_origins":["https://www.example.com"]}`
	c, err := publicroute.ParseConfig([]byte(ok), kinds...)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Routes[0]; r.Namespace != wpsidecar.ThemeOptions || !reflect.DeepEqual(r.Selection, themeoption.IDs{"accent_color"}) || r.CacheControl() != "public, max-age=30, s-maxage=600, stale-while-revalidate=60, stale-if-error=86400" {
		t.Errorf("route 0: %s %#v %q", r.Namespace, r.Selection, r.CacheControl())
	}
	if r := c.Routes[1]; r.Namespace != wpsidecar.FieldGroups || !reflect.DeepEqual(r.Selection, &fieldgroup.Selector{Status: "active", Type: "post", PostType: "product"}) || r.CacheControl() != "public, max-age=60, s-maxage=60" {
		t.Errorf("route 1: %s %#v %q", r.Namespace, r.Selection, r.CacheControl())
	}
	for body, want := range map[string]string{
		`{"routes":[]}`: "routes: at least one route",
		`{"routes":[{"path":"/wp-json/fieldmgr/v1/field-groups","themeopts":["a"]}]}`:                            `routes[0].path: "/wp-json/fieldmgr/v1/field-groups" would shadow the routes under /wp-json/fieldmgr/`,
		`{"routes":[{"path":"/wp-json/wp/v2/brand","themeopts":["a"]}]}`:                                         `would shadow the routes under /wp-json/wp/`,
		`{"routes":[{"path":"/wp-json/wpsidecar/v1/history","themeopts":["a"]}]}`:                                `would shadow the routes under /wp-json/wpsidecar/`,
		`{"routes":[{"path":"/wp-json/themeopts/v2/brand","themeopts":["a"]}]}`:                                  `would shadow the routes under /wp-json/themeopts/`,
		`{"routes":[{"path":"/brand","themeopts":["a"]}]}`:                                                       `routes[0].path: "/brand" is not /wp-json/<namespace>/v<n>/<route>`,
		`{"routes":[{"path":"/wp-json/s/v1/a?x=1","themeopts":["a"]}]}`:                                          `is not /wp-json/<namespace>/v<n>/<route>`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["*"]}]}`:                                              `routes[0].themeopts[0]: "*" is not an option id (no wildcards)`,
		`{"routes":[{"path":"/wp-json/s/v1/a","fieldmgr":{}}]}`:                                                  `routes[0].fieldmgr: name at least one of keys, status, type, post_type, taxonomy (no route shows every group)`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["a"],"fieldmgr":{"status":"active"}}]}`:               `routes[0]: give exactly one of fieldmgr, themeopts`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["a"]},{"path":"/wp-json/s/v1/A","themeopts":["b"]}]}`: `routes[1].path: "/wp-json/s/v1/A" is given twice`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["a"],"max_age":-1}]}`:                                 `routes[0]: cache lifetimes are seconds, 0 or more`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["a"]}],"cors_origins":["https://x.test/path"]}`:       `cors_origins[0]: "https://x.test/path" is not an origin`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["a"],"maxage":1}]}`:                                   `routes[0]: json: unknown field "maxage"`,
		`{"routes":[{"path":"/wp-json/s/v1/a"}]}`:                                                                `routes[0]: give exactly one of fieldmgr, themeopts`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":[]}]}`:                                                 `routes[0].themeopts: name at least one option id`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":"a"}]}`:                                                `routes[0].themeopts: not a list of option ids`,
		`{"routes":[{"path":"/wp-json/s/v1/a","fieldmgr":{"state":"x"}}]}`:                                       `routes[0].fieldmgr: not a selector`,
		`{"routes":[{"path":"/wp-json/s/v1/a","fieldmgr":{"keys":["a b"]}}]}`:                                    `routes[0].fieldmgr.keys[0]: "a b" is not a field group key`,
		`{"routes":[{"path":"/wp-json/s/v1/a","menus":["main"]}]}`:                                               `routes[0]: json: unknown field "menus"`,
	} {
		if _, err := publicroute.ParseConfig([]byte(body), kinds...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// A route shows a change — its URL is purged — when it lists the field
// groups and they changed, or shows one of the theme option ids changed;
// a namespace routes cannot show, never.
func TestRoute_Shows(t *testing.T) {
	groups := publicroute.Route{Path: "/g", Namespace: wpsidecar.FieldGroups, Selection: &fieldgroup.Selector{}}
	opts := publicroute.Route{Path: "/o", Namespace: wpsidecar.ThemeOptions, Selection: themeoption.IDs{"logo", "accent"}}
	commit := func(ns wpsidecar.Namespace, keys ...string) wpsidecar.Commit {
		c := wpsidecar.Commit{Namespace: ns}
		for _, k := range keys {
			c.Items = append(c.Items, wpsidecar.Item{Key: k})
		}
		return c
	}
	for _, c := range []struct {
		route publicroute.Route
		c     wpsidecar.Commit
		want  bool
	}{
		{groups, commit(wpsidecar.FieldGroups, "any"), true},
		{groups, commit(wpsidecar.ThemeOptions, "logo"), false},
		{opts, commit(wpsidecar.ThemeOptions, "footer", "accent"), true},
		{opts, commit(wpsidecar.ThemeOptions, "footer"), false},
		{opts, commit(wpsidecar.FieldGroups, "logo"), false},
		{groups, commit("menus", "main"), false},
		{opts, commit("menus", "logo"), false},
	} {
		if got := c.route.Shows(c.c); got != c.want {
			t.Errorf("%s shows %s %v: %v, want %v", c.route.Path, c.c.Namespace, c.c.Keys(), got, c.want)
		}
	}
}

package publicroute_test

import (
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
)

func TestParseConfig(t *testing.T) {
	ok := `{"routes":[{"path":"/wp-json/site/v1/brand","themeopts":["accent_color"],"max_age":30,"s_maxage":600,"stale_while_revalidate":60,"stale_if_error":86400},
		{"path":"/wp-json/site/v1/product-fields","fieldmgr":{"status":"active","type":"post","post_type":"product"}}],"cors_origins":["https://www.example.com"]}`
	if _, err := publicroute.ParseConfig([]byte(ok)); err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]string{
		`{"routes":[]}`: "routes: at least one route",
		`{"routes":[{"path":"/wp-json/fieldmgr/v1/field-groups","themeopts":["a"]}]}`:                            `routes[0].path: "/wp-json/fieldmgr/v1/field-groups" would shadow the routes under /wp-json/fieldmgr/`,
		`{"routes":[{"path":"/wp-json/wp/v2/brand","themeopts":["a"]}]}`:                                         `would shadow the routes under /wp-json/wp/`,
		`{"routes":[{"path":"/brand","themeopts":["a"]}]}`:                                                       `routes[0].path: "/brand" is not /wp-json/<namespace>/v<n>/<route>`,
		`{"routes":[{"path":"/wp-json/s/v1/a?x=1","themeopts":["a"]}]}`:                                          `is not /wp-json/<namespace>/v<n>/<route>`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["*"]}]}`:                                              `routes[0].themeopts[0]: "*" is not an option id (no wildcards)`,
		`{"routes":[{"path":"/wp-json/s/v1/a","fieldmgr":{}}]}`:                                                  `routes[0].fieldmgr: name at least one of keys, status, type, post_type, taxonomy (no route shows every group)`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["a"],"fieldmgr":{"status":"active"}}]}`:               `routes[0]: give exactly one of themeopts`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["a"]},{"path":"/wp-json/s/v1/A","themeopts":["b"]}]}`: `routes[1].path: "/wp-json/s/v1/A" is given twice`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["a"],"max_age":-1}]}`:                                 `routes[0]: cache lifetimes are seconds, 0 or more`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["a"]}],"cors_origins":["https://x.test/path"]}`:       `cors_origins[0]: "https://x.test/path" is not an origin`,
		`{"routes":[{"path":"/wp-json/s/v1/a","themeopts":["a"],"maxage":1}]}`:                                   `unknown field "maxage"`,
	} {
		if _, err := publicroute.ParseConfig([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// A route shows a change — its URL is purged — when it lists the field
// groups and they changed, or shows one of the theme option ids changed;
// a namespace routes cannot show, never.
func TestRoute_Shows(t *testing.T) {
	groups := publicroute.Route{Path: "/g", Fieldmgr: &publicroute.Selector{}}
	opts := publicroute.Route{Path: "/o", Themeopts: []string{"logo", "accent"}}
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

//go:build e2e

package multisite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
)

// wordpressCore is Debian's WordPress (scripts/install-deps.sh).
const wordpressCore = "/usr/share/wordpress"

// TestResolveAsWordPress builds networks in a real database and asks
// WordPress's own ms_load_current_site_and_network (scripts/wp/ms-resolve.php)
// and Map.Resolve the same questions: every answer — the site, the
// redirect, or "not installed" — must be the same.
func TestResolveAsWordPress(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "..", "..", "scripts", "wp", "ms-resolve.php")
	type scenario struct {
		name     string
		networks []multisite.Network
		sites    []multisite.Site
		c        multisite.Constants
		boot     [2]string
	}
	one := []multisite.Network{{ID: 1, Domain: "example.test", Path: "/"}}
	gone := "https://example.test/gone"
	scenarios := []scenario{
		{"subdirectory", one, []multisite.Site{
			{ID: 1, NetworkID: 1, Domain: "example.test", Path: "/"},
			{ID: 2, NetworkID: 1, Domain: "example.test", Path: "/shop/"},
			{ID: 3, NetworkID: 1, Domain: "example.test", Path: "/shop/deep/"},
			{ID: 4, NetworkID: 1, Domain: "mapped.test", Path: "/"},
			{ID: 5, NetworkID: 1, Domain: "example.test", Path: "/archived/", Archived: true},
		}, multisite.Constants{}, [2]string{"example.test", "/"}},
		{"subdirectory, declared", one, []multisite.Site{
			{ID: 1, NetworkID: 1, Domain: "example.test", Path: "/"},
			{ID: 2, NetworkID: 1, Domain: "example.test", Path: "/shop/"},
		}, multisite.Constants{Defined: true, Domain: "example.test", Path: "/", NetworkID: 1}, [2]string{"example.test", "/"}},
		{"declared with a path", []multisite.Network{{ID: 1, Domain: "example.test", Path: "/wp/"}}, []multisite.Site{
			{ID: 1, NetworkID: 1, Domain: "example.test", Path: "/wp/"},
			{ID: 2, NetworkID: 1, Domain: "example.test", Path: "/wp/shop/"},
			{ID: 3, NetworkID: 1, Domain: "other.test", Path: "/"},
		}, multisite.Constants{Defined: true, Domain: "example.test", Path: "/wp/", NetworkID: 1}, [2]string{"example.test", "/wp/"}},
		{"subdomain", one, []multisite.Site{
			{ID: 1, NetworkID: 1, Domain: "example.test", Path: "/"},
			{ID: 2, NetworkID: 1, Domain: "shop.example.test", Path: "/"},
			{ID: 3, NetworkID: 1, Domain: "mapped.test", Path: "/"},
		}, multisite.Constants{Subdomain: true}, [2]string{"example.test", "/"}},
		{"subdomain, NOBLOGREDIRECT", one, []multisite.Site{
			{ID: 1, NetworkID: 1, Domain: "example.test", Path: "/"},
		}, multisite.Constants{Subdomain: true, NoBlogRedirect: &gone}, [2]string{"example.test", "/"}},
		{"two networks", []multisite.Network{{ID: 1, Domain: "example.test", Path: "/"}, {ID: 2, Domain: "other.test", Path: "/"}}, []multisite.Site{
			{ID: 1, NetworkID: 1, Domain: "example.test", Path: "/"},
			{ID: 5, NetworkID: 2, Domain: "other.test", Path: "/"},
			{ID: 6, NetworkID: 2, Domain: "other.test", Path: "/news/"},
		}, multisite.Constants{}, [2]string{"example.test", "/"}},
	}
	cases := [][2]string{
		{"example.test", "/"}, {"example.test", "/wp-json/fieldmgr/v1/field-groups"}, {"example.test", "/shop/wp-json/"},
		{"example.test", "/shop"}, {"example.test", "/SHOP/wp-json/"}, {"example.test", "/shop/deep/x"}, {"example.test", "/nope/"},
		{"example.test", "/archived/"}, {"example.test", "/wp/"}, {"example.test", "/wp/shop/wp-json/"}, {"example.test", "/wp/nope/"},
		{"example.test", "/elsewhere/"}, {"www.example.test", "/shop/"}, {"mapped.test", "/"}, {"mapped.test", "/shop/"},
		{"shop.example.test", "/wp-json/"}, {"www.shop.example.test", "/"}, {"nope.example.test", "/wp-json/"},
		{"unknown.test", "/"}, {"other.test", "/news/wp-json/"}, {"other.test", "/"}, {"sub.other.test", "/"},
	}
	server := testdb.ServerConfig(t)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			tdb := testdb.New(t)
			networkTables(t, tdb, sc.networks, sc.sites)
			in := map[string]any{
				"db":        map[string]string{"name": tdb.Name, "user": server.User, "password": server.Passwd, "host": server.Addr},
				"subdomain": sc.c.Subdomain, "boot": sc.boot, "cases": cases,
			}
			if sc.c.Defined {
				in["declared"] = map[string]any{"domain": sc.c.Domain, "path": sc.c.Path, "site_id": sc.c.NetworkID, "blog_id": 1}
			}
			if sc.c.NoBlogRedirect != nil {
				in["noblogredirect"] = *sc.c.NoBlogRedirect
			}
			arg, _ := json.Marshal(in)
			out, err := exec.Command("php", script, wordpressCore, string(arg)).Output()
			if err != nil {
				t.Fatalf("php: %v\n%s", err, out)
			}
			t.Logf("WordPress: %s", out)
			var wp []struct {
				Result string `json:"result"`
				Blog   int64  `json:"blog"`
			}
			if err := json.Unmarshal(out, &wp); err != nil || len(wp) != len(cases) {
				t.Fatalf("php printed %s: %v", out, err)
			}
			m, err := tdb.Store(t).LoadNetwork(context.Background(), sc.c)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range cases {
				want := wp[i].Result
				if want == "ok" {
					want = fmt.Sprintf("site %d", wp[i].Blog)
				}
				r := m.Resolve(c[0], c[1], false)
				got := "none"
				switch {
				case r.Site != nil:
					got = fmt.Sprintf("site %d", r.Site.ID)
				case r.Redirect != "":
					got = r.Redirect
				}
				if got != want {
					t.Errorf("%s%s: %s; WordPress: %s", c[0], c[1], got, want)
				}
			}
		})
	}
}

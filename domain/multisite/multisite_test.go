package multisite

import "testing"

func strp(s string) *string { return &s }

// TestResolve follows ms_load_current_site_and_network through its
// branches: a subdirectory network (one network, sites by the segment
// after the network's path), a subdomain network (sites by domain, a
// www. request, sites with a domain of their own), the network declared
// in wp-config.php (with a path of its own), two networks, and what
// WordPress does when no site is found.
func TestResolve(t *testing.T) {
	subdir := Map{
		Networks: []Network{{1, "example.test", "/"}},
		Sites: []Site{
			{ID: 1, NetworkID: 1, Domain: "example.test", Path: "/"},
			{ID: 2, NetworkID: 1, Domain: "example.test", Path: "/shop/"},
			{ID: 3, NetworkID: 1, Domain: "example.test", Path: "/blog/", Archived: true},
			{ID: 4, NetworkID: 1, Domain: "mapped.test", Path: "/"},
		},
	}
	subdomain := Map{
		Networks: []Network{{1, "example.test", "/"}},
		Sites: []Site{
			{ID: 1, NetworkID: 1, Domain: "example.test", Path: "/"},
			{ID: 2, NetworkID: 1, Domain: "shop.example.test", Path: "/"},
			{ID: 3, NetworkID: 1, Domain: "mapped.test", Path: "/"},
		},
		Const: Constants{Subdomain: true},
	}
	declared := Map{
		Networks: []Network{{1, "example.test", "/wp/"}},
		Sites: []Site{
			{ID: 1, NetworkID: 1, Domain: "example.test", Path: "/wp/"},
			{ID: 2, NetworkID: 1, Domain: "example.test", Path: "/wp/shop/"},
		},
		Const: Constants{Defined: true, Domain: "example.test", Path: "/wp/", NetworkID: 1},
	}
	twoNetworks := Map{
		Networks: []Network{{1, "example.test", "/"}, {2, "other.test", "/"}},
		Sites: []Site{
			{ID: 1, NetworkID: 1, Domain: "example.test", Path: "/"},
			{ID: 5, NetworkID: 2, Domain: "other.test", Path: "/"},
			{ID: 6, NetworkID: 2, Domain: "other.test", Path: "/news/"},
		},
	}
	noBlogRedirect := subdomain
	noBlogRedirect.Const.NoBlogRedirect = strp("https://example.test/nothing-here")
	tests := []struct {
		name         string
		m            Map
		domain, path string
		site         int64 // 0: none
		redirect     string
	}{
		{"subdirectory: main site", subdir, "example.test", "/", 1, ""},
		{"subdirectory: a site's REST route", subdir, "example.test", "/shop/wp-json/fieldmgr/v1/field-groups", 2, ""},
		{"subdirectory: the site path without its slash", subdir, "example.test", "/shop", 2, ""},
		{"subdirectory: case of the path", subdir, "example.test", "/SHOP/wp-json/", 2, ""},
		{"subdirectory: an unknown first segment is the main site", subdir, "example.test", "/nope/wp-json/", 1, ""},
		{"subdirectory: an archived site is still found", subdir, "example.test", "/blog/", 3, ""},
		{"subdirectory: a site on a domain of its own", subdir, "mapped.test", "/wp-json/", 4, ""},
		{"subdirectory: an unknown host", subdir, "unknown.test", "/", 0, "http://example.test/"},
		{"subdirectory: www of the network", subdir, "www.example.test", "/shop/", 2, ""},
		{"subdomain: main site", subdomain, "example.test", "/wp-json/", 1, ""},
		{"subdomain: a site", subdomain, "shop.example.test", "/wp-json/fieldmgr/v1/field-groups", 2, ""},
		{"subdomain: www of a site", subdomain, "www.shop.example.test", "/", 2, ""},
		{"subdomain: a mapped domain", subdomain, "mapped.test", "/", 3, ""},
		{"subdomain: no such site: the signup form", subdomain, "nope.example.test", "/wp-json/", 0, "http://example.test/wp-signup.php?new=nope"},
		{"subdomain: no such site, NOBLOGREDIRECT", noBlogRedirect, "nope.example.test", "/", 0, "https://example.test/nothing-here"},
		{"declared: the network's own path", declared, "example.test", "/wp/", 1, ""},
		{"declared: a site under the network's path", declared, "example.test", "/wp/shop/wp-json/", 2, ""},
		{"declared: outside the network's path", declared, "example.test", "/elsewhere/", 0, ""},
		{"two networks: by domain", twoNetworks, "other.test", "/news/wp-json/", 6, ""},
		{"two networks: the other's main site", twoNetworks, "other.test", "/wp-json/", 5, ""},
		{"two networks: a parent domain's network", twoNetworks, "sub.other.test", "/", 0, "http://other.test/"},
	}
	for _, tt := range tests {
		// Scanned and indexed, the same answers.
		indexed := tt.m
		indexed.Index()
		for _, m := range []Map{tt.m, indexed} {
			t.Run(tt.name, func(t *testing.T) {
				r := m.Resolve(tt.domain, tt.path, false)
				got := int64(0)
				if r.Site != nil {
					got = r.Site.ID
				}
				if got != tt.site || r.Redirect != tt.redirect {
					t.Errorf("Resolve(%q, %q) = site %d redirect %q; want %d %q (indexed: %v)", tt.domain, tt.path, got, r.Redirect, tt.site, tt.redirect, m.byPath != nil)
				}
				if r.Site != nil && (r.Network == nil || r.Network.ID != r.Site.NetworkID) {
					t.Errorf("site %d on network %+v", r.Site.ID, r.Network)
				}
			})
		}
	}
	if r := subdir.Resolve("unknown.test", "/", true); r.Redirect != "https://example.test/" {
		t.Errorf("over HTTPS: %q", r.Redirect)
	}
	if got := (&Map{}).Resolve("example.test", "/", false); got.Site != nil || got.Network != nil || got.Redirect != "" {
		t.Errorf("no network: %+v", got)
	}
	for _, s := range []struct {
		site Site
		want string
	}{{Site{}, ""}, {Site{Deleted: 1}, "deleted"}, {Site{Deleted: 2}, "inactive"}, {Site{Archived: true}, "suspended"}, {Site{Spam: true}, "suspended"}} {
		if got := s.site.Blocked(); got != s.want {
			t.Errorf("Blocked(%+v) = %q, want %q", s.site, got, s.want)
		}
	}
}

// BenchmarkResolve: a request's site on a subdirectory network of 100
// sites, as every REST request of a network asks.
func BenchmarkResolve(b *testing.B) {
	m := Map{Networks: []Network{{1, "example.test", "/"}}, Const: Constants{Defined: true, Domain: "example.test", Path: "/", NetworkID: 1}}
	for i := int64(1); i <= 100; i++ {
		path := "/"
		if i > 1 {
			path = "/site" + string(rune('0'+i/10)) + string(rune('0'+i%10)) + "/"
		}
		m.Sites = append(m.Sites, Site{ID: i, NetworkID: 1, Domain: "example.test", Path: path})
	}
	m.Index()
	b.ReportAllocs()
	for b.Loop() {
		if r := m.Resolve("example.test", "/site57/wp-json/fieldmgr/v1/field-groups", false); r.Site == nil || r.Site.ID != 57 {
			b.Fatal(r)
		}
	}
}

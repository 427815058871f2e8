package multisite_test

import (
	"context"
	"testing"

	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
)

// networkTables makes WordPress's network tables in tdb and fills them.
func networkTables(t *testing.T, tdb *testdb.DB, networks []multisite.Network, sites []multisite.Site) {
	t.Helper()
	tdb.AddNetworkTables(t)
	tdb.AddSitemeta(t)
	for _, n := range networks {
		if _, err := tdb.SQL.Exec("INSERT INTO wp_site (id, domain, path) VALUES (?, ?, ?)", n.ID, n.Domain, n.Path); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range sites {
		if _, err := tdb.SQL.Exec("INSERT INTO wp_blogs (blog_id, site_id, domain, path, archived, spam, deleted) VALUES (?, ?, ?, ?, ?, ?, ?)",
			s.ID, s.NetworkID, s.Domain, s.Path, s.Archived, s.Spam, s.Deleted); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoad reads a network's tables as WordPress's schema makes them.
func TestLoad(t *testing.T) {
	tdb := testdb.New(t)
	networkTables(t, tdb, []multisite.Network{{ID: 1, Domain: "example.test", Path: "/"}}, []multisite.Site{
		{ID: 1, NetworkID: 1, Domain: "example.test", Path: "/"},
		{ID: 2, NetworkID: 1, Domain: "example.test", Path: "/shop/", Spam: true, Deleted: 2},
	})
	m, err := tdb.Store(t).LoadNetwork(context.Background(), multisite.Constants{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Networks) != 1 || m.Networks[0] != (multisite.Network{ID: 1, Domain: "example.test", Path: "/"}) || len(m.Sites) != 2 {
		t.Fatalf("map %+v", m)
	}
	if s := m.Sites[1]; s.ID != 2 || s.Path != "/shop/" || !s.Spam || s.Deleted != 2 || s.Archived {
		t.Errorf("site %+v", s)
	}
	if r := m.Resolve("example.test", "/shop/wp-json/", false); r.Site == nil || r.Site.ID != 2 || r.Site.Blocked() != "inactive" {
		t.Errorf("resolve %+v", r)
	}
}

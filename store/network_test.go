package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestNetworkWatcher: nothing before the first read; a site added is in
// the map after the next refresh; a failed read keeps the last map.
func TestNetworkWatcher(t *testing.T) {
	tdb := testdb.New(t)
	tdb.AddNetworkTables(t)
	for _, q := range []string{
		"INSERT INTO wp_site (domain, path) VALUES ('example.test', '/')",
		"INSERT INTO wp_blogs (site_id, domain, path) VALUES (1, 'example.test', '/')",
	} {
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	w := store.NewNetworkWatcher(tdb.Store(t), multisite.Constants{}, time.Hour)
	if _, err := w.Current(); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("before the first read: %v", err)
	}
	ctx := context.Background()
	if err := w.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if m, _ := w.Current(); m.Resolve("example.test", "/shop/", false).Site.ID != 1 {
		t.Error("the main site does not answer /shop/ before the site exists")
	}
	tdb.SQL.Exec("INSERT INTO wp_blogs (site_id, domain, path) VALUES (1, 'example.test', '/shop/')")
	if err := w.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if m, _ := w.Current(); m.Resolve("example.test", "/shop/", false).Site.ID != 2 {
		t.Error("a site added is not in the map after a refresh")
	}
	tdb.SQL.Exec("RENAME TABLE wp_blogs TO wp_blogs_away")
	if err := w.Refresh(ctx); err == nil {
		t.Fatal("a read of a missing table did not fail")
	}
	if m, err := w.Current(); err != nil || len(m.Sites) != 2 {
		t.Errorf("after a failed read: %v %v", m, err)
	}
}

package multisite_test

import (
	"context"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/testdb"
	"github.com/wpsidecar/wpsidecar/store/multisite"
)

// TestLoad reads a network's tables as WordPress's schema makes them.
func TestLoad(t *testing.T) {
	tdb := testdb.New(t)
	for _, q := range []string{
		"CREATE TABLE wp_site (id bigint(20) NOT NULL auto_increment, domain varchar(200) NOT NULL default '', path varchar(100) NOT NULL default '', PRIMARY KEY (id), KEY domain (domain(140),path(51)))",
		"CREATE TABLE wp_blogs (blog_id bigint(20) NOT NULL auto_increment, site_id bigint(20) NOT NULL default '0', domain varchar(200) NOT NULL default '', path varchar(100) NOT NULL default '', registered datetime NOT NULL, last_updated datetime NOT NULL, public tinyint(2) NOT NULL default '1', archived tinyint(2) NOT NULL default '0', mature tinyint(2) NOT NULL default '0', spam tinyint(2) NOT NULL default '0', deleted tinyint(2) NOT NULL default '0', lang_id int(11) NOT NULL default '0', PRIMARY KEY (blog_id), KEY domain (domain(50),path(5)), KEY lang_id (lang_id))",
		"INSERT INTO wp_site (domain, path) VALUES ('example.test', '/')",
		"INSERT INTO wp_blogs (site_id, domain, path, registered, last_updated) VALUES (1, 'example.test', '/', NOW(), NOW())",
		"INSERT INTO wp_blogs (site_id, domain, path, registered, last_updated, spam, deleted) VALUES (1, 'example.test', '/shop/', NOW(), NOW(), 1, 2)",
	} {
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	m, err := multisite.Load(context.Background(), tdb.SQL, "wp_", multisite.Constants{})
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

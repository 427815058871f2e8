package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
)

// layoutCopy copies config/wpconfig/testdata/layouts/name into a temporary
// directory, naming the test's database and server where the fixture names
// wpsidecar_layouts on 127.0.0.1:3306, and writes files (relative name →
// content) over it.
func layoutCopy(t *testing.T, name, dbName string, files map[string]string) string {
	t.Helper()
	c := testdb.ServerConfig(t)
	if c.User != "root" || c.Passwd != "" {
		t.Fatalf("the layout fixtures sign in as root without a password; WPSIDECAR_TEST_DSN names %s", c.User)
	}
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "..", "config", "wpconfig", "testdata", "layouts", name))); err != nil {
		t.Fatal(err)
	}
	for rel, content := range files {
		if err := os.WriteFile(filepath.Join(dst, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, port, _ := net.SplitHostPort(c.Addr)
		s := strings.NewReplacer("wpsidecar_layouts", dbName, "127.0.0.1:3306", c.Addr, "':' . 3306", "':' . "+port).Replace(string(b))
		return os.WriteFile(p, []byte(s), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

var oneGroup = regexp.MustCompile(`^\{"id":"first","title":"First","config":\{"type":"post","post_type":"post","position":"normal","fields":\{\}\},"status":"active","created_at":"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}","updated_at":"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}"\}$`)

// TestRun_Layouts: from each way sites keep their configuration, the
// sidecar starts with --wp-config alone (and --upstream) and answers its
// routes itself.
func TestRun_Layouts(t *testing.T) {
	php := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "php for "+r.Host+r.URL.RequestURI()) }))
	defer php.Close()
	const login, password = "admin", "abcdefghijklmnopqrstuvwx"
	args := func(wpConfig string) []string {
		return []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--upstream", php.URL, "--wp-config", wpConfig}
	}
	tests := []struct {
		layout, path string
		files        map[string]string
		env          []string
	}{
		{"flat", "wp-config.php", nil, nil},
		{"dir-include", ".", nil, nil},
		{"outside", "public/wp-config.php", nil, nil},
		{"guarded", ".", nil, []string{"LAYOUT_DB_HOST=" + testdb.ServerConfig(t).Addr}},
		{"bedrock", ".", nil, nil},
		{"bedrock", "web/wp-config.php", map[string]string{".env.local": "WP_ENV=development\n",
			".env": "DATABASE_URL=mysql://root:@127.0.0.1:3306/wpsidecar_layouts\nWP_HOME=http://example.test\nWP_SITEURL=${WP_HOME}/wp\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.layout+" "+tt.path, func(t *testing.T) {
			tdb := testdb.New(t)
			testsite.New(t, tdb, testsite.User{Login: login, Role: "administrator", AppPassword: password})
			dir := layoutCopy(t, tt.layout, tdb.Name, tt.files)
			s := start(t, args(filepath.Join(dir, tt.path)), tt.env)
			waitReady(t, s)
			groups := s.public + "/wp-json/fieldmgr/v1/field-groups"
			if code, body, _ := testsite.Send(t, http.MethodGet, groups, "", login, password); code != 200 || body != "[]" {
				t.Fatalf("GET: %d %s\n%s", code, body, s.log)
			}
			code, created, _ := testsite.Send(t, http.MethodPost, groups, `{"group_key":"first","title":"First"}`, login, password)
			if code != 201 || created != `{"success":true,"message":"Field group created","id":"first"}` {
				t.Fatalf("POST: %d %s", code, created)
			}
			code, body, _ := testsite.Send(t, http.MethodGet, groups+"/first", "", login, password)
			if !oneGroup.MatchString(body) || code != 200 {
				t.Errorf("GET one: %d %s", code, body)
			}
			if code, body := get(t, s.public+"/a-page/"); code != 200 || !strings.HasPrefix(body, "php for ") {
				t.Errorf("pass-through: %d %s", code, body)
			}
		})
	}

	// A network whose constants are in an included file is served site by
	// site without --multisite; a network the configuration does not
	// declare is said loudly, at start and in /readyz.
	network := func(t *testing.T) *testdb.DB {
		tdb := testdb.New(t)
		testsite.New(t, tdb)
		tdb.AddSitemeta(t)
		tdb.AddNetworkTables(t)
		for _, q := range []string{
			"INSERT INTO wp_site (domain, path) VALUES ('example.test', '/')",
			"INSERT INTO wp_sitemeta (site_id, meta_key, meta_value) VALUES (1, 'siteurl', 'http://example.test/')",
			"INSERT INTO wp_blogs (site_id, domain, path) VALUES (1, 'example.test', '/'), (1, 'example.test', '/blog2/')",
		} {
			if _, err := tdb.SQL.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		tdb.AddSite(t, 2, "http://example.test/blog2")
		return tdb
	}
	ask := func(t *testing.T, s *started, path string) string {
		req, _ := http.NewRequest(http.MethodGet, s.public+path, nil)
		req.Host = "example.test"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("Link") + " " + string(b)
	}
	const denied = `; rel="https://api.w.org/" {"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":401}}`
	t.Run("network in an included file", func(t *testing.T) {
		tdb := network(t)
		s := start(t, args(layoutCopy(t, "network", tdb.Name, nil)), nil)
		waitReady(t, s)
		testwait.For(t, "the second site served", func() bool {
			return ask(t, s, "/blog2/wp-json/fieldmgr/v1/field-groups") == "<http://example.test/blog2/wp-json/>"+denied
		})
		if got := ask(t, s, "/wp-json/fieldmgr/v1/field-groups"); got != "<http://example.test/wp-json/>"+denied {
			t.Errorf("main site: %s", got)
		}
	})
	t.Run("network not declared", func(t *testing.T) {
		tdb := network(t)
		s := start(t, args(layoutCopy(t, "flat", tdb.Name, nil)), nil)
		waitReady(t, s)
		want := `"multisite":"the database holds a network of 2 sites but the configuration read says single site: only the main site is served; pass --multisite"`
		testwait.For(t, "readyz saying why", func() bool { _, body := get(t, s.admin+"/readyz"); return strings.Contains(body, want) })
		testwait.For(t, "the warning logged", func() bool {
			l := s.log.String()
			return strings.Contains(l, `"level":"warn","component":"store","sites":2,"table":"wp_blogs",`) &&
				strings.Contains(l, `"message":"the database holds a multisite network but the configuration read says single site: only the main site is served, every other site's requests go to PHP; pass --multisite`)
		})
		if got := ask(t, s, "/blog2/wp-json/fieldmgr/v1/field-groups"); got != " php for example.test/blog2/wp-json/fieldmgr/v1/field-groups" {
			t.Errorf("a site of the undeclared network: %s", got)
		}
	})
}

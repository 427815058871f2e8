// Package testsite makes a test database into a WordPress site whose users
// sign in with application passwords, and serves the sidecar's namespaces
// from it, for handler tests.
package testsite

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/proxy"
	"github.com/wpsidecar/wpsidecar/web/rest"
)

// User is a user with a role and one application password.
type User struct{ Login, Role, AppPassword string }

// Site is the store, settings and authenticator over a test database.
type Site struct {
	DB       *store.DB
	Settings *store.SettingsWatcher
	Auth     *auth.Authenticator
}

// New gives tdb WordPress 6.1's roles, a 6.8 db_version and application
// passwords in use, adds users, and reads the settings once (they are
// re-read only by Settings.Refresh).
func New(t testing.TB, tdb *testdb.DB, users ...User) *Site {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	roles, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "..", "auth", "testdata", "user_roles_6.1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tdb.SetOption(t, "wp_user_roles", strings.TrimSpace(string(roles)))
	tdb.SetOption(t, "using_application_passwords", "1")
	tdb.SetOption(t, "db_version", "61833")
	for _, u := range users {
		AddUser(t, tdb, u)
	}
	db := tdb.Store(t)
	w := store.NewSettingsWatcher(db, time.Hour, store.SiteURLs{})
	if err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := auth.New(auth.Options{Store: db, Settings: w, Keys: map[string]string{"AUTH_KEY": "k"}, EnvironmentType: "local", Log: zerolog.Nop()})
	return &Site{DB: db, Settings: w, Auth: a}
}

// AddUser adds u, its application password last used now.
func AddUser(t testing.TB, tdb *testdb.DB, u User) int64 {
	t.Helper()
	h := auth.FastHash(u.AppPassword)
	return tdb.AddUser(t, u.Login, u.Login+"@example.test", "x",
		[2]string{"wp_capabilities", fmt.Sprintf(`a:1:{s:%d:"%s";b:1;}`, len(u.Role), u.Role)},
		[2]string{"_application_passwords", fmt.Sprintf(`a:1:{i:0;a:3:{s:4:"uuid";s:1:"u";s:8:"password";s:%d:"%s";s:9:"last_used";i:%d;}}`, len(h), h, time.Now().Unix())})
}

// Serve puts namespaces behind the sidecar's handler, with a stand-in PHP
// that answers "php" to everything else, and returns its URL.
func (s *Site) Serve(t testing.TB, namespaces ...rest.Handlers) string {
	t.Helper()
	return s.ServeWith(t, nil, namespaces...)
}

// ServeWith is Serve with public routes.
func (s *Site) ServeWith(t testing.TB, public rest.Public, namespaces ...rest.Handlers) string {
	t.Helper()
	php := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "php") }))
	t.Cleanup(php.Close)
	u, _ := url.Parse(php.URL)
	site := rest.SettingsFunc(func() (rest.Routing, error) {
		st, err := s.Settings.Current()
		return rest.Routing{Home: st.Home, PlainPermalinks: st.PlainPermalinks()}, err
	})
	h, err := proxy.New(proxy.Options{Upstream: u, UpstreamTimeout: time.Second, UpstreamDial: time.Second,
		Main: rest.SiteOptions{Settings: site, Handlers: namespaces, Public: public}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Send makes a request and reads the whole answer. A body is sent as JSON;
// an empty login sends no credentials; hdr are extra header name, value
// pairs.
func Send(t testing.TB, method, url, body, login, password string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	if login != "" {
		req.SetBasicAuth(login, password)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b), resp.Header
}

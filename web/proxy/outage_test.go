package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/rest"
)

// TestDatabaseOutage_RecoversByItself stops and restarts a private MariaDB
// under a running sidecar: its own routes answer 503 while the database is
// gone, pass-through is untouched, /readyz fails, and everything recovers
// without a restart.
func TestDatabaseOutage_RecoversByItself(t *testing.T) {
	srv := testdb.StartServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	o := tdb.StoreOptions()
	o.Timeout = 500 * time.Millisecond
	db, err := store.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	watcher := store.NewSettingsWatcher(db, 100*time.Millisecond, store.SiteURLs{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go watcher.Run(ctx)

	site := rest.SettingsFunc(func() (rest.Routing, error) {
		s, err := watcher.Current()
		return rest.Routing{Home: s.Home, PlainPermalinks: s.PlainPermalinks()}, err
	})
	rec := newRecorder(t, nil)
	u, _ := url.Parse(rec.srv.URL)
	h, err := New(Options{Upstream: u, UpstreamTimeout: time.Second, UpstreamDial: time.Second,
		Main: rest.SiteOptions{Settings: site, Handlers: []rest.Handlers{testNS{}}}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(h)
	defer front.Close()
	admin := httptest.NewServer(NewAdmin(AdminOptions{DB: db, Settings: site, Upstream: u}))
	defer admin.Close()

	status := func(base, path string) int {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor := func(what string, want int, base, path string) {
		t.Helper()
		testwait.For(t, fmt.Sprintf("%s: %s%s answering %d", what, base, path, want), func() bool { return status(base, path) == want })
	}
	const own = "/wp-json/test/v1/things/1"
	waitFor("start", 200, front.URL, own)
	if got := status(admin.URL, "/readyz"); got != 200 {
		t.Fatalf("readyz = %d", got)
	}

	srv.Stop()
	waitFor("outage", 503, front.URL, own)
	if got := status(front.URL, "/hello-world/"); got != 200 {
		t.Errorf("pass-through during outage = %d", got)
	}
	if got := status(admin.URL, "/readyz"); got != 503 {
		t.Errorf("readyz during outage = %d", got)
	}
	if got := status(admin.URL, "/healthz"); got != 200 {
		t.Errorf("healthz during outage = %d", got)
	}

	srv.Start()
	waitFor("recovery", 200, front.URL, own)
	waitFor("readyz recovery", 200, admin.URL, "/readyz")
}

func TestAdmin_ReadyzNamesWhatIsDown(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	dead, _ := url.Parse("http://127.0.0.1:1")
	admin := httptest.NewServer(NewAdmin(AdminOptions{DB: db, Upstream: dead, Metrics: NewMetrics(collectors.NewDBStatsCollector(db.SQL(), "wordpress"))}))
	defer admin.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(admin.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/readyz")
	if code != 503 || !strings.Contains(body, `"database":"ok"`) || !strings.Contains(body, "connection refused") {
		t.Errorf("readyz with upstream down = %d %s", code, body)
	}
	_, body = get("/metrics")
	for _, want := range []string{`go_sql_max_open_connections{db_name="wordpress"}`, "go_goroutines", "wpsidecar_upstream_errors_total"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

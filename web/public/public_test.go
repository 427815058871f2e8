package public_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
	"github.com/wpsidecar/wpsidecar/internal/reload"
	"github.com/wpsidecar/wpsidecar/web/fieldmgr"
	"github.com/wpsidecar/wpsidecar/web/public"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

// fixture is a site with field groups and theme options, public routes in
// front.
func fixture(t *testing.T, routes string) (url string, site *testsite.Site, tdb *testdb.DB) {
	t.Helper()
	tdb = testdb.New(t)
	site = testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: "abcdEFGHijklMNOPqrstUVWX"})
	groups, err := fieldgrouptable.Open(site.DB, "wp_fieldmgr_groups")
	if err != nil {
		t.Fatal(err)
	}
	fields := fieldmgr.New(site.Auth, groups, site.Settings, zerolog.Nop())
	cfg, _ := filepath.Abs("../themeopts/testdata/config.json")
	optsFile, err := reload.Open(cfg, "theme options configuration", themeoption.ParseConfig, func(_ *themeoption.Config, ev *zerolog.Event) *zerolog.Event { return ev }, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	opts := themeopts.NewService(site.Auth, site.DB, site.Settings, optsFile, zerolog.Nop())
	path := filepath.Join(t.TempDir(), "public.json")
	if err := os.WriteFile(path, []byte(routes), 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := reload.Open(path, "public routes", publicroute.Parser(fieldgroup.PublicSource(), themeoption.PublicSource()), func(_ *publicroute.Config, ev *zerolog.Event) *zerolog.Event { return ev }, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	h := public.New(file, map[wpsidecar.Namespace]public.Answer{wpsidecar.ThemeOptions: opts.Public, wpsidecar.FieldGroups: fields.Public})
	return site.ServeWith(t, h, fields, opts), site, tdb
}

const adminPW = "abcdEFGHijklMNOPqrstUVWX"

func send(t *testing.T, method, url string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	return testsite.Send(t, method, url, "", "", "", hdr...)
}

// TestPublicRoutes: the configured ids and groups, for anyone, the same
// with or without credentials, cacheable: Cache-Control, a strong ETag and
// 304, cache tags, no Vary on credentials; CORS only for the configured
// origins; preflight; other methods are PHP's.
func TestPublicRoutes(t *testing.T) {
	url, _, _ := fixture(t, `{"routes":[
		{"path":"/wp-json/site/v1/brand","themeopts":["accent_color","logo","layout"],"max_age":30,"s_maxage":600,"stale_if_error":86400},
		{"path":"/wp-json/site/v1/product-fields","fieldmgr":{"status":"active","post_type":"product"}}],
		"cors_origins":["https://www.example.com"]}`)
	for _, body := range []string{
		`{"group_key":"product","title":"Product","config":{"type":"post","post_type":"product","fields":{"price":{"type":"number","label":"Price"}}}}`,
		`{"group_key":"page","title":"Page","config":{"type":"post","post_type":"page"}}`,
	} {
		if code, b, _ := testsite.Send(t, http.MethodPost, url+"/wp-json/fieldmgr/v1/field-groups", body, "admin", adminPW); code != 201 {
			t.Fatalf("seed: %d %s", code, b)
		}
	}
	if code, b, _ := testsite.Send(t, http.MethodPost, url+"/wp-json/themeopts/v1/options", `{"layout":"boxed","accent_color":"#ff0000","tagline":"private"}`, "admin", adminPW); code != 200 {
		t.Fatalf("seed: %d %s", code, b)
	}

	code, body, h := send(t, http.MethodGet, url+"/wp-json/site/v1/brand")
	if code != 200 || body != `{"accent_color":"#ff0000","layout":"boxed"}` {
		t.Fatalf("brand: %d %s", code, body)
	}
	if h.Get("Cache-Control") != "public, max-age=30, s-maxage=600, stale-if-error=86400" || h.Get("Vary") != "Origin" ||
		h.Get("Cache-Tag") != "themeopts,themeopts:accent_color,themeopts:logo,themeopts:layout" || h.Get("Set-Cookie") != "" ||
		h.Get("ETag") == "" || h.Get("Expires") != "" || h.Get("Content-Type") != "application/json; charset=UTF-8" {
		t.Errorf("brand headers: %v", h)
	}
	// The same answer with an administrator's credentials.
	if _, b2, h2 := testsite.Send(t, http.MethodGet, url+"/wp-json/site/v1/brand", "", "admin", adminPW); b2 != body || h2.Get("ETag") != h.Get("ETag") || h2.Get("Cache-Control") != h.Get("Cache-Control") {
		t.Errorf("with credentials: %s %v", b2, h2)
	}
	if code, _, _ := send(t, http.MethodGet, url+"/wp-json/site/v1/brand", "If-None-Match", h.Get("ETag")); code != 304 {
		t.Errorf("If-None-Match: %d", code)
	}
	// The tag is of what the answer shows (security round 2, item 3): a
	// hidden option's value changes nothing, a shown one's changes it.
	testsite.Send(t, http.MethodPost, url+"/wp-json/themeopts/v1/options", `{"tagline":"another secret"}`, "admin", adminPW)
	if _, b, h2 := send(t, http.MethodGet, url+"/wp-json/site/v1/brand"); b != body || h2.Get("ETag") != h.Get("ETag") {
		t.Errorf("a hidden value changed the public tag: %s %s, was %s", b, h2.Get("ETag"), h.Get("ETag"))
	}
	testsite.Send(t, http.MethodPost, url+"/wp-json/themeopts/v1/options", `{"layout":"wide"}`, "admin", adminPW)
	if _, b, h2 := send(t, http.MethodGet, url+"/wp-json/site/v1/brand"); b == body || h2.Get("ETag") == h.Get("ETag") {
		t.Errorf("a shown value did not change the public tag: %s %s", b, h2.Get("ETag"))
	}
	testsite.Send(t, http.MethodPost, url+"/wp-json/themeopts/v1/options", `{"layout":"boxed"}`, "admin", adminPW)
	// Routes match as WordPress's: any case, a trailing slash, ?rest_route=.
	for _, u := range []string{url + "/wp-json/SITE/v1/Brand/", url + "/?rest_route=/site/v1/brand"} {
		if _, b, _ := send(t, http.MethodGet, u); b != body {
			t.Errorf("%s: %s", u, b)
		}
	}

	code, body, h = send(t, http.MethodGet, url+"/wp-json/site/v1/product-fields")
	if code != 200 || !strings.HasPrefix(body, `[{"id":"product","title":"Product","config":{"type":"post","post_type":"product","fields":{"price":{"type":"number","label":"Price"}}},"status":"active"`) ||
		strings.Contains(body, `"page"`) || h.Get("Cache-Control") != "public, max-age=60, s-maxage=60" || h.Get("Cache-Tag") != "fieldmgr,fieldmgr:list,fieldmgr:product" {
		t.Errorf("product-fields: %d %s %v", code, body, h)
	}
	// A group toggled off leaves the list, and its tag changes.
	testsite.Send(t, http.MethodPost, url+"/wp-json/fieldmgr/v1/field-groups/product/toggle", "", "admin", adminPW)
	if _, b, h2 := send(t, http.MethodGet, url+"/wp-json/site/v1/product-fields"); b != "[]" || h2.Get("ETag") == h.Get("ETag") {
		t.Errorf("after toggle: %s %s", b, h2.Get("ETag"))
	}

	// CORS for the configured origin only; preflight.
	if _, _, h := send(t, http.MethodGet, url+"/wp-json/site/v1/brand", "Origin", "https://www.example.com"); h.Get("Access-Control-Allow-Origin") != "https://www.example.com" ||
		h.Get("Access-Control-Allow-Credentials") != "" || h.Get("Access-Control-Expose-Headers") != "ETag, Cache-Tag, Surrogate-Key" {
		t.Errorf("allowed origin: %v", h)
	}
	if _, _, h := send(t, http.MethodGet, url+"/wp-json/site/v1/brand", "Origin", "https://evil.test"); h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin: %v", h)
	}
	if code, _, h := send(t, http.MethodOptions, url+"/wp-json/site/v1/brand", "Origin", "https://www.example.com", "Access-Control-Request-Method", "GET"); code != 204 ||
		h.Get("Access-Control-Allow-Methods") != "GET, HEAD, OPTIONS" || h.Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("preflight: %d %v", code, h)
	}
	if code, body, _ := send(t, http.MethodPost, url+"/wp-json/site/v1/brand"); code != 200 || body != "php" {
		t.Errorf("POST: %d %s, want PHP's", code, body)
	}
	if code, body, _ := send(t, http.MethodHead, url+"/wp-json/site/v1/brand"); code != 200 || body != "" {
		t.Errorf("HEAD: %d %q", code, body)
	}
}

// TestPublicRoutes_PlainPermalinks: as for the two namespaces, /wp-json/…
// is PHP's under plain permalinks, ?rest_route=… still the sidecar's.
func TestPublicRoutes_PlainPermalinks(t *testing.T) {
	url, site, tdb := fixture(t, `{"routes":[{"path":"/wp-json/site/v1/brand","themeopts":["accent_color"]}]}`)
	tdb.SetOption(t, "permalink_structure", "")
	if err := site.Settings.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := send(t, http.MethodGet, url+"/wp-json/site/v1/brand"); code != 200 || body != "php" {
		t.Errorf("pretty path under plain permalinks: %d %s", code, body)
	}
	if code, body, h := send(t, http.MethodGet, url+"/?rest_route=/site/v1/brand"); code != 200 || body != "{}" || !strings.HasPrefix(h.Get("Cache-Control"), "public") {
		t.Errorf("?rest_route= under plain permalinks: %d %s %v", code, body, h)
	}
}

// TestPublicRoutes_RemovedByReload: a route a reload removed between
// Matches and ServeHTTP answers as PHP answers a route it does not have,
// never a panic.
func TestPublicRoutes_RemovedByReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "public.json")
	write := func(p string) {
		if err := os.WriteFile(path, []byte(`{"routes":[{"path":"`+p+`","fieldmgr":{"status":"active"}}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("/wp-json/site/v1/old")
	file, err := reload.Open(path, "public routes", publicroute.Parser(fieldgroup.PublicSource(), themeoption.PublicSource()), func(_ *publicroute.Config, ev *zerolog.Event) *zerolog.Event { return ev }, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	h := public.New(file, map[wpsidecar.Namespace]public.Answer{wpsidecar.FieldGroups: func(context.Context, publicroute.Selection) ([]byte, string, []string, error) {
		return []byte("[]"), `"e"`, nil, nil
	}})
	if !h.Matches("/wp-json/site/v1/old", http.MethodGet) {
		t.Fatal("route not matched")
	}
	write("/wp-json/site/v1/new")
	if err := file.Reload(); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/wp-json/site/v1/old", nil))
	if want := `{"code":"rest_no_route","message":"No route was found matching the URL and request method.","data":{"status":404}}`; rec.Code != 404 || rec.Body.String() != want {
		t.Errorf("%d %s", rec.Code, rec.Body.String())
	}
}

// TestPublicRoutes_NotServed: a route showing a namespace the site does
// not serve (a theme options route on a site without their
// configuration, reloaded in after the start's check) answers 503 and
// says why; a CDN keeps what it has.
func TestPublicRoutes_NotServed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "public.json")
	if err := os.WriteFile(path, []byte(`{"routes":[{"path":"/wp-json/site/v1/brand","themeopts":["logo"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := reload.Open(path, "public routes", publicroute.Parser(fieldgroup.PublicSource(), themeoption.PublicSource()), func(_ *publicroute.Config, ev *zerolog.Event) *zerolog.Event { return ev }, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	h := public.New(file, map[wpsidecar.Namespace]public.Answer{wpsidecar.FieldGroups: func(context.Context, publicroute.Selection) ([]byte, string, []string, error) {
		t.Error("the field groups' answer was asked for a theme options route")
		return nil, "", nil, nil
	}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/wp-json/site/v1/brand", nil))
	want := `{"code":"wpsidecar_not_served","message":"This route shows themeopts, which the sidecar does not serve here (its configuration is missing).","data":{"status":503}}`
	if rec.Code != 503 || rec.Body.String() != want || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("%d %s %q", rec.Code, rec.Body.String(), rec.Header().Get("Cache-Control"))
	}
}

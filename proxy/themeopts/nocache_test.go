package themeopts_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/internal/testdb"
	"github.com/wpsidecar/wpsidecar/internal/testsite"
	"github.com/wpsidecar/wpsidecar/proxy/themeopts"
	"github.com/wpsidecar/wpsidecar/reload"
	"github.com/wpsidecar/wpsidecar/themeopt"
)

// TestNoCacheHeadersByVersion: through the whole sidecar (authentication
// included), the no-cache headers are WordPress's on the site's version
// (db_version): sent to logged-in users, whatever the status — 6.1's
// Cache-Control without "no-store, private", 6.3–6.7's with them, 6.8+'s
// too — and, before 6.8 without them, on a 4xx whose method came from
// X-HTTP-Method-Override; never to anonymous 403s or OPTIONS, nor to a
// bad application password (no one is logged in).
func TestNoCacheHeadersByVersion(t *testing.T) {
	tdb := testdb.New(t)
	site := testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: adminPW},
		testsite.User{Login: "sub", Role: "subscriber", AppPassword: subPW})
	raw, err := os.ReadFile("testdata/config.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "themeopts.json")
	os.WriteFile(path, raw, 0o644)
	cfg, err := reload.Open(path, "theme options configuration", themeopt.ParseConfig, func(_ *themeopt.Config, ev *zerolog.Event) *zerolog.Event { return ev }, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	url := site.Serve(t, themeopts.NewService(site.Auth, site.DB, site.Settings, cfg, zerolog.Nop()))

	const (
		plain  = "no-cache, must-revalidate, max-age=0"
		strict = plain + ", no-store, private"
	)
	type want struct{ v61, v65, v71 string } // Cache-Control, "": none
	cases := []struct {
		name, method, path, login, pw string
		hdr                           []string
		status                        int
		want                          want
	}{
		{"anonymous GET", "GET", "/options", "", "", nil, 403, want{"", "", ""}},
		{"anonymous OPTIONS", "OPTIONS", "/options", "", "", nil, 200, want{"", "", ""}},
		{"bad application password", "GET", "/options", "admin", "wrongwrongwrongwrongwron", nil, 403, want{"", "", ""}},
		{"anonymous, overridden", "POST", "/options", "", "", []string{"X-HTTP-Method-Override", "GET"}, 403, want{plain, plain, strict}},
		{"anonymous, _method", "POST", "/options?_method=GET", "", "", nil, 403, want{"", "", ""}},
		{"subscriber", "GET", "/options", "sub", subPW, nil, 403, want{plain, strict, strict}},
		{"subscriber OPTIONS", "OPTIONS", "/options", "sub", subPW, nil, 200, want{plain, strict, strict}},
		{"administrator", "GET", "/options", "admin", adminPW, nil, 200, want{plain, strict, strict}},
		{"administrator, unknown section", "POST", "/options/reset-section", "admin", adminPW, []string{"Content-Type", "application/json"}, 400, want{plain, strict, strict}},
		{"administrator OPTIONS", "OPTIONS", "/options", "admin", adminPW, nil, 200, want{plain, strict, strict}},
	}
	for _, v := range []struct {
		dbVersion string
		pick      func(want) string
	}{{"53496", func(w want) string { return w.v61 }}, {"57155", func(w want) string { return w.v65 }}, {"61833", func(w want) string { return w.v71 }}} {
		tdb.SetOption(t, "db_version", v.dbVersion)
		if err := site.Settings.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			code, body, h := testsite.Send(t, c.method, url+base+c.path, "", c.login, c.pw, c.hdr...)
			cc, expires := v.pick(c.want), ""
			if cc != "" {
				expires = "Wed, 11 Jan 1984 05:00:00 GMT"
			}
			if code != c.status || h.Get("Cache-Control") != cc || h.Get("Expires") != expires {
				t.Errorf("db_version %s, %s: %d %.80s\n Cache-Control %q Expires %q, want %d %q %q", v.dbVersion, c.name, code, body, h.Get("Cache-Control"), h.Get("Expires"), c.status, cc, expires)
			}
		}
	}
	if code, _, h := testsite.Send(t, http.MethodGet, url+"/wp-json/wp/v2/users", "", "", ""); code != 200 || h.Get("Cache-Control") != "" {
		t.Errorf("PHP's answer: %d Cache-Control %q", code, h.Get("Cache-Control"))
	}
}

package themeopts_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
	"github.com/wpsidecar/wpsidecar/internal/reload"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

// TestNoCacheHeadersByVersion: through the whole sidecar (authentication
// included), the no-cache headers are sent when WordPress's are: to
// logged-in users, whatever the status, and to anonymous requests on a 4xx
// whose method came from X-HTTP-Method-Override; never to anonymous 403s
// or OPTIONS, nor to a bad application password (no one is logged in).
// An anonymous answer carries the site's version's set (db_version: 6.8+
// adds "no-store, private"); a logged-in user's — a 200, a 304, a write,
// an error — carries them on every version, 6.1 included, where WordPress
// leaves them out (issue 46, item 6), with Vary naming Authorization and
// Cookie.
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
	cfg, err := reload.Open(path, "theme options configuration", themeoption.ParseConfig, func(_ *themeoption.Config, ev *zerolog.Event) *zerolog.Event { return ev }, zerolog.Nop())
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
		name, method, path, body, login, pw string
		hdr                                 []string
		status                              int
		want                                want
	}{
		{"anonymous GET", "GET", "/options", "", "", "", nil, 403, want{"", "", ""}},
		{"anonymous OPTIONS", "OPTIONS", "/options", "", "", "", nil, 200, want{"", "", ""}},
		{"bad application password", "GET", "/options", "", "admin", "wrongwrongwrongwrongwron", nil, 403, want{"", "", ""}},
		{"anonymous, overridden", "POST", "/options", "", "", "", []string{"X-HTTP-Method-Override", "GET"}, 403, want{plain, plain, strict}},
		{"anonymous, _method", "POST", "/options?_method=GET", "", "", "", nil, 403, want{"", "", ""}},
		{"subscriber", "GET", "/options", "", "sub", subPW, nil, 403, want{strict, strict, strict}},
		{"subscriber OPTIONS", "OPTIONS", "/options", "", "sub", subPW, nil, 200, want{strict, strict, strict}},
		{"administrator", "GET", "/options", "", "admin", adminPW, nil, 200, want{strict, strict, strict}},
		{"administrator, not modified", "GET", "/options", "", "admin", adminPW, []string{"If-None-Match", "ETAG"}, 304, want{strict, strict, strict}},
		{"administrator, write", "POST", "/options", `{"tagline":"x"}`, "admin", adminPW, nil, 200, want{strict, strict, strict}},
		{"administrator, unknown section", "POST", "/options/reset-section", "", "admin", adminPW, []string{"Content-Type", "application/json"}, 400, want{strict, strict, strict}},
		{"administrator OPTIONS", "OPTIONS", "/options", "", "admin", adminPW, nil, 200, want{strict, strict, strict}},
	}
	for _, v := range []struct {
		dbVersion string
		pick      func(want) string
	}{{"53496", func(w want) string { return w.v61 }}, {"57155", func(w want) string { return w.v65 }}, {"61833", func(w want) string { return w.v71 }}} {
		tdb.SetOption(t, "db_version", v.dbVersion)
		if err := site.Settings.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, _, h := testsite.Send(t, http.MethodGet, url+base+"/options", "", "admin", adminPW)
		etag := h.Get("ETag")
		for _, c := range cases {
			hdr := slices.Clone(c.hdr)
			if i := slices.Index(hdr, "ETAG"); i >= 0 {
				hdr[i] = etag
			}
			code, body, h := testsite.Send(t, c.method, url+base+c.path, c.body, c.login, c.pw, hdr...)
			cc, expires := v.pick(c.want), ""
			if cc != "" {
				expires = "Wed, 11 Jan 1984 05:00:00 GMT"
			}
			if code != c.status || h.Get("Cache-Control") != cc || h.Get("Expires") != expires || h.Get("Vary") != "Origin, Authorization, Cookie" {
				t.Errorf("db_version %s, %s: %d %.80s\n Cache-Control %q Expires %q Vary %q, want %d %q %q", v.dbVersion, c.name, code, body, h.Get("Cache-Control"), h.Get("Expires"), h.Get("Vary"), c.status, cc, expires)
			}
		}
	}
	if code, _, h := testsite.Send(t, http.MethodGet, url+"/wp-json/wp/v2/users", "", "", ""); code != 200 || h.Get("Cache-Control") != "" {
		t.Errorf("PHP's answer: %d Cache-Control %q", code, h.Get("Cache-Control"))
	}
}

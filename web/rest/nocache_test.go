package rest

import (
	"context"
	"net/http"
	"testing"

	"github.com/gorilla/mux"

	"github.com/wpsidecar/wpsidecar/wire/routetable"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// oldSiteNS is a namespace on a WordPress 6.1 site (db_version 53496)
// whose user is logged in when the request has an Authorization header:
// GET /thing may be kept, and is large enough to be coded.
type oldSiteNS struct{}

func (oldSiteNS) Name() string { return "old/v1" }
func (oldSiteNS) Register(r *mux.Router) {
	wpjson.Register(r, wpjson.RouteInfo{Namespace: "old/v1", Home: func() (string, error) { return "https://example.com", nil },
		DBVersion: func() (int64, error) { return 53496, nil },
		LoggedIn:  func(r *http.Request) bool { return r.Header.Get("Authorization") != "" },
		Permitted: func(*http.Request) bool { return true },
	}, []routetable.Route{{Path: "/thing", Handlers: []routetable.MethodHandler{{Method: http.MethodGet, Prepared: true,
		Fn: func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Etag", `"t1"`)
			wpjson.WriteRaw(w, http.StatusOK, sizedBody(2000))
			return nil
		}}}}})
}

// TestNoCache_LoggedInOnOldVersions: on WordPress 6.1, whose own REST
// server leaves "no-store, private" out, a logged-in user's answer carries
// them all the same (issue 46, item 6), with Vary naming Authorization and
// Cookie besides Accept-Encoding: built, coded, given again from those
// kept, and as the 304s of the compression writer and of a kept answer.
// An anonymous answer carries the 6.1 set WordPress sends it: none.
func TestNoCache_LoggedInOnOldVersions(t *testing.T) {
	const strict = "no-cache, must-revalidate, max-age=0, no-store, private"
	user := []string{"Authorization", "Basic eDp5", "Accept-Encoding", "br"}
	withTag := append([]string{"If-None-Match", `"t1-br"`}, user...)
	p := NewPrepared(func(context.Context) (uint64, bool) { return 1, true })
	site := &settings{}
	site.set(Routing{Home: "https://example.com"}, nil)
	kept, err := New(Options{PHP: &phpSeen{}, Compression: NewCompression(), Prepared: p}, SiteOptions{Settings: site, Handlers: []Handlers{oldSiteNS{}}})
	if err != nil {
		t.Fatal(err)
	}
	plain := compressRoutesFor(t, oldSiteNS{})
	for _, c := range []struct {
		name   string
		routes *Routes
		hdr    []string
		status int
		cc     string
	}{
		{"built", kept, user, 200, strict},
		{"kept", kept, user, 200, strict},
		{"kept, not modified", kept, withTag, 304, strict},
		{"not modified (compression writer)", plain, withTag, 304, strict},
		{"anonymous", plain, []string{"Accept-Encoding", "br"}, 200, ""},
	} {
		rec := serve(c.routes, http.MethodGet, "/wp-json/old/v1/thing", c.hdr...)
		h := rec.Header()
		if rec.Code != c.status || h.Get("Cache-Control") != c.cc || h.Get("Vary") != restVary {
			t.Errorf("%s: %d Cache-Control %q Vary %q; want %d %q %q", c.name, rec.Code, h.Get("Cache-Control"), h.Get("Vary"), c.status, c.cc, restVary)
		}
	}
	if st := p.Stats(); st.Given != 2 || st.Kept != 1 {
		t.Errorf("prepared %+v: the answer was not kept and given again", st)
	}
}

package rest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"
)

// taggedNS answers GET /tagged with cache tags shared between answers, as
// the namespaces prepare them.
type taggedNS struct{}

var sharedTags = []string{"ns,ns:a%20b"}[:1:1]

func (taggedNS) Name() string { return "tagged/v1" }
func (taggedNS) Register(r *mux.Router) {
	r.HandleFunc("/tagged", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Cache-Tag"], w.Header()["Surrogate-Key"] = sharedTags, []string{"ns ns:a%20b"}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		io.WriteString(w, `{"ok":true}`)
	}).Methods(http.MethodGet)
}

// taggedPublic is one public route with tags.
type taggedPublic struct{}

func (taggedPublic) Matches(path, method string) bool { return path == "/wp-json/pub/v1/x" }
func (taggedPublic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Tag", "pub")
	w.Header().Set("Surrogate-Key", "pub")
	w.WriteHeader(http.StatusOK)
}

// TestSiteTags: a network site's answers name the site in every cache tag
// — its namespaces' (in the headers and inside _envelope) and its public
// routes' — while the shared header values stay as they were; without a
// prefix nothing changes.
func TestSiteTags(t *testing.T) {
	var routes *Routes
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { routes.Serve(w, r, "") })
	for _, c := range []struct {
		prefix, cacheTag, surrogate, publicTag string
	}{
		{"site2:", "site2:ns,site2:ns:a%20b", "site2:ns site2:ns:a%20b", "site2:pub"},
		{"", "ns,ns:a%20b", "ns ns:a%20b", "pub"},
	} {
		var err error
		routes, err = New(Options{PHP: &php{}}, SiteOptions{Settings: &settings{}, Handlers: []Handlers{taggedNS{}}, Public: taggedPublic{}, TagPrefix: c.prefix})
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/wp-json/tagged/v1/tagged", "/wp-json/pub/v1/x"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
			want := c.cacheTag
			if path == "/wp-json/pub/v1/x" {
				want = c.publicTag
			}
			if got := w.Header().Get("Cache-Tag"); w.Code != 200 || got != want {
				t.Errorf("prefix %q %s: %d Cache-Tag %q, want %q", c.prefix, path, w.Code, got, want)
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/wp-json/tagged/v1/tagged", nil))
		if got := w.Header().Get("Surrogate-Key"); got != c.surrogate {
			t.Errorf("prefix %q: Surrogate-Key %q, want %q", c.prefix, got, c.surrogate)
		}
		w = httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/wp-json/tagged/v1/tagged?_envelope", nil))
		if want := `{"body":{"ok":true},"status":200,"headers":{"Cache-Tag":"` + c.cacheTag + `","Surrogate-Key":"` + c.surrogate + `"}}`; w.Body.String() != want {
			t.Errorf("prefix %q _envelope:\n got %s\nwant %s", c.prefix, w.Body.String(), want)
		}
	}
	if sharedTags[0] != "ns,ns:a%20b" {
		t.Errorf("the shared header value was changed: %q", sharedTags[0])
	}
}

// cachedPublic answers as the public routes do: a shared cache may keep
// its GET answer; OPTIONS is an empty 204.
type cachedPublic struct{}

func (cachedPublic) Matches(path, method string) bool {
	return path == "/wp-json/pub/v1/x" && (method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions)
}
func (cachedPublic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=600")
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	io.WriteString(w, `{"ok":true}`)
}

// TestPublic_MethodOverrideNotStorable: a public answer a shared cache may
// keep is the GET answer; a request whose _method or
// X-HTTP-Method-Override chose another method gets one no cache keeps
// (security round 2, item 1: an empty 204 served to every GET).
func TestPublic_MethodOverrideNotStorable(t *testing.T) {
	routes, err := New(Options{PHP: &php{}}, SiteOptions{Settings: &settings{}, Public: cachedPublic{}})
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { routes.Serve(w, r, "") })
	for _, c := range []struct {
		method, target, override string
		status                   int
		cacheControl             string
	}{
		{"GET", "/wp-json/pub/v1/x", "", 200, "public, max-age=600"},
		{"OPTIONS", "/wp-json/pub/v1/x", "", 204, "public, max-age=600"},
		{"GET", "/wp-json/pub/v1/x", "OPTIONS", 204, "no-store"},
		{"GET", "/wp-json/pub/v1/x?_method=OPTIONS", "", 204, "no-store"},
		{"GET", "/wp-json/pub/v1/x?_method=head", "", 200, "no-store"},
		{"POST", "/wp-json/pub/v1/x", "GET", 200, "no-store"},
		{"GET", "/?rest_route=/pub/v1/x&_method=OPTIONS", "", 204, "no-store"},
	} {
		req := httptest.NewRequest(c.method, c.target, nil)
		if c.override != "" {
			req.Header.Set("X-HTTP-Method-Override", c.override)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != c.status || w.Header().Get("Cache-Control") != c.cacheControl {
			t.Errorf("%s %s (override %q): %d Cache-Control %q, want %d %q", c.method, c.target, c.override, w.Code, w.Header().Get("Cache-Control"), c.status, c.cacheControl)
		}
	}
}

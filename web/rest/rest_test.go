package rest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gorilla/mux"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// php is a stand-in for the pass-through: it counts what reaches it and
// says what it saw.
type php struct{ n atomic.Int64 }

func (p *php) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.n.Add(1)
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "php saw %s %s", r.Method, r.RequestURI)
}

func (p *php) count() int { return int(p.n.Load()) }

// settings is a Site whose answer a test sets.
type settings struct {
	mu  sync.Mutex
	s   Routing
	err error
}

func (f *settings) REST() (Routing, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s, f.err
}

func (f *settings) set(s Routing, err error) {
	f.mu.Lock()
	f.s, f.err = s, err
	f.mu.Unlock()
}

// errUnavailable is a database that cannot be used now, as store's.
type errUnavailable struct{}

func (errUnavailable) Error() string     { return "database unavailable" }
func (errUnavailable) Unavailable() bool { return true }

// testNS is a namespace with one route, GET /things/{id}, a POST that
// reads its body, and one whose answer carries route headers. GET
// /things/{id} does what the store does with the request's scope: it
// reads after the commit the scope names (X-Read-After tells which) and
// notes a write's commit, 0-1-42, where the scope asks for it.
type testNS struct{}

func (testNS) Name() string { return "test/v1" }
func (testNS) Register(r *mux.Router) {
	r.HandleFunc("/things/{id}", func(w http.ResponseWriter, r *http.Request) {
		scope := wpsidecar.ScopeOf(r.Context())
		if set := scope.ReadsAfter(); set != nil {
			w.Header().Set("X-Read-After", set.String())
		}
		scope.Noted("0-1-42")
		wpjson.WriteJSON(w, http.StatusOK, map[string]string{"id": mux.Vars(r)["id"]})
	}).Methods(http.MethodGet)
	r.HandleFunc("/things", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			wpjson.WriteError(w, &wpjson.Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large", Message: err.Error()})
			return
		}
		wpjson.WriteJSON(w, http.StatusCreated, map[string]int{"len": len(b)})
	}).Methods(http.MethodPost)
	r.HandleFunc("/placed", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Etag", `"abc"`)
		w.Header().Set("Location", "https://example.com/wp-json/test/v1/things/1?a=1&b=<2>")
		wpjson.WriteJSON(w, http.StatusOK, map[string]string{"id": "1"})
	}).Methods(http.MethodGet)
}

// fixture serves one site's routes, PHP answering the rest.
type fixture struct {
	rec      *php
	settings *settings
	front    *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{rec: &php{}, settings: &settings{}}
	routes, err := New(Options{PHP: f.rec}, SiteOptions{Settings: f.settings, Handlers: []Handlers{testNS{}}})
	if err != nil {
		t.Fatal(err)
	}
	f.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { routes.Serve(w, r, "") }))
	t.Cleanup(f.front.Close)
	return f
}

func (f *fixture) do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func (f *fixture) get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.front.URL+path, nil)
	return f.do(t, req)
}

// chunkReader yields n bytes of a repeating pattern without holding them.
type chunkReader struct{ left int64 }

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > c.left {
		n = c.left
	}
	for i := range p[:n] {
		p[i] = byte('a' + i%26)
	}
	c.left -= n
	return int(n), nil
}

func TestNamespace_RoutesAndFallThrough(t *testing.T) {
	f := newFixture(t)
	resp, body := f.get(t, "/wp-json/test/v1/things/42")
	if resp.StatusCode != 200 || body != `{"id":"42"}` || resp.Header.Get("Content-Type") != "application/json; charset=UTF-8" ||
		resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Robots-Tag") != "noindex" {
		t.Errorf("own route: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if f.rec.count() != 0 {
		t.Error("own route reached PHP")
	}
	// Another method, another path in the namespace, the namespace index:
	// all PHP's.
	for _, c := range []struct{ method, path string }{
		{http.MethodDelete, "/wp-json/test/v1/things/42"},
		{http.MethodGet, "/wp-json/test/v1/other"},
		{http.MethodGet, "/wp-json/test/v1"},
		{http.MethodGet, "/wp-json/test/v2/things/42"},
	} {
		req, _ := http.NewRequest(c.method, f.front.URL+c.path, nil)
		resp, body := f.do(t, req)
		if want := "php saw " + c.method + " " + c.path; resp.StatusCode != 200 || body != want {
			t.Errorf("%s %s: %d %q, want PHP", c.method, c.path, resp.StatusCode, body)
		}
	}
}

func TestNamespace_PlainPermalinksGoToPHP(t *testing.T) {
	f := newFixture(t)
	f.settings.set(Routing{PlainPermalinks: true}, nil)
	resp, body := f.get(t, "/wp-json/test/v1/things/42")
	if resp.StatusCode != 200 || body != "php saw GET /wp-json/test/v1/things/42" {
		t.Errorf("plain permalinks: %d %q", resp.StatusCode, body)
	}
	f.settings.set(Routing{}, nil)
	if _, body := f.get(t, "/wp-json/test/v1/things/42"); body != `{"id":"42"}` {
		t.Errorf("pretty permalinks again: %q", body)
	}
}

func TestNamespace_DatabaseDownIs503(t *testing.T) {
	f := newFixture(t)
	f.settings.set(Routing{}, fmt.Errorf("%w: dial tcp: refused", errUnavailable{}))
	resp, body := f.get(t, "/wp-json/test/v1/things/42")
	want := `{"code":"wpsidecar_db_unavailable","message":"The WordPress database is not available right now. Please try again shortly.","data":{"status":503}}`
	if resp.StatusCode != 503 || body != want || resp.Header.Get("Retry-After") != "5" {
		t.Errorf("got %d %q Retry-After %q", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	if resp, body := f.get(t, "/hello-world/"); resp.StatusCode != 200 || body != "php saw GET /hello-world/" {
		t.Errorf("pass-through with the database down: %d %q", resp.StatusCode, body)
	}
	f.settings.set(Routing{}, nil)
	if resp, _ := f.get(t, "/wp-json/test/v1/things/42"); resp.StatusCode != 200 {
		t.Errorf("after recovery: %d", resp.StatusCode)
	}
}

func TestNamespace_BodyLimit(t *testing.T) {
	f := newFixture(t)
	post := func(body io.Reader, length int64) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, f.front.URL+"/wp-json/test/v1/things", body)
		req.ContentLength = length
		return f.do(t, req)
	}
	if resp, body := post(strings.NewReader("{}"), 2); resp.StatusCode != 201 || body != `{"len":2}` {
		t.Errorf("small body: %d %q", resp.StatusCode, body)
	}
	resp, body := post(&chunkReader{left: DefaultMaxBodyBytes + 1}, DefaultMaxBodyBytes+1)
	if resp.StatusCode != 413 || body != `{"code":"wpsidecar_body_too_large","message":"The request body is too large.","data":{"status":413}}` {
		t.Errorf("declared too large: %d %q", resp.StatusCode, body)
	}
	// Chunked, no length declared: the reader stops at the limit.
	resp, _ = post(&chunkReader{left: DefaultMaxBodyBytes + 1}, -1)
	if resp.StatusCode != 413 {
		t.Errorf("chunked too large: %d", resp.StatusCode)
	}
	if f.rec.count() != 0 {
		t.Error("reached PHP")
	}
}

// TestRESTRouting: which requests the sidecar answers, as WordPress's REST
// server would route them, and that PHP gets every other one as sent.
func TestRESTRouting(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, method, target string
		header               [2]string
		want                 string // the body: ours, or what PHP saw
	}{
		{"pretty path", "GET", "/wp-json/test/v1/things/7", [2]string{}, `{"id":"7"}`},
		{"route matched without regard to case; the id keeps its case", "GET", "/wp-json/TEST/V1/Things/AbC", [2]string{}, `{"id":"AbC"}`},
		{"/wp-json itself is case-sensitive (a page to WordPress)", "GET", "/WP-JSON/test/v1/things/7", [2]string{}, "php saw GET /WP-JSON/test/v1/things/7"},
		{"?rest_route= on /", "GET", "/?rest_route=/test/v1/things/8", [2]string{}, `{"id":"8"}`},
		{"?rest_route= on /index.php, encoded", "GET", "/index.php?rest_route=%2Ftest%2Fv1%2Fthings%2Fa%20b", [2]string{}, `{"id":"a%20b"}`}, // ids arrive escaped, as from a path,
		{"?rest_route= wins over the path", "GET", "/wp-json/test/v1/things/7?rest_route=/wp/v2/users/me", [2]string{}, "php saw GET /wp-json/test/v1/things/7?rest_route=/wp/v2/users/me"},
		{"?rest_route= naming our route wins over another path", "GET", "/wp-json/wp/v2/posts?rest_route=/test/v1/things/9", [2]string{}, `{"id":"9"}`},
		{"the last rest_route wins, as in PHP", "GET", "/?rest_route=/wp/v2/posts&rest_route=/test/v1/things/10", [2]string{}, `{"id":"10"}`},
		{"?rest_route= elsewhere is PHP's", "GET", "/hello-world/?rest_route=/test/v1/things/8", [2]string{}, "php saw GET /hello-world/?rest_route=/test/v1/things/8"},
		{"_method turns a POST into a GET", "POST", "/wp-json/test/v1/things/7?_method=get", [2]string{}, `{"id":"7"}`},
		{"X-HTTP-Method-Override too", "POST", "/wp-json/test/v1/things/7", [2]string{"X-HTTP-Method-Override", "GET"}, `{"id":"7"}`},
		{"_method wins over the header", "GET", "/wp-json/test/v1/things?_method=POST", [2]string{"X-HTTP-Method-Override", "GET"}, `{"len":0}`},
		{"a method no route has goes to PHP as sent", "GET", "/wp-json/test/v1/things/7?_method=DELETE", [2]string{}, "php saw GET /wp-json/test/v1/things/7?_method=DELETE"},
		// Names as PHP files them: spaces and dots made underscores, a
		// leading space dropped, a NUL ending the name.
		{"rest.route is rest_route to PHP", "GET", "/wp-json/wp/v2/posts?rest.route=/test/v1/things/11", [2]string{}, `{"id":"11"}`},
		{"a leading space", "GET", "/wp-json/wp/v2/posts?%20rest_route=/test/v1/things/12", [2]string{}, `{"id":"12"}`},
		{"a NUL ends the name", "GET", "/wp-json/wp/v2/posts?rest_route%00x=/test/v1/things/13", [2]string{}, `{"id":"13"}`},
		{".method is _method", "GET", "/wp-json/test/v1/things/7?.method=DELETE", [2]string{}, "php saw GET /wp-json/test/v1/things/7?.method=DELETE"},
		{"a value PHP decodes leniently", "GET", "/?rest_route=/test/v1/things/a%zz", [2]string{}, `{"id":"a%25zz"}`},
		{"the last rest_route an array: PHP's", "GET", "/wp-json/wp/v2/posts?rest_route=/test/v1/things/14&rest_route[]=x", [2]string{}, "php saw GET /wp-json/wp/v2/posts?rest_route=/test/v1/things/14&rest_route[]=x"},
		{"past PHP's max_input_vars, not read", "GET", "/?" + strings.Repeat("a&", 1000) + "rest_route=/test/v1/things/15", [2]string{}, "php saw GET /?" + strings.Repeat("a&", 1000) + "rest_route=/test/v1/things/15"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, f.front.URL+tt.target, nil)
		if tt.header[0] != "" {
			req.Header.Set(tt.header[0], tt.header[1])
		}
		if _, body := f.do(t, req); body != tt.want {
			t.Errorf("%s: %s %s: %q, want %q", tt.name, tt.method, tt.target, body, tt.want)
		}
	}

	// Under plain permalinks /wp-json/… is PHP's, ?rest_route=… still ours.
	f.settings.set(Routing{PlainPermalinks: true}, nil)
	if _, body := f.get(t, "/wp-json/test/v1/things/7"); body != "php saw GET /wp-json/test/v1/things/7" {
		t.Errorf("plain permalinks, pretty path: %q", body)
	}
	resp, body := f.get(t, "/?rest_route=/test/v1/things/7")
	if body != `{"id":"7"}` || resp.Header.Get("Link") != `</?rest_route=/>; rel="https://api.w.org/"` {
		t.Errorf("plain permalinks, ?rest_route=: %q, Link %q", body, resp.Header.Get("Link"))
	}
}

// envelopeTag is the ETag suffix of the ?_envelope shape: the first four
// bytes of SHA-256("_envelope&"), in hex.
const envelopeTag = "c5b3fa1d"

// TestRESTGlobals: _jsonp, _envelope, _pretty and _fields on a route of the
// sidecar's, as WordPress's REST server applies them to every route.
func TestRESTGlobals(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		query, status, ctype, body string
	}{
		{"", "200", "application/json; charset=UTF-8", `{"id":"7"}`},
		{"_jsonp=cb.fn_1", "200", "application/javascript; charset=UTF-8", `/**/cb.fn_1({"id":"7"})`},
		{"_jsonp=", "200", "application/json; charset=UTF-8", `{"id":"7"}`},
		{"_jsonp=alert(1)", "400", "application/javascript; charset=UTF-8", `{"code":"rest_callback_invalid","message":"Invalid JSONP callback function."}`},
		{"_envelope", "200", "application/json; charset=UTF-8", `{"body":{"id":"7"},"status":200,"headers":[]}`},
		{"_envelope=0", "200", "application/json; charset=UTF-8", `{"body":{"id":"7"},"status":200,"headers":[]}`},
		{"_pretty", "200", "application/json; charset=UTF-8", "{\n    \"id\": \"7\"\n}"},
		{"_fields=nope", "200", "application/json; charset=UTF-8", `[]`},
		{"_fields=id&_fields=nope", "200", "application/json; charset=UTF-8", `[]`}, // the last one counts
		{"_fields[]=nope&_fields[]=id", "200", "application/json; charset=UTF-8", `{"id":"7"}`},
		{"_envelope&_pretty&_jsonp=cb", "200", "application/javascript; charset=UTF-8", "/**/cb({\n    \"body\": {\n        \"id\": \"7\"\n    },\n    \"status\": 200,\n    \"headers\": []\n})"},
	}
	for _, tt := range tests {
		resp, body := f.get(t, "/wp-json/test/v1/things/7?"+tt.query)
		if strconv.Itoa(resp.StatusCode) != tt.status || resp.Header.Get("Content-Type") != tt.ctype || body != tt.body ||
			resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
			t.Errorf("?%s: %d %q %q", tt.query, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	// Another status inside an envelope: 200 outside; _fields applies to
	// every answer below 400.
	resp, body := f.get(t, "/wp-json/test/v1/things?_envelope&_method=POST&_fields=x")
	if resp.StatusCode != 200 || body != `{"body":[],"status":201,"headers":[]}` {
		t.Errorf("envelope of a 201: %d %s", resp.StatusCode, body)
	}
	// The route's own headers move into the envelope (JSON-equal to
	// WordPress's, which escapes "/"); the ETag names the shape.
	resp, body = f.get(t, "/wp-json/test/v1/placed?_envelope")
	if want := `{"body":{"id":"1"},"status":200,"headers":{"ETag":"\"abc-v` + envelopeTag + `\"","Location":"https://example.com/wp-json/test/v1/things/1?a=1&b=<2>"}}`; resp.StatusCode != 200 || body != want ||
		resp.Header.Get("Location") != "" || resp.Header.Get("Etag") != "" {
		t.Errorf("envelope with headers: %d %s\nwant %s", resp.StatusCode, body, want)
	}
}

// consistency notes the commit a read asked for; "none" names no commit.
type consistency struct {
	mu    sync.Mutex
	after []string
}

// gtid is a commit as consistency parses it.
type gtid string

func (g gtid) String() string { return string(g) }

func (c *consistency) ReadAfter(ctx context.Context, g string) wpsidecar.GTIDSet {
	c.mu.Lock()
	c.after = append(c.after, g)
	c.mu.Unlock()
	if g == "none" {
		return nil
	}
	return gtid(g)
}

// TestReadYourWrites: an answer names its commit in a header and a
// cookie, also through the reshaping of _envelope; a request's header, or
// else its cookie, names the commit its reads wait for.
func TestReadYourWrites(t *testing.T) {
	c := &consistency{}
	routes, err := New(Options{PHP: &php{}, Consistency: c}, SiteOptions{Settings: &settings{}, Handlers: []Handlers{testNS{}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/wp-json/test/v1/things/7", "/wp-json/test/v1/things/7?_envelope"} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set(HeaderGTID, "0-1-41")
		req.AddCookie(&http.Cookie{Name: CookieGTID, Value: "0-1-40"})
		w := httptest.NewRecorder()
		routes.Serve(w, req, "")
		if w.Code != 200 || w.Header().Get(HeaderGTID) != "0-1-42" || w.Header().Get("X-Read-After") != "0-1-41" ||
			w.Header().Get("Set-Cookie") != "wpsidecar_gtid=0-1-42; Path=/; Max-Age=60; HttpOnly; SameSite=Lax" {
			t.Errorf("%s: %d %v", target, w.Code, w.Header())
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/wp-json/test/v1/things/7", nil)
	req.AddCookie(&http.Cookie{Name: CookieGTID, Value: "0-1-40"})
	w := httptest.NewRecorder()
	routes.Serve(w, req, "")
	if got := w.Header().Get("X-Read-After"); got != "0-1-40" {
		t.Errorf("with the cookie alone, the handler read after %q", got)
	}
	req = httptest.NewRequest(http.MethodGet, "/wp-json/test/v1/things/7", nil)
	req.Header.Set(HeaderGTID, "none")
	w = httptest.NewRecorder()
	routes.Serve(w, req, "")
	if got := w.Header().Get("X-Read-After"); got != "" {
		t.Errorf("a value that names no commit: the handler read after %q", got)
	}
	if got := strings.Join(c.after, " "); got != "0-1-41 0-1-41 0-1-40 none" {
		t.Errorf("reads waited for %q", got)
	}

	// Without Consistency nothing is noted nor named: the scope's writes
	// are noted only where readYourWrites asks.
	plain, err := New(Options{PHP: &php{}}, SiteOptions{Settings: &settings{}, Handlers: []Handlers{testNS{}}})
	if err != nil {
		t.Fatal(err)
	}
	req = httptest.NewRequest(http.MethodGet, "/wp-json/test/v1/things/7", nil)
	req.Header.Set(HeaderGTID, "0-1-41")
	w = httptest.NewRecorder()
	plain.Serve(w, req, "")
	if w.Code != 200 || w.Header().Get(HeaderGTID) != "" || w.Header().Get("X-Read-After") != "" {
		t.Errorf("without Consistency: %d %v", w.Code, w.Header())
	}
}

// TestHeadWriter_Unwraps: http.ResponseController reaches the connection
// through the chain's writers (a flush of a streamed answer).
func TestHeadWriter_Unwraps(t *testing.T) {
	w := httptest.NewRecorder()
	hw := &headWriter{ResponseWriter: w, edit: func(h http.Header) { h.Set("X-Edited", "1") }}
	hw.Write([]byte("a"))
	if err := http.NewResponseController(hw).Flush(); err != nil || !w.Flushed || w.Header().Get("X-Edited") != "1" {
		t.Errorf("flush: %v, flushed %v, header %v", err, w.Flushed, w.Header())
	}
}

// TestDecide: a REST request no route of the sidecar takes is PHP's as a
// REST request, with its site, its REST route and the method WordPress
// serves; a request that is not REST (or, under plain permalinks,
// /wp-json/ without ?rest_route=) is PHP's; the sidecar's own routes,
// and what no route of theirs matches under their namespace, are the
// sidecar's (whose router passes the latter on to PHP).
func TestDecide(t *testing.T) {
	st := &settings{}
	routes, err := New(Options{PHP: &php{}}, SiteOptions{Settings: st, Handlers: []Handlers{testNS{}}, FeedSite: 3})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(method, target string) string {
		d := routes.Decide(httptest.NewRequest(method, target, nil), "")
		return fmt.Sprintf("%d %d %s %s", d.By, d.REST.Site, d.REST.Method, d.REST.Route)
	}
	for _, tc := range []struct {
		method, target string
		plain          bool
		want           string
	}{
		{"GET", "/wp-json/wp/v2/posts?per_page=1", false, "1 3 GET /wp/v2/posts"},
		{"GET", "/?rest_route=/wp/v2/posts/7", false, "1 3 GET /wp/v2/posts/7"},
		{"GET", "/wp-json/wp/v2/posts/7?_method=DELETE", false, "1 3 DELETE /wp/v2/posts/7"},
		{"GET", "/wp-json/wp/v2/posts/7?%20_method=OPTIONS", false, "1 3 OPTIONS /wp/v2/posts/7"},
		{"GET", "/wp-json/wp/v2/posts?rest.route=/other/v1/x", false, "1 3 GET /other/v1/x"},
		{"HEAD", "/wp-json/WP/V2/posts", false, "1 3 HEAD /WP/V2/posts"},
		{"GET", "/wp-json/test/v1/things/1", false, "2 0  "},                   // the sidecar's own
		{"GET", "/wp-json/test/v1/no-such", false, "2 0  "},                    // its namespace's: its router passes it on
		{"GET", "/sample-page/", false, "0 0  "},                               // not REST
		{"GET", "/wp-json/wp/v2/posts", true, "0 0  "},                         // not REST under plain permalinks
		{"GET", "/?rest_route=/wp/v2/posts/8", true, "1 3 GET /wp/v2/posts/8"}, // REST still
	} {
		st.set(Routing{PlainPermalinks: tc.plain}, nil)
		if got := decide(tc.method, tc.target); got != tc.want {
			t.Errorf("%s %s (plain permalinks %v): decided %q, want %q", tc.method, tc.target, tc.plain, got, tc.want)
		}
	}
	st.set(Routing{}, wpjson.ErrDBUnavailable)
	if got := decide("GET", "/wp-json/wp/v2/posts"); got != "0 0  " {
		t.Errorf("with the site's settings unknown: decided %q, want PHP's", got)
	}
}

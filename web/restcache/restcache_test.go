package restcache

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
)

// php is an upstream that answers as WordPress's REST server does for an
// anonymous read, counting what reaches it; head adds to its answer's
// head.
type php struct {
	calls atomic.Int64
	head  http.Header
	// gate, when not nil, holds every answer until it is closed.
	gate chan struct{}
	// during, when not nil, runs while the answer is being made.
	during func()
	// encodings are the Accept-Encoding values that reached it.
	mu        sync.Mutex
	encodings []string
}

func (p *php) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := p.calls.Add(1)
	p.mu.Lock()
	p.encodings = append(p.encodings, r.Header.Get("Accept-Encoding"))
	p.mu.Unlock()
	if p.gate != nil {
		<-p.gate
	}
	if p.during != nil {
		p.during()
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("X-WP-Total", "1")
	h.Set("Date", "Mon, 02 Jan 2006 15:04:05 GMT")
	for k, v := range p.head {
		h[k] = v
	}
	if os := r.Header.Values("Origin"); len(os) > 0 && os[len(os)-1] != "" { // PHP reads the last field
		h.Set("Access-Control-Allow-Origin", os[len(os)-1])
		h.Add("Vary", "Origin")
	}
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, `[{"id":1,"answer":%d,"path":%q}]`, n, r.URL.RequestURI())
}

func newCache(t *testing.T, o Options) *Cache {
	t.Helper()
	if o.Namespaces == nil {
		o.Namespaces = []string{"wp/v2"}
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var site1 = Request{Site: 1, Route: "/wp/v2/posts", Forwarded: "https"}

// ask sends a request through c to p, with header fields "Name: value".
func ask(c *Cache, p http.Handler, method, target string, req Request, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for _, f := range hdr {
		k, v, _ := strings.Cut(f, ": ")
		if k == "Host" {
			r.Host = v
		} else {
			r.Header.Add(k, v)
		}
	}
	w := httptest.NewRecorder()
	w.Header().Set("X-Request-Id", "outer-"+target) // set by the outer layers
	c.Serve(w, r, req, p)
	return w
}

func TestServe_KeptAnswerGivenAgain(t *testing.T) {
	p := &php{}
	c := newCache(t, Options{})
	first := ask(c, p, "GET", "/wp-json/wp/v2/posts?per_page=10", site1)
	second := ask(c, p, "GET", "/wp-json/wp/v2/posts?per_page=10", site1)
	if n := p.calls.Load(); n != 1 {
		t.Fatalf("PHP answered %d times, want 1", n)
	}
	if second.Code != 200 || second.Body.String() != first.Body.String() {
		t.Errorf("kept answer: %d %q, PHP's: %d %q", second.Code, second.Body, first.Code, first.Body)
	}
	for _, k := range []string{"Content-Type", "X-WP-Total"} {
		if got, want := second.Header().Get(k), first.Header().Get(k); got != want {
			t.Errorf("%s: %q, PHP sent %q", k, got, want)
		}
	}
	if d := second.Header().Get("Date"); d == "Mon, 02 Jan 2006 15:04:05 GMT" || d == "" {
		t.Errorf("Date %q: not the time it was given", d)
	}
	if age := second.Header().Get("Age"); age != "0" && age != "1" || first.Header().Get("Age") != "" {
		t.Errorf("Age %q on the kept answer (%q on PHP's): the seconds it has been kept", age, first.Header().Get("Age"))
	}
	if id := second.Header().Get("X-Request-Id"); id != "outer-/wp-json/wp/v2/posts?per_page=10" {
		t.Errorf("X-Request-Id %q: the outer layer's own, not the first request's", id)
	}
	head := ask(c, p, "HEAD", "/wp-json/wp/v2/posts?per_page=10", site1)
	ask(c, p, "HEAD", "/wp-json/wp/v2/posts?per_page=10", site1)
	if n := p.calls.Load(); n != 2 || head.Code != 200 {
		t.Errorf("HEAD: PHP answered %d times in all (want 2: HEAD is keyed apart), status %d", n, head.Code)
	}
	st := c.Stats()
	if st.Hits != 2 || st.Misses != 2 || st.Kept != 2 || st.Bytes == 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestServe_Key: what makes PHP's answer is in the key; a client's
// variation of it gets PHP's own answer, never another's.
func TestServe_Key(t *testing.T) {
	p := &php{}
	c := newCache(t, Options{})
	base := ask(c, p, "GET", "/wp-json/wp/v2/posts", site1).Body.String()
	for _, tc := range []struct {
		name   string
		target string
		req    Request
		hdr    []string
	}{
		{"query", "/wp-json/wp/v2/posts?page=2", site1, nil},
		{"path spelled otherwise", "/wp-json/wp/v2/posts/", site1, nil},
		{"forwarded scheme", "/wp-json/wp/v2/posts", Request{Site: 1, Route: "/wp/v2/posts", Forwarded: "http"}, nil},
		{"forwarded host", "/wp-json/wp/v2/posts", Request{Site: 1, Route: "/wp/v2/posts", Forwarded: "https\x00evil.example"}, nil},
		{"host", "/wp-json/wp/v2/posts", site1, []string{"Host: evil.example"}},
		{"origin", "/wp-json/wp/v2/posts", site1, []string{"Origin: https://evil.example"}},
	} {
		before := p.calls.Load()
		got := ask(c, p, "GET", tc.target, tc.req, tc.hdr...)
		if p.calls.Load() != before+1 || got.Body.String() == base {
			t.Errorf("%s: given the kept answer of another key (%q)", tc.name, got.Body)
		}
	}
	// The Origin's own answer is kept for it, its CORS header with it.
	got := ask(c, p, "GET", "/wp-json/wp/v2/posts", site1, "Origin: https://evil.example")
	if o := got.Header().Get("Access-Control-Allow-Origin"); o != "https://evil.example" {
		t.Errorf("Origin's answer: Access-Control-Allow-Origin %q", o)
	}
	if got := ask(c, p, "GET", "/wp-json/wp/v2/posts", site1); got.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a request without Origin given another Origin's CORS header")
	}
	// Several Origin fields (PHP echoes the last) are a key of their own:
	// the front end's own answer is never the attacker's.
	ask(c, p, "GET", "/wp-json/wp/v2/tags", site1, "Origin: https://front.example", "Origin: https://evil.example")
	ask(c, p, "GET", "/wp-json/wp/v2/tags", site1, "Origin: ", "Origin: https://evil.example")
	for _, hdr := range [][]string{{"Origin: https://front.example"}, nil} {
		got := ask(c, p, "GET", "/wp-json/wp/v2/tags", site1, hdr...)
		if o := got.Header().Get("Access-Control-Allow-Origin"); strings.Contains(o, "evil") {
			t.Errorf("%v: given the attacker's Access-Control-Allow-Origin %q", hdr, o)
		}
	}
}

func TestBypass(t *testing.T) {
	c := newCache(t, Options{Namespaces: []string{"wp/v2"}})
	for _, tc := range []struct {
		method, target string
		route          string
		hdr            []string
		want           string
	}{
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", nil, ""},
		{"GET", "/wp-json/wp/v2", "/wp/v2", nil, ""},
		{"HEAD", "/wp-json/wp/v2/posts", "/wp/v2/posts", nil, ""},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"Accept-Encoding: gzip"}, ""},
		{"GET", "/wp-json/wp/v22/posts", "/wp/v22/posts", nil, BypassRoute},
		{"GET", "/wp-json/fieldmgr/v1/groups", "/fieldmgr/v1/groups", nil, BypassRoute},
		{"GET", "/wp-json/", "/", nil, BypassRoute},
		{"POST", "/wp-json/wp/v2/posts", "/wp/v2/posts", nil, BypassMethod},
		{"OPTIONS", "/wp-json/wp/v2/posts", "/wp/v2/posts", nil, BypassMethod},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"Authorization: Basic YTpi"}, BypassCredentials},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"Cookie: wordpress_logged_in_abc=x"}, BypassCookie},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"Cookie: wp-postpass_abc=x"}, BypassCookie},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"Cookie: _ga=1"}, BypassCookie},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"X-WP-Nonce: abc"}, BypassNonce},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"X-WP-Nonce: ", "X-WP-Nonce: abc"}, BypassNonce},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"Authorization: ", "Authorization: Basic YTpi"}, BypassCredentials},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"X-HTTP-Method-Override: GET", "X-HTTP-Method-Override: OPTIONS"}, BypassMethod},
		{"GET", "/wp-json/wp/v2/posts?_wpnonce=abc", "/wp/v2/posts", nil, BypassNonce},
		{"GET", "/wp-json/wp/v2/posts?%5Fwpnonce=abc", "/wp/v2/posts", nil, BypassNonce},
		{"GET", "/wp-json/wp/v2/posts?_wpnonce[]=abc", "/wp/v2/posts", nil, BypassNonce},
		{"GET", "/wp-json/wp/v2/posts?+_wpnonce=abc", "/wp/v2/posts", nil, BypassNonce},
		{"GET", "/wp-json/wp/v2/posts?%zz=1", "/wp/v2/posts", nil, ""}, // PHP's name "%zz"
		{"GET", "/wp-json/wp/v2/posts?_wpnonce%00x=1", "/wp/v2/posts", nil, BypassNonce},
		{"GET", "/wp-json/wp/v2/posts?%20_wpnonce=1", "/wp/v2/posts", nil, BypassNonce},
		{"GET", "/wp-json/wp/v2/posts?_wpnonce%zz=1", "/wp/v2/posts", nil, ""},
		{"GET", "/wp-json/wp/v2/../../../wp-links-opml.php", "/wp/v2/../../../wp-links-opml.php", nil, BypassTarget},
		{"GET", "/wp-json/wp/v2/posts/%2e%2E/x", "/wp/v2/posts/%2e%2E/x", nil, BypassTarget},
		{"GET", "/wp-json/wp/v2/./posts", "/wp/v2/./posts", nil, BypassTarget},
		{"GET", "/wp-json/wp/v2/posts%2F..%2Fx", "/wp/v2/posts%2F..%2Fx", nil, BypassTarget},
		{"GET", "/wp-json/wp/v2/posts%5C..%5Cx", "/wp/v2/posts%5C..%5Cx", nil, BypassTarget},
		{"GET", "/wp-json/wp/v2//posts", "/wp/v2//posts", nil, BypassTarget},
		{"GET", "/wp-json/wp/v2/posts/", "/wp/v2/posts/", nil, ""},
		{"GET", "/wp-json/wp/v2/posts/a.b", "/wp/v2/posts/a.b", nil, ""},
		// The spellings PHP reads alike (some web servers pass
		// underscores on), and a query past PHP's max_input_vars.
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"X_HTTP_METHOD_OVERRIDE: PUT"}, BypassMethod},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"x_wp_nonce: abc"}, BypassNonce},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"IF_NONE_MATCH: x"}, BypassConditional},
		{"GET", "/wp-json/wp/v2/posts?" + strings.Repeat("a&", 1000) + "x=1", "/wp/v2/posts", nil, BypassTarget},
		{"GET", "/wp-json/wp/v2/posts?" + strings.Repeat("a&", 999) + "x=1", "/wp/v2/posts", nil, ""},
		{"GET", "/wp-json/wp/v2/posts?wpnonce=abc", "/wp/v2/posts", nil, ""},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"If-None-Match: \"x\""}, BypassConditional},
		{"GET", "/wp-json/wp/v2/posts", "/wp/v2/posts", []string{"Range: bytes=0-1"}, BypassConditional},
		{"GET", "/wp-json/wp/v2/posts?q=" + strings.Repeat("a", maxTarget), "/wp/v2/posts", nil, BypassTarget},
	} {
		r := httptest.NewRequest(tc.method, tc.target, nil)
		for _, f := range tc.hdr {
			k, v, _ := strings.Cut(f, ": ")
			r.Header.Add(k, v)
		}
		if got := c.Bypass(r, Request{Site: 1, Route: tc.route}); got != tc.want {
			t.Errorf("%s %s %v: bypass %q, want %q", tc.method, tc.target, tc.hdr, got, tc.want)
		}
	}
	if got := c.Bypass(httptest.NewRequest("GET", "/wp-json/wp/v2/posts?_method=DELETE", nil), Request{Site: 1, Route: "/wp/v2/posts", Method: "DELETE"}); got != BypassMethod {
		t.Errorf("a GET WordPress serves as DELETE (_method): bypass %q", got)
	}
	r := httptest.NewRequest("GET", "/wp-json/wp/v2/posts", strings.NewReader("x"))
	if got := c.Bypass(r, site1); got != BypassBody {
		t.Errorf("a GET with a body: bypass %q", got)
	}
	current := false
	off := newCache(t, Options{Current: func(context.Context) bool { return current }})
	if got := off.Bypass(httptest.NewRequest("GET", "/wp-json/wp/v2/posts", nil), site1); got != BypassFeed {
		t.Errorf("feed not current: bypass %q", got)
	}
}

// TestServe_NeverKept: an answer that names its reader, asks not to be
// kept or has a status a shared cache may not keep unasked reaches PHP
// every time.
func TestServe_NeverKept(t *testing.T) {
	for _, tc := range []struct {
		name string
		head http.Header
		keep bool
	}{
		{"plain", nil, true},
		{"Set-Cookie", http.Header{"Set-Cookie": {"a=b"}}, false},
		{"private", http.Header{"Cache-Control": {"private, max-age=60"}}, false},
		{"no-store", http.Header{"Cache-Control": {"no-store"}}, false},
		{"no-cache", http.Header{"Cache-Control": {"no-cache, must-revalidate, max-age=0"}}, false},
		{"max-age=0", http.Header{"Cache-Control": {"max-age=0"}}, false},
		{"max-age=00", http.Header{"Cache-Control": {"public, max-age=00"}}, false},
		{"s-maxage=\"000\"", http.Header{"Cache-Control": {`s-maxage="000"`}}, false},
		{"max-age not a number", http.Header{"Cache-Control": {"max-age=soon"}}, false},
		{"max-age beyond 2^64", http.Header{"Cache-Control": {"max-age=99999999999999999999999"}}, true},
		{"Set-Cookie2", http.Header{"Set-Cookie2": {"a=b; Version=1"}}, false},
		{"public max-age", http.Header{"Cache-Control": {"public, max-age=600"}}, true},
		{"Vary Cookie", http.Header{"Vary": {"Cookie"}}, false},
		{"Vary *", http.Header{"Vary": {"*"}}, false},
		{"Vary Origin, Accept-Encoding", http.Header{"Vary": {"Origin, Accept-Encoding"}}, true},
		{"Content-Encoding", http.Header{"Content-Encoding": {"gzip"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &php{head: tc.head}
			c := newCache(t, Options{})
			for range 3 {
				ask(c, p, "GET", "/wp-json/wp/v2/posts", site1)
			}
			want := int64(3)
			if tc.keep {
				want = 1
			}
			if n := p.calls.Load(); n != want {
				t.Errorf("PHP answered %d of 3, want %d", n, want)
			}
		})
	}
	for status, keep := range map[int]bool{200: true, 301: true, 404: true, 410: true, 302: false, 400: false, 401: false, 403: false, 500: false, 503: false} {
		if got := keepable(status, http.Header{}); got != keep {
			t.Errorf("status %d: keepable %v, want %v", status, got, keep)
		}
	}
}

// TestServe_IdentityFromPHP: PHP is asked for the identity coding, which
// any client may be given.
func TestServe_IdentityFromPHP(t *testing.T) {
	p := &php{}
	c := newCache(t, Options{})
	ask(c, p, "GET", "/wp-json/wp/v2/posts", site1, "Accept-Encoding: gzip, br")
	ask(c, p, "POST", "/wp-json/wp/v2/posts", Request{Site: 1, Route: "/wp/v2/posts"}, "Accept-Encoding: gzip")
	if want := []string{"", "gzip"}; fmt.Sprint(p.encodings) != fmt.Sprint(want) {
		t.Errorf("Accept-Encoding that reached PHP: %q, want %q (a bypass goes as sent)", p.encodings, want)
	}
}

func TestServe_Drops(t *testing.T) {
	p := &php{}
	c := newCache(t, Options{})
	site2 := Request{Site: 2, Route: "/wp/v2/posts", Forwarded: "https"}
	ask(c, p, "GET", "/wp-json/wp/v2/posts", site1)
	ask(c, p, "GET", "/wp-json/wp/v2/posts", site2, "Host: two.example.org")
	c.DropSite(1, "posts")
	ask(c, p, "GET", "/wp-json/wp/v2/posts", site1)
	ask(c, p, "GET", "/wp-json/wp/v2/posts", site2, "Host: two.example.org")
	if n := p.calls.Load(); n != 3 {
		t.Errorf("after site 1's drop PHP answered %d in all, want 3 (site 2's kept)", n)
	}
	c.DropAll("config")
	ask(c, p, "GET", "/wp-json/wp/v2/posts", site1)
	ask(c, p, "GET", "/wp-json/wp/v2/posts", site2, "Host: two.example.org")
	if n := p.calls.Load(); n != 5 {
		t.Errorf("after dropping all PHP answered %d in all, want 5", n)
	}
	if st := c.Stats(); st.Dropped["posts"] != 1 || st.Dropped["config"] != 1 {
		t.Errorf("drops counted: %v", st.Dropped)
	}

	// A change committed while PHP made the answer: not kept.
	p.during = func() { c.DropSite(1, "posts") }
	ask(c, p, "GET", "/wp-json/wp/v2/posts?during", site1)
	p.during = nil
	ask(c, p, "GET", "/wp-json/wp/v2/posts?during", site1)
	ask(c, p, "GET", "/wp-json/wp/v2/posts?during", site1)
	if n := p.calls.Load(); n != 7 {
		t.Errorf("an answer made across a change: PHP answered %d in all, want 7 (the first not kept, the second kept)", n)
	}

	// While the feed is not current nothing is given or kept.
	current := false
	c.o.Current = func(context.Context) bool { return current }
	ask(c, p, "GET", "/wp-json/wp/v2/posts?during", site1)
	ask(c, p, "GET", "/wp-json/wp/v2/posts?new", site1)
	current = true
	ask(c, p, "GET", "/wp-json/wp/v2/posts?new", site1)
	if n := p.calls.Load(); n != 10 {
		t.Errorf("feed not current: PHP answered %d in all, want 10", n)
	}
}

// TestServe_Stampede: concurrent misses for one key reach PHP once.
func TestServe_Stampede(t *testing.T) {
	for _, keep := range []bool{true, false} {
		p := &php{gate: make(chan struct{})}
		if !keep {
			p.head = http.Header{"Set-Cookie": {"a=b"}}
		}
		c := newCache(t, Options{})
		const n = 200
		var wg sync.WaitGroup
		bodies := make([]string, n)
		for i := range n {
			wg.Go(func() { bodies[i] = ask(c, p, "GET", "/wp-json/wp/v2/posts", site1).Body.String() })
		}
		// Every request is in: one at PHP, the others waiting for it.
		testwait.For(t, "the requests to gather", func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			f := c.flights[keyOf(httptest.NewRequest("GET", "/wp-json/wp/v2/posts", nil), site1)]
			return f != nil && p.calls.Load() == 1 && f.waiting.Load() == n-1
		})
		close(p.gate)
		wg.Wait()
		want := int64(1)
		if !keep {
			want = n // each waiter goes to PHP itself
		}
		if got := p.calls.Load(); got != want {
			t.Errorf("keep %v: PHP answered %d of %d concurrent misses, want %d", keep, got, n, want)
		}
		if keep {
			for i, b := range bodies {
				if b != bodies[0] {
					t.Fatalf("request %d got %q, the first %q", i, b, bodies[0])
				}
			}
		}
	}
}

// TestServe_Bounds: an answer above MaxAnswer is not kept; a flood of
// distinct URLs does not push out the answers that are hit.
func TestServe_Bounds(t *testing.T) {
	p := &php{head: http.Header{"X-Pad": {strings.Repeat("p", 2000)}}}
	c := newCache(t, Options{MaxAnswer: 40, MaxBytes: 64 << 10})
	for range 2 {
		ask(c, p, "GET", "/wp-json/wp/v2/posts?a-long-query-that-makes-the-body-long", site1)
	}
	if n := p.calls.Load(); n != 2 {
		t.Errorf("an answer above MaxAnswer: PHP answered %d of 2", n)
	}

	c = newCache(t, Options{MaxBytes: 256 << 10})
	hot := func(i int) string { return fmt.Sprintf("/wp-json/wp/v2/posts/%d", i) }
	for range 20 {
		for i := range 10 {
			ask(c, p, "GET", hot(i), site1)
		}
	}
	// Between two rounds of hits, twice the budget of new URLs: a cache
	// that kept the newest would have none of the hot answers left.
	missed := int64(0)
	for round := range 25 {
		for i := range 200 {
			ask(c, p, "GET", fmt.Sprintf("/wp-json/wp/v2/posts?flood=%d-%d", round, i), site1)
		}
		before := p.calls.Load()
		for i := range 10 {
			ask(c, p, "GET", hot(i), site1)
		}
		missed += p.calls.Load() - before
	}
	// A cache that kept the newest misses all 250; W-TinyLFU misses about
	// one a round (the window it admits through).
	if missed > 125 {
		t.Errorf("amid a flood of 5000 URLs, %d of 250 hits of the hot answers went to PHP", missed)
	}
	if st := c.Stats(); st.Bytes > 256<<10 {
		t.Errorf("%d bytes kept, above the budget", st.Bytes)
	}
}

func TestNew_Bounds(t *testing.T) {
	for _, o := range []Options{{MaxBytes: -1}, {MaxAnswer: -1}, {MaxBytes: 10, MaxAnswer: 20}} {
		if _, err := New(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// FuzzHasNonce: a query whose decoded names include _wpnonce (as Go
// decodes them, which PHP does alike where Go can) is always found;
// nothing panics.
func FuzzHasNonce(f *testing.F) {
	for _, s := range []string{"_wpnonce=1", "a=1&%5Fwpnonce=2", "_wpnonce[]=1", "+_wpnonce=1", "%zz", "_wp.nonce=1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := hasNonce(raw)
		for _, kv := range strings.Split(raw, "&") {
			k, _, _ := strings.Cut(kv, "=")
			if name, err := url.QueryUnescape(k); err == nil && name == "_wpnonce" && !got {
				t.Fatalf("%q: _wpnonce not found", raw)
			}
		}
	})
}

// TestTouched: which committed writes drop which site's answers.
func TestTouched(t *testing.T) {
	for _, tc := range []struct {
		name    string
		touched wpsidecar.Touched
		dropped []int64 // the sites whose answers go
	}{
		{"a post on site 1", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_posts"}}}, []int64{1}},
		{"a plugin's table on site 2", wpsidecar.Touched{Written: map[int64][]string{2: {"wp_plugin_stock"}}}, []int64{2}},
		{"the cron row", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_options"}}, Options: map[int64][]string{1: {"cron"}}}, nil},
		{"transient timeouts and the cron lock", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_options"}}, Options: map[int64][]string{1: {"_transient_timeout_x", "_site_transient_timeout_y", "_transient_doing_cron"}}}, nil},
		{"cron and blogname", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_options"}}, Options: map[int64][]string{1: {"cron", "blogname"}}}, []int64{1}},
		{"a transient's value", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_options"}}, Options: map[int64][]string{1: {"_transient_feed_x"}}}, []int64{1}},
		{"cron and a post", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_options", "wp_posts"}}, Options: map[int64][]string{1: {"cron"}}}, []int64{1}},
		{"DDL", wpsidecar.Touched{DDL: true}, []int64{1, 2}},
		{"the network's sites", wpsidecar.Touched{Network: true}, []int64{1, 2}},
		{"a user (every site shows users)", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_users"}}}, []int64{1, 2}},
		{"a user's meta", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_usermeta"}}}, []int64{1, 2}},
		{"a network option", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_sitemeta"}}}, []int64{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &php{}
			c := newCache(t, Options{TablePrefix: "wp_"})
			sites := map[int64]Request{1: site1, 2: {Site: 2, Route: "/wp/v2/posts", Forwarded: "https"}}
			hosts := map[int64]string{1: "Host: example.com", 2: "Host: two.example.org"}
			for _, id := range []int64{1, 2} {
				ask(c, p, "GET", "/wp-json/wp/v2/posts", sites[id], hosts[id])
			}
			c.Touched(tc.touched)
			var dropped []int64
			for _, id := range []int64{1, 2} {
				before := p.calls.Load()
				ask(c, p, "GET", "/wp-json/wp/v2/posts", sites[id], hosts[id])
				if p.calls.Load() > before {
					dropped = append(dropped, id)
				}
			}
			if fmt.Sprint(dropped) != fmt.Sprint(tc.dropped) {
				t.Errorf("answers dropped for sites %v, want %v", dropped, tc.dropped)
			}
		})
	}
}

// wpREST answers like WordPress's REST server: posts 14 and 15 by user 1
// in category 3, the user, the category, and the posts' list; each
// answer numbered by how many it made of its path.
type wpREST struct {
	mu    sync.Mutex
	calls map[string]int
}

func (p *wpREST) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.calls == nil {
		p.calls = map[string]int{}
	}
	p.calls[r.URL.Path]++
	n := p.calls[r.URL.Path]
	p.mu.Unlock()
	post := func(id int) string {
		return fmt.Sprintf(`{"id":%d,"type":"post","slug":"p%d","author":1,"featured_media":0,"categories":[3],"tags":[],"n":%d,"_links":{"self":[{"href":"x"}]}}`, id, id, n)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	switch r.URL.Path {
	case "/wp-json/wp/v2/posts/14":
		io.WriteString(w, post(14))
	case "/wp-json/wp/v2/posts/16": // 400 tags: more than the tag headers hold
		tags := make([]string, 400)
		for i := range tags {
			tags[i] = strconv.Itoa(1000 + i)
		}
		fmt.Fprintf(w, `{"id":16,"type":"post","slug":"p16","author":1,"featured_media":0,"categories":[3],"tags":[%s],"n":%d}`, strings.Join(tags, ","), n)
	case "/wp-json/wp/v2/posts/15":
		io.WriteString(w, post(15))
	case "/wp-json/wp/v2/users/1":
		fmt.Fprintf(w, `{"id":1,"name":"admin","slug":"admin","avatar_urls":{"24":"x"},"n":%d}`, n)
	case "/wp-json/wp/v2/categories/3":
		fmt.Fprintf(w, `{"id":3,"taxonomy":"category","slug":"c","parent":0,"n":%d}`, n)
	case "/wp-json/wp/v2/widgets/4":
		fmt.Fprintf(w, `{"id":4,"sidebar":"s","n":%d}`, n) // an object of a kind the cache does not know
	default:
		fmt.Fprintf(w, `[%s,%s]`, post(14), post(15))
	}
}

// TestTouched_ByRows: a write of a site's posts, terms, comments or users
// drops the answers that show them and the site's lists, and keeps the
// rest; a user's, on every site; bookkeeping meta rows drop nothing.
func TestTouched_ByRows(t *testing.T) {
	paths := []string{"/wp-json/wp/v2/posts/14", "/wp-json/wp/v2/posts/15", "/wp-json/wp/v2/users/1", "/wp-json/wp/v2/categories/3", "/wp-json/wp/v2/widgets/4", "/wp-json/wp/v2/posts"}
	rows := func(site int64, tables []string, values map[string][]string) wpsidecar.Touched {
		return wpsidecar.Touched{Written: map[int64][]string{site: tables}, RowValues: map[int64]map[string][]string{site: values}}
	}
	for _, tc := range []struct {
		name    string
		touched wpsidecar.Touched
		dropped []string // paths of site 1 asked of PHP again
		site2   bool     // site 2's list too
	}{
		{"post 14", rows(1, []string{"wp_posts"}, map[string][]string{"wp_posts.ID": {"14"}, "wp_posts.post_type": {"post"}}),
			[]string{"/wp-json/wp/v2/posts/14", "/wp-json/wp/v2/users/1", "/wp-json/wp/v2/widgets/4", "/wp-json/wp/v2/posts"}, false},
		{"page 16 (its slug is in its descendants' links)", rows(1, []string{"wp_posts"}, map[string][]string{"wp_posts.ID": {"16"}, "wp_posts.post_type": {"page"}}), paths, false},
		{"a synced pattern (rendered in posts)", rows(1, []string{"wp_posts"}, map[string][]string{"wp_posts.ID": {"17"}, "wp_posts.post_type": {"wp_block"}}), paths, false},
		{"a term's name", rows(1, []string{"wp_terms"}, map[string][]string{}), paths, false},
		{"post 14's meta", rows(1, []string{"wp_postmeta"}, map[string][]string{"wp_postmeta.post_id": {"14"}, "wp_postmeta.meta_key": {"rc_note"}}),
			[]string{"/wp-json/wp/v2/posts/14", "/wp-json/wp/v2/users/1", "/wp-json/wp/v2/widgets/4", "/wp-json/wp/v2/posts"}, false},
		{"a revision of post 14 (its count and latest are in the post's links)", rows(1, []string{"wp_posts"}, map[string][]string{"wp_posts.ID": {"99"}, "wp_posts.post_type": {"revision"}, "wp_posts.post_parent": {"14"}}),
			[]string{"/wp-json/wp/v2/posts/14", "/wp-json/wp/v2/users/1", "/wp-json/wp/v2/widgets/4", "/wp-json/wp/v2/posts"}, false},
		{"post 14's editor lock", rows(1, []string{"wp_postmeta"}, map[string][]string{"wp_postmeta.post_id": {"14"}, "wp_postmeta.meta_key": {"_edit_lock"}}),
			nil, false},
		{"category 3", rows(1, []string{"wp_term_taxonomy"}, map[string][]string{"wp_term_taxonomy.term_id": {"3"}}),
			[]string{"/wp-json/wp/v2/posts/14", "/wp-json/wp/v2/posts/15", "/wp-json/wp/v2/users/1", "/wp-json/wp/v2/categories/3", "/wp-json/wp/v2/widgets/4", "/wp-json/wp/v2/posts"}, false},
		{"a comment on post 15", rows(1, []string{"wp_comments"}, map[string][]string{"wp_comments.comment_ID": {"9"}, "wp_comments.comment_post_ID": {"15"}}),
			[]string{"/wp-json/wp/v2/posts/15", "/wp-json/wp/v2/users/1", "/wp-json/wp/v2/widgets/4", "/wp-json/wp/v2/posts"}, false},
		{"user 1", rows(1, []string{"wp_users"}, map[string][]string{"wp_users.ID": {"1"}}),
			[]string{"/wp-json/wp/v2/posts/14", "/wp-json/wp/v2/posts/15", "/wp-json/wp/v2/users/1", "/wp-json/wp/v2/widgets/4", "/wp-json/wp/v2/posts"}, true},
		{"user 1's sessions", rows(1, []string{"wp_usermeta"}, map[string][]string{"wp_usermeta.user_id": {"1"}, "wp_usermeta.meta_key": {"session_tokens"}}),
			nil, false},
		{"post 14 on site 2", rows(2, []string{"wp_posts"}, map[string][]string{"wp_posts.ID": {"14"}}),
			nil, true},
		{"a plugin's table", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_plugin_stock"}}}, paths, false},
		{"posts whose ids were not read", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_posts"}}}, paths, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &wpREST{}
			c := newCache(t, Options{TablePrefix: "wp_"})
			list2 := Request{Site: 2, Route: "/wp/v2/posts"}
			for _, path := range paths {
				ask(c, p, "GET", path, Request{Site: 1, Route: strings.TrimPrefix(path, "/wp-json")})
			}
			ask(c, p, "GET", "/wp-json/wp/v2/posts", list2, "Host: two.example.org")
			c.Touched(tc.touched)
			var dropped []string
			for _, path := range paths {
				before := p.calls[path]
				ask(c, p, "GET", path, Request{Site: 1, Route: strings.TrimPrefix(path, "/wp-json")})
				if p.calls[path] > before {
					dropped = append(dropped, path)
				}
			}
			before := p.calls["/wp-json/wp/v2/posts"]
			ask(c, p, "GET", "/wp-json/wp/v2/posts", list2, "Host: two.example.org")
			site2 := p.calls["/wp-json/wp/v2/posts"] > before
			if !slices.Equal(dropped, tc.dropped) && !(len(dropped) == 0 && len(tc.dropped) == 0) || site2 != tc.site2 {
				t.Errorf("asked PHP again for %q and site 2's list %v; want %q, %v", dropped, site2, tc.dropped, tc.site2)
			}
		})
	}
}

func TestKeysOf(t *testing.T) {
	for _, tc := range []struct {
		route, body string
		want        []string
	}{
		{"/wp/v2/posts/14", `{"id":14,"type":"post","slug":"a","author":2,"featured_media":30,"parent":0,"categories":[3,4],"tags":[7]}`,
			[]string{"post:14", "user:2", "post:30", "term:3", "term:4", "term:7"}},
		{"/wp/v2/posts/14", `{"id":14,"type":"post","slug":"a","author":2,"_embedded":{"author":[{"id":2,"slug":"u","avatar_urls":{}}],"wp:term":[[{"id":5,"taxonomy":"genre","slug":"g"}]],"replies":[[{"id":9,"post":14,"author":0,"author_name":"x"}]]}}`,
			[]string{"post:14", "user:2", "term:5", "comment:9"}},
		{"/wp/v2/comments/9", `{"id":9,"post":14,"author":3,"author_name":"x","parent":0}`, []string{"comment:9", "post:14", "user:3"}},
		{"/wp/v2/users/2", `{"id":2,"name":"u","slug":"u","avatar_urls":{}}`, nil}, // shown while they have published posts: a list
		{"/wp/v2/media/30", `{"id":30,"type":"attachment","slug":"m","author":2,"post":14}`, []string{"post:30", "post:14", "user:2"}},
		{"/wp/v2/posts", `[{"id":14,"type":"post","slug":"a"}]`, nil},               // a list
		{"/wp/v2/posts/14", `{"id":15,"type":"post","slug":"a"}`, nil},              // not the entity its route names
		{"/wp/v2/widgets/4", `{"id":4,"sidebar":"s"}`, nil},                         // a kind not known
		{"/wp/v2/posts/14", `{"id":14,"type":"post","slug":"a","x":{"id":1}}`, nil}, // shows an object not known
		{"/wp/v2/posts/14", `not json`, nil},
	} {
		got := keysOf(tc.route, []byte(tc.body))
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s %s: %q, want %q", tc.route, tc.body, got, tc.want)
		}
	}
}

// TestTags: a kept answer names what it shows as cache tags, from the
// first time it goes out; a change's purge names the tags of what it
// dropped.
func TestTags(t *testing.T) {
	p := &wpREST{}
	c := newCache(t, Options{TablePrefix: "wp_"})
	for _, tc := range []struct {
		site       int64
		path, want string
	}{
		{0, "/wp-json/wp/v2/posts/14", "rest rest:post:14 rest:user:1 rest:term:3"},
		{2, "/wp-json/wp/v2/posts/14", "site2:rest rest site2:rest:post:14 rest:user:1 site2:rest:term:3"},
		{0, "/wp-json/wp/v2/posts", "rest rest:lists"},
		{2, "/wp-json/wp/v2/posts", "site2:rest rest site2:rest:lists rest:lists"},
		// Its 400 terms' tags do not fit: tagged as a list, which every
		// write of what it shows purges.
		{0, "/wp-json/wp/v2/posts/16", "rest rest:lists"},
	} {
		host := fmt.Sprintf("Host: site%d.example", tc.site)
		req := Request{Site: tc.site, Route: strings.TrimPrefix(tc.path, "/wp-json")}
		first := ask(c, p, "GET", tc.path, req, host)
		again := ask(c, p, "GET", tc.path, req, host)
		if got := first.Header().Get("Surrogate-Key"); got != tc.want || again.Header().Get("Surrogate-Key") != tc.want {
			t.Errorf("site %d %s: Surrogate-Key %q, then %q; want %q", tc.site, tc.path, got, again.Header().Get("Surrogate-Key"), tc.want)
		}
	}
	for _, tc := range []struct {
		name    string
		touched wpsidecar.Touched
		want    []string
	}{
		{"post 14 on site 2", wpsidecar.Touched{Written: map[int64][]string{2: {"wp_posts"}}, RowValues: map[int64]map[string][]string{2: {"wp_posts.ID": {"14"}}}},
			[]string{"site2:rest:lists", "site2:rest:post:14"}},
		{"user 1", wpsidecar.Touched{Written: map[int64][]string{1: {"wp_users"}}, RowValues: map[int64]map[string][]string{1: {"wp_users.ID": {"1"}}}},
			[]string{"rest:lists", "rest:user:1", "site1:rest:lists"}},
		{"a plugin's table on site 2", wpsidecar.Touched{Written: map[int64][]string{2: {"wp_stock"}}}, []string{"site2:rest"}},
		{"the cron row", wpsidecar.Touched{Written: map[int64][]string{0: {"wp_options"}}, Options: map[int64][]string{0: {"cron"}}}, nil},
		{"DDL", wpsidecar.Touched{DDL: true}, []string{"rest"}},
		{"writes the feed may have missed", wpsidecar.Touched{Missed: true}, []string{"rest"}},
	} {
		if got := c.Tags(tc.touched); !slices.Equal(got, tc.want) {
			t.Errorf("%s: purges %q, want %q", tc.name, got, tc.want)
		}
	}
}

// flushing answers like the reverse proxy passing on an answer PHP sent
// without a length: a flush after every write.
type flushing struct {
	http.Handler
	contentType string
}

func (f flushing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", f.contentType)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for _, part := range []string{`{"a":`, `1}`} {
		io.WriteString(w, part)
		rc.Flush()
	}
}

// TestServe_Flushed: an answer flushed as it is written is kept whole;
// an event stream goes through as it comes, and is not kept.
func TestServe_Flushed(t *testing.T) {
	for _, tc := range []struct {
		contentType string
		kept        bool
	}{{"application/json; charset=UTF-8", true}, {"text/event-stream", false}} {
		c := newCache(t, Options{})
		php := flushing{contentType: tc.contentType}
		target := "/wp-json/wp/v2/stream?type=" + url.QueryEscape(tc.contentType)
		first := ask(c, php, "GET", target, site1)
		kept := c.Stats().Kept
		ask(c, php, "GET", target, site1)
		if first.Body.String() != `{"a":1}` || (c.Stats().Hits > 0) != tc.kept {
			t.Errorf("%s: %q, kept %d, hits %d", tc.contentType, first.Body.String(), kept, c.Stats().Hits)
		}
	}
}

// TestCapture_Holding: what the answers being fetched hold together is
// bounded: past the bound, an answer goes through as it comes (not
// kept), and what one held is given back when it ends.
func TestCapture_Holding(t *testing.T) {
	var holding atomic.Int64
	a := &capture{w: httptest.NewRecorder(), header: http.Header{}, max: 1000, holding: &holding, limit: 100}
	b := &capture{w: httptest.NewRecorder(), header: http.Header{}, max: 1000, holding: &holding, limit: 100}
	a.Write(make([]byte, 80))
	b.Write(make([]byte, 30))
	if a.through || !b.through || holding.Load() != 80 {
		t.Errorf("a through %v, b through %v, holding %d; want a held, b through, 80", a.through, b.through, holding.Load())
	}
	a.release()
	if holding.Load() != 0 {
		t.Errorf("holding %d after release", holding.Load())
	}
}

// stalled is a client that takes nothing it is sent until let go.
type stalled struct {
	http.ResponseWriter
	go_ chan struct{}
}

func (s stalled) Write(p []byte) (int, error) { <-s.go_; return s.ResponseWriter.Write(p) }

// TestServe_SlowFirstClient: the requests waiting for a fetch are given
// PHP's answer as soon as it is whole, however slowly the client that
// asked first takes it.
func TestServe_SlowFirstClient(t *testing.T) {
	p := &php{gate: make(chan struct{})}
	c := newCache(t, Options{})
	slow := stalled{httptest.NewRecorder(), make(chan struct{})}
	first := make(chan struct{})
	go func() {
		defer close(first)
		c.Serve(slow, httptest.NewRequest("GET", "/wp-json/wp/v2/posts", nil), site1, p)
	}()
	testwait.For(t, "the first request at PHP", func() bool { return p.calls.Load() == 1 })
	waiter := make(chan *httptest.ResponseRecorder)
	go func() { waiter <- ask(c, p, "GET", "/wp-json/wp/v2/posts", site1) }()
	testwait.For(t, "the second request waiting for the first's fetch", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		f := c.flights[keyOf(httptest.NewRequest("GET", "/wp-json/wp/v2/posts", nil), site1)]
		return f != nil && f.waiting.Load() == 1
	})
	close(p.gate)
	select {
	case w := <-waiter:
		if w.Code != 200 || p.calls.Load() != 1 {
			t.Errorf("the waiter: %d, PHP asked %d times", w.Code, p.calls.Load())
		}
	case <-time.After(10 * time.Second): // a bound on a failure, not a wait for the answer
		t.Error("the waiter is held while the first client takes its answer")
	}
	close(slow.go_)
	<-first
}

// TestServe_RacedFetch: when a write comes while PHP makes an answer that
// could be kept, the requests waiting for it do not all go to PHP: one
// fetches again, the others wait for that one.
func TestServe_RacedFetch(t *testing.T) {
	c := newCache(t, Options{})
	var once sync.Once
	p := &php{gate: make(chan struct{}), during: func() { once.Do(func() { c.DropSite(1, DropWritten) }) }}
	const n = 50
	var wg sync.WaitGroup
	codes := make(chan int, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- ask(c, p, "GET", "/wp-json/wp/v2/posts", site1).Code
		}()
	}
	testwait.For(t, "every request at the first fetch", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		f := c.flights[keyOf(httptest.NewRequest("GET", "/wp-json/wp/v2/posts", nil), site1)]
		return f != nil && f.waiting.Load() == n-1
	})
	close(p.gate)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != 200 {
			t.Errorf("status %d", code)
		}
	}
	if got := p.calls.Load(); got != 2 {
		t.Errorf("PHP asked %d times, want 2 (the raced fetch and the one after)", got)
	}
}

// TestServe_FeedBehindTags: while the feed is behind, answers are not
// kept, but go out named by their tags, so that a CDN that keeps them is
// purged once the feed catches up.
func TestServe_FeedBehindTags(t *testing.T) {
	p := &wpREST{}
	c := newCache(t, Options{Current: func(context.Context) bool { return false }})
	for range 2 {
		w := ask(c, p, "GET", "/wp-json/wp/v2/posts/14", Request{Site: 0, Route: "/wp/v2/posts/14"})
		if got := w.Header().Get("Surrogate-Key"); got != "rest rest:post:14 rest:user:1 rest:term:3" {
			t.Errorf("Surrogate-Key %q", got)
		}
	}
	if p.calls["/wp-json/wp/v2/posts/14"] != 2 || c.Stats().Kept != 0 {
		t.Errorf("PHP asked %d times, kept %d: the feed behind keeps nothing", p.calls["/wp-json/wp/v2/posts/14"], c.Stats().Kept)
	}
}

// notFound answers as WordPress does a route it does not have, echoing
// the request's last Origin as WordPress's CORS headers do, unless quiet
// (as a site that sends none).
type notFound struct{ quiet bool }

func (p notFound) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("X-Robots-Tag", "noindex")
	h.Set("Link", `<https://example.org/wp-json/>; rel="https://api.w.org/"`)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Access-Control-Expose-Headers", "X-WP-Total, X-WP-TotalPages, Link")
	h.Set("Access-Control-Allow-Headers", "Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type")
	if os := r.Header.Values("Origin"); len(os) > 0 && !p.quiet {
		h.Set("Access-Control-Allow-Origin", os[len(os)-1])
		h.Set("Access-Control-Allow-Methods", "OPTIONS, GET, POST, PUT, PATCH, DELETE")
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Add("Vary", "Origin")
	}
	w.WriteHeader(http.StatusNotFound)
	io.WriteString(w, `{"code":"rest_no_route","message":"No route was found matching the URL and request method.","data":{"status":404}}`)
}

// liveHeap is the heap in use once the collector has run.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestServe_FloodHeap: a flood of anonymous GETs of long unique targets,
// each with three long Origin fields, leaves the cache holding what its
// budget says, and what the metric says it holds (docs/rest-cache.md):
// the heap it leaves is within the budget and a fixed allowance, and
// within a few percent of what the kept answers weigh. Before, a key
// weighed nothing: 3,000 such GETs left 72 MB for a budget of 2 MiB.
func TestServe_FloodHeap(t *testing.T) {
	const budget = 2 << 20
	long := func(i int) string { return fmt.Sprintf("/wp-json/wp/v2/nope?%06d%s", i, strings.Repeat("q", 4000)) }
	for _, tc := range []struct {
		name    string
		target  func(i int) string
		origins int
		php     notFound
	}{
		{"long targets and Origins", long, 3, notFound{quiet: true}},
		{"long targets and Origins, echoed", long, 3, notFound{}},
		{"short targets", func(i int) string { return fmt.Sprintf("/wp-json/wp/v2/nope?%d", i) }, 0, notFound{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := liveHeap()
			c := newCache(t, Options{MaxBytes: budget})
			const n = 3000
			for i := range n {
				r := httptest.NewRequest("GET", tc.target(i), nil)
				for j := range tc.origins {
					// Each its own bytes, as a server reads them.
					r.Header.Add("Origin", fmt.Sprintf("https://%d-%d.%s.example", i, j, strings.Repeat("o", 7800)))
				}
				c.Serve(httptest.NewRecorder(), r, Request{Site: 1, Route: "/wp/v2/nope", Forwarded: "https"}, tc.php)
			}
			held := int64(liveHeap()) - int64(before)
			st := c.Stats()
			runtime.KeepAlive(c)
			t.Logf("%d GETs: %d answers kept, weighing %d bytes; live heap grew %d bytes (budget %d)", n, st.Kept, st.Bytes, held, budget)
			if st.Bytes > budget {
				t.Errorf("the kept answers weigh %d bytes, over the budget of %d", st.Bytes, budget)
			}
			// The allowance: the frequency sketch and table sized for the
			// budget, and what the runtime keeps besides.
			const allowance = 1 << 20
			if held > budget+allowance {
				t.Errorf("the live heap grew %d bytes after the flood, over the budget of %d and its allowance of %d", held, budget, allowance)
			}
			if held > int64(st.Bytes)+allowance {
				t.Errorf("the live heap grew %d bytes; the answers kept are said to weigh %d", held, st.Bytes)
			}
		})
	}
}

// TestServe_FirstFlood: the answers hit while the cache first fills are
// kept through a flood of one-off URLs that comes before it is full.
// Left to itself, otter sized its frequency sketch only once the cache
// was half full, and again at each doubling of its count, forgetting
// every hit counted: the first such flood left none of the hot answers.
func TestServe_FirstFlood(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20})
	p := &php{head: http.Header{"X-Pad": {strings.Repeat("p", 4000)}}}
	hot := func(i int) string { return fmt.Sprintf("/wp-json/wp/v2/posts?page=%d", i) }
	for range 3 {
		for i := range 30 {
			ask(c, p, "GET", hot(i), site1)
		}
	}
	for i := range 1300 {
		c.Serve(httptest.NewRecorder(), httptest.NewRequest("GET", fmt.Sprintf("/wp-json/wp/v2/nope?%d", i), nil), Request{Site: 1, Route: "/wp/v2/nope"}, notFound{})
	}
	before := p.calls.Load()
	for i := range 30 {
		ask(c, p, "GET", hot(i), site1)
	}
	if missed := p.calls.Load() - before; missed > 3 {
		t.Errorf("after a flood of 1,300 one-off answers on the first fill, %d of the 30 hot answers went to PHP (at most 3)", missed)
	}
}

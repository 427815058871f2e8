package rest

import (
	"context"
	"crypto/tls"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/contentcoding"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// keptNS counts how often each of its answers is built, and puts the
// count in the body: an answer given again from those kept says the same
// number. GET /thing may be kept (until the time X-Until names, in unix
// nanoseconds, when sent); GET /fresh may not; GET /denied may, but
// answers 403; GET /big may, but is larger than anything coded.
type keptNS struct {
	builds atomic.Int64
	during func() // run while /thing is built, when set
}

func (*keptNS) Name() string { return "kept/v1" }
func (ns *keptNS) Register(r *mux.Router) {
	answer := func(keep bool, status int, size int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			n := ns.builds.Add(1)
			if keep {
				wpsidecar.ScopeOf(r.Context()).Allow()
			}
			if u := r.Header.Get("X-Until"); u != "" {
				ns, _ := strconv.ParseInt(u, 10, 64)
				wpsidecar.ScopeOf(r.Context()).Until(time.Unix(0, ns))
			}
			if ns.during != nil {
				ns.during()
			}
			w.Header().Set("Etag", `"t1"`)
			w.Header().Set("X-Origin-Seen", r.Header.Get("Origin"))
			body := `{"build":` + strconv.FormatInt(n, 10) + `,"pad":` + string(sizedBody(size)) + `}`
			wpjson.WriteRaw(w, status, []byte(body))
		}
	}
	r.HandleFunc("/thing", answer(true, http.StatusOK, 2000)).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/fresh", answer(false, http.StatusOK, 2000)).Methods(http.MethodGet)
	r.HandleFunc("/denied", answer(true, http.StatusForbidden, 10)).Methods(http.MethodGet)
	r.HandleFunc("/big", answer(true, http.StatusOK, contentcoding.MaxSize+10)).Methods(http.MethodGet)
	// GET /sized?n=N&piece=P may be kept: N bytes, written P at a time
	// (at once without P).
	r.HandleFunc("/sized", func(w http.ResponseWriter, r *http.Request) {
		wpsidecar.ScopeOf(r.Context()).Allow()
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		piece, _ := strconv.Atoi(r.URL.Query().Get("piece"))
		body := sizedBody(n)
		w.Header().Set("Etag", `"s"`)
		for piece > 0 && len(body) > piece {
			w.Write(body[:piece])
			body = body[piece:]
		}
		w.Write(body)
	}).Methods(http.MethodGet)
}

// phpSeen is a pass-through that says which If-None-Match it got.
type phpSeen struct{ calls atomic.Int64 }

func (p *phpSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.calls.Add(1)
	w.Header().Set("X-Inm-Seen", r.Header.Get("If-None-Match"))
	w.Write([]byte("php"))
}

// keptSite is a site with prepared answers, its version under the test's
// control.
type keptSite struct {
	routes  *Routes
	ns      *keptNS
	php     *phpSeen
	p       *Prepared
	version atomic.Uint64
	vouched atomic.Bool
	mu      sync.Mutex
	served  []string
}

func newKeptSite(t *testing.T, c *Compression) *keptSite {
	t.Helper()
	k := &keptSite{ns: &keptNS{}, php: &phpSeen{}}
	k.vouched.Store(true)
	k.p = NewPrepared(func(context.Context) (uint64, bool) { return k.version.Load(), k.vouched.Load() })
	s := &settings{}
	s.set(Routing{Home: "https://example.com"}, nil)
	served := func(_ http.ResponseWriter, r *http.Request, route string) {
		k.mu.Lock()
		k.served = append(k.served, route)
		k.mu.Unlock()
	}
	var err error
	k.routes, err = New(Options{PHP: k.php, Compression: c, Prepared: k.p, Served: served}, SiteOptions{Settings: s, Handlers: []Handlers{k.ns}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// get asks method path with the header pairs hdr; "RemoteAddr" and "TLS"
// set the connection instead.
func (k *keptSite) ask(method, path string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "https://example.com"+path, nil)
	req.TLS = nil
	for i := 0; i+1 < len(hdr); i += 2 {
		switch hdr[i] {
		case "RemoteAddr":
			req.RemoteAddr = hdr[i+1]
		case "TLS":
			req.TLS = &tls.ConnectionState{}
		default:
			req.Header.Add(hdr[i], hdr[i+1])
		}
	}
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Request-Id", "outer") // what the outer layers set
	k.routes.Serve(rec, req, "")
	return rec
}

// same fails unless two answers are the same: status, every header, body.
func same(t *testing.T, what string, got, want *httptest.ResponseRecorder) {
	t.Helper()
	if got.Code != want.Code || !maps.EqualFunc(got.Header(), want.Header(), slices.Equal) || got.Body.String() != want.Body.String() {
		t.Errorf("%s:\n got  %d %v %q\n want %d %v %q", what, got.Code, got.Header(), got.Body.String(), want.Code, want.Header(), want.Body.String())
	}
}

// The second GET of the same request is the first answer again, built
// once: status, headers and body, and the same route for the access log.
func TestPrepared_GivesAgain(t *testing.T) {
	for _, c := range []*Compression{nil, NewCompression()} {
		k := newKeptSite(t, c)
		creds := []string{"Authorization", "Basic eDp5", "Accept-Encoding", "br"}
		first := k.ask(http.MethodGet, "/wp-json/kept/v1/thing", creds...)
		again := k.ask(http.MethodGet, "/wp-json/kept/v1/thing", creds...)
		if first.Code != 200 || k.ns.builds.Load() != 1 {
			t.Fatalf("compression %v: %d, built %d times", c != nil, first.Code, k.ns.builds.Load())
		}
		same(t, "given again", again, first)
		var held int64
		for _, a := range k.p.answers {
			held += int64(a.size())
		}
		if st := k.p.Stats(); st != (PreparedStats{Given: 1, Kept: 1, Bytes: held}) || len(k.p.answers) != 1 {
			t.Errorf("stats %+v, %d answers kept", st, len(k.p.answers))
		}
		if want := []string{"GET /wp-json/kept/v1/thing", "GET /wp-json/kept/v1/thing"}; !slices.Equal(k.served, want) {
			t.Errorf("served %q, want %q", k.served, want)
		}
		if again.Header().Get("X-Request-Id") != "outer" || len(again.Header()["X-Request-Id"]) != 1 {
			t.Errorf("the outer layers' headers are theirs: %q", again.Header()["X-Request-Id"])
		}
	}
}

// Every part of the request is part of what it asks, but its id and its
// If-None-Match: another value of any is another answer, built.
func TestPrepared_KeyedByRequest(t *testing.T) {
	base := []string{"Authorization", "Basic eDp5", "Origin", "https://a.example", "Accept-Encoding", "gzip", "Cookie", "c=1", "RemoteAddr", "192.0.2.1:1000"}
	with := func(k, v string) []string {
		out := slices.Clone(base)
		for i := 0; i < len(out); i += 2 {
			if out[i] == k {
				out[i+1] = v
				return out
			}
		}
		return append(out, k, v)
	}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		hdr    []string
		built  bool
	}{
		{"the same", "GET", "/wp-json/kept/v1/thing", base, false},
		{"another credential", "GET", "/wp-json/kept/v1/thing", with("Authorization", "Basic eDp6"), true},
		{"another cookie", "GET", "/wp-json/kept/v1/thing", with("Cookie", "c=2"), true},
		{"another origin", "GET", "/wp-json/kept/v1/thing", with("Origin", "https://b.example"), true},
		{"another coding", "GET", "/wp-json/kept/v1/thing", with("Accept-Encoding", "br"), true},
		{"another client", "GET", "/wp-json/kept/v1/thing", with("RemoteAddr", "192.0.2.2:1000"), true},
		{"another port of the same client", "GET", "/wp-json/kept/v1/thing", with("RemoteAddr", "192.0.2.1:2000"), false},
		{"over TLS", "GET", "/wp-json/kept/v1/thing", with("TLS", "1"), true},
		{"a header more", "GET", "/wp-json/kept/v1/thing", with("X-WP-Nonce", "abc"), true},
		{"a forwarded scheme", "GET", "/wp-json/kept/v1/thing", with("X-Forwarded-Proto", "https"), true},
		{"another query", "GET", "/wp-json/kept/v1/thing?_fields=build", base, true},
		{"HEAD", "HEAD", "/wp-json/kept/v1/thing", base, true},
		{"another request id", "GET", "/wp-json/kept/v1/thing", with("X-Request-Id", "r2"), false},
		{"If-None-Match", "GET", "/wp-json/kept/v1/thing", with("If-None-Match", `"other"`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKeptSite(t, NewCompression())
			k.ask("GET", "/wp-json/kept/v1/thing", base...)
			k.ask(tc.method, tc.path, tc.hdr...)
			if built := k.ns.builds.Load() == 2; built != tc.built {
				t.Errorf("built again: %v, want %v", built, tc.built)
			}
		})
	}
}

// A kept answer goes when anything it was built from changes, or its
// credential's time is up; none is given or kept while the feed cannot
// vouch; one built across a change is not kept.
func TestPrepared_Follows(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name   string
		hdr    []string
		change func(k *keptSite)
		builds int64 // of three GETs, the change after the first
	}{
		{"nothing", nil, func(*keptSite) {}, 1},
		{"a change the feed reports", nil, func(k *keptSite) { k.version.Add(1) }, 2},
		{"a configuration file reloaded", nil, func(k *keptSite) { k.p.Changed() }, 2},
		{"the feed cannot vouch", nil, func(k *keptSite) { k.vouched.Store(false) }, 3},
		{"a change while building", nil, func(k *keptSite) { k.version.Add(1); k.ns.during = func() { k.version.Add(1) } }, 3},
		{"the credential's time is up", []string{"X-Until", strconv.FormatInt(now.Add(time.Second).UnixNano(), 10)},
			func(k *keptSite) { k.p.now = func() time.Time { return now.Add(time.Second) } }, 3},
		{"the credential's time not yet up", []string{"X-Until", strconv.FormatInt(now.Add(time.Second).UnixNano(), 10)},
			func(k *keptSite) { k.p.now = func() time.Time { return now.Add(time.Second - 1) } }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKeptSite(t, nil)
			k.p.now = func() time.Time { return now }
			first := k.ask("GET", "/wp-json/kept/v1/thing", tc.hdr...)
			tc.change(k)
			k.ask("GET", "/wp-json/kept/v1/thing", tc.hdr...)
			last := k.ask("GET", "/wp-json/kept/v1/thing", tc.hdr...)
			if n := k.ns.builds.Load(); n != tc.builds {
				t.Errorf("built %d times, want %d", n, tc.builds)
			}
			if last.Code != 200 || (tc.builds == 1 && last.Body.String() != first.Body.String()) {
				t.Errorf("last: %d %s", last.Code, last.Body)
			}
		})
	}
}

// Only a 200 of a route that allows it, to a GET or HEAD without a body or
// other conditions, is kept; everything else is built every time.
func TestPrepared_OnlyWhatMayBeKept(t *testing.T) {
	for _, tc := range []struct {
		name, method, path string
		hdr                []string
	}{
		{"a route that reads what the feed does not vouch for", "GET", "/wp-json/kept/v1/fresh", nil},
		{"a failure", "GET", "/wp-json/kept/v1/denied", nil},
		{"a failure in an envelope", "GET", "/wp-json/kept/v1/denied?_envelope", nil},
		{"larger than anything coded", "GET", "/wp-json/kept/v1/big", nil},
		{"If-Match", "GET", "/wp-json/kept/v1/thing", []string{"If-Match", `"t1"`}},
		{"If-Modified-Since", "GET", "/wp-json/kept/v1/thing", []string{"If-Modified-Since", "Wed, 21 Oct 2015 07:28:00 GMT"}},
		{"Range", "GET", "/wp-json/kept/v1/thing", []string{"Range", "bytes=0-1"}},
		{"If-None-Match without compression", "GET", "/wp-json/kept/v1/thing", []string{"If-None-Match", `"x"`, "Compression", "off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCompression()
			if slices.Contains(tc.hdr, "Compression") {
				c = nil
			}
			k := newKeptSite(t, c)
			first := k.ask(tc.method, tc.path, tc.hdr...)
			again := k.ask(tc.method, tc.path, tc.hdr...)
			if n := k.ns.builds.Load(); n != 2 || k.p.Stats() != (PreparedStats{}) {
				t.Errorf("built %d times, stats %+v", n, k.p.Stats())
			}
			if first.Code != again.Code || first.Body.Len() != again.Body.Len() {
				t.Errorf("%d %d bytes, then %d %d bytes", first.Code, first.Body.Len(), again.Code, again.Body.Len())
			}
		})
	}
}

// If-None-Match is evaluated against the kept answer as the compression
// writer does without prepared answers, the first request's included:
// a 304 of the same head either way, for a tag of any coding.
func TestPrepared_IfNoneMatch(t *testing.T) {
	plain := compressRoutesFor(t, &keptNS{})
	for _, inm := range []string{`"t1"`, `"t1-br"`, `W/"t1-gzip"`, `"x", "t1"`, `*`} {
		want := func() *httptest.ResponseRecorder {
			req := httptest.NewRequest("GET", "https://example.com/wp-json/kept/v1/thing", nil)
			req.Header.Set("Accept-Encoding", "br")
			req.Header.Set("If-None-Match", inm)
			rec := httptest.NewRecorder()
			rec.Header().Set("X-Request-Id", "outer")
			plain.Serve(rec, req, "")
			return rec
		}()
		if want.Code != http.StatusNotModified {
			t.Fatalf("%s: without prepared answers %d", inm, want.Code)
		}
		k := newKeptSite(t, NewCompression())
		building := k.ask("GET", "/wp-json/kept/v1/thing", "Accept-Encoding", "br", "If-None-Match", inm)
		kept := k.ask("GET", "/wp-json/kept/v1/thing", "Accept-Encoding", "br", "If-None-Match", inm)
		full := k.ask("GET", "/wp-json/kept/v1/thing", "Accept-Encoding", "br")
		same(t, inm+": while building", building, want)
		same(t, inm+": kept", kept, want)
		if full.Code != 200 || full.Header().Get("Content-Encoding") != "br" || k.ns.builds.Load() != 1 {
			t.Errorf("%s: then without If-None-Match: %d %q, built %d times", inm, full.Code, full.Header().Get("Content-Encoding"), k.ns.builds.Load())
		}
	}
	k := newKeptSite(t, NewCompression())
	k.ask("GET", "/wp-json/kept/v1/thing")
	if a := k.ask("GET", "/wp-json/kept/v1/thing", "If-None-Match", `"other"`); a.Code != 200 || k.ns.builds.Load() != 1 {
		t.Errorf("another tag: %d, built %d times", a.Code, k.ns.builds.Load())
	}
	big := k.ask("GET", "/wp-json/kept/v1/big", "If-None-Match", `"t1"`)
	if big.Code != http.StatusNotModified || big.Body.Len() != 0 || big.Header().Get("Content-Length") != "" {
		t.Errorf("a large answer held: %d, %d bytes, %v", big.Code, big.Body.Len(), big.Header())
	}
}

// What PHP answers is never kept and gets the request as sent, its
// If-None-Match included.
func TestPrepared_PassThrough(t *testing.T) {
	k := newKeptSite(t, NewCompression())
	for _, path := range []string{"/page?x=1", "/wp-json/other/v1/x", "/wp-json/kept/v1/nowhere"} {
		for range 2 {
			a := k.ask("GET", path, "If-None-Match", `"t1"`)
			if a.Code != 200 || a.Body.String() != "php" || a.Header().Get("X-Inm-Seen") != `"t1"` {
				t.Errorf("%s: %d %q, PHP saw If-None-Match %q", path, a.Code, a.Body, a.Header().Get("X-Inm-Seen"))
			}
		}
	}
	if n := k.php.calls.Load(); n != 6 || k.p.Stats() != (PreparedStats{}) {
		t.Errorf("PHP asked %d times, stats %+v", n, k.p.Stats())
	}
}

// The kept answers are bounded: beyond the bound, others go.
func TestPrepared_Bounded(t *testing.T) {
	k := newKeptSite(t, nil)
	k.p.maxAnswers = 3
	for i := range 10 {
		k.ask("GET", "/wp-json/kept/v1/thing?n="+strconv.Itoa(i))
	}
	if n := len(k.p.answers); n != 3 {
		t.Errorf("%d answers kept, want 3", n)
	}
	k.p.maxBytes = 100 // less than one answer: none is kept, none pushed out
	k.ask("GET", "/wp-json/kept/v1/thing?n=big")
	if n := len(k.p.answers); n != 3 {
		t.Errorf("%d answers kept, want 3", n)
	}
}

// TestPrepared_HeldWithinBound: what the kept answers hold stays within
// their bound, as counted and as the heap has it: bodies just over 32 KiB,
// which the allocator rounds up to 40, and bodies written in pieces, whose
// buffer grew by doubling.
func TestPrepared_HeldWithinBound(t *testing.T) {
	for _, tc := range []struct{ name, query string }{
		{"rounded up", "n=33000"},
		{"written in pieces", "n=20000&piece=100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKeptSite(t, nil)
			k.p.maxBytes = 1 << 20
			k.ask("GET", "/wp-json/kept/v1/fresh") // what a first request builds once
			before := liveHeap()
			for i := range 100 {
				if a := k.ask("GET", "/wp-json/kept/v1/sized?"+tc.query+"&i="+strconv.Itoa(i)); a.Code != 200 {
					t.Fatalf("%d %s", a.Code, a.Body)
				}
			}
			held := liveHeap() - before
			bodies := 0
			for _, a := range k.p.answers {
				bodies += cap(a.body)
			}
			counted := k.p.bytes
			if len(k.p.answers) < 20 || counted > k.p.maxBytes || bodies > counted || held > int64(k.p.maxBytes) {
				t.Errorf("%d answers kept, counted %d bytes, their bodies' capacity %d, %d bytes more in the heap; the bound is %d",
					len(k.p.answers), counted, bodies, held, k.p.maxBytes)
			}
		})
	}
}

// liveHeap is the bytes the heap holds, garbage collected (twice: what
// pools held goes at the second).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// An answer given again allocates nothing of its own: the key is hashed
// in a pooled buffer, the kept header's values are shared.
func TestPrepared_NoAllocations(t *testing.T) {
	k := newKeptSite(t, NewCompression())
	k.routes.o.Served = nil
	req := httptest.NewRequest("GET", "https://example.com/wp-json/kept/v1/thing", nil)
	req.Header.Set("Authorization", "Basic eDp5")
	req.Header.Set("Accept-Encoding", "br, gzip")
	w := &discardWriter{h: http.Header{}}
	k.routes.Serve(w, req, "")
	allocs := testing.AllocsPerRun(100, func() {
		clear(w.h)
		k.routes.Serve(w, req, "")
	})
	if allocs != 0 || k.ns.builds.Load() != 1 || w.status != 200 || !strings.Contains(w.h.Get("Vary"), "Accept-Encoding") {
		t.Errorf("%v allocations a request, built %d times, %d %v", allocs, k.ns.builds.Load(), w.status, w.h)
	}
}

type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(s int)           { d.status = s }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }

// compressRoutesFor serves ns with compression on and no prepared answers.
func compressRoutesFor(t *testing.T, ns Handlers) *Routes {
	t.Helper()
	s := &settings{}
	s.set(Routing{Home: "https://example.com"}, nil)
	routes, err := New(Options{PHP: &phpSeen{}, Compression: NewCompression()}, SiteOptions{Settings: s, Handlers: []Handlers{ns}})
	if err != nil {
		t.Fatal(err)
	}
	return routes
}

func BenchmarkPrepared(b *testing.B) {
	for _, prepared := range []bool{false, true} {
		b.Run("prepared="+strconv.FormatBool(prepared), func(b *testing.B) {
			ns := &keptNS{}
			s := &settings{}
			s.set(Routing{Home: "https://example.com"}, nil)
			o := Options{PHP: &phpSeen{}, Compression: NewCompression()}
			if prepared {
				o.Prepared = NewPrepared(func(context.Context) (uint64, bool) { return 1, true })
			}
			routes, err := New(o, SiteOptions{Settings: s, Handlers: []Handlers{ns}})
			if err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequest("GET", "https://example.com/wp-json/kept/v1/thing", nil)
			req.Header.Set("Authorization", "Basic eDp5")
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				routes.Serve(w, req, "")
			}
		})
	}
}

// An answer built before others were kept at a newer version is out of
// date already: it neither joins them nor pushes them out.
func TestPrepared_LateStore(t *testing.T) {
	p := NewPrepared(func(context.Context) (uint64, bool) { return 0, true })
	newer, older := [32]byte{1}, [32]byte{2}
	p.store(newer, preparedAt{version: 2}, &preparedAnswer{status: 200})
	p.store(older, preparedAt{version: 1}, &preparedAnswer{status: 200})
	p.store(older, preparedAt{version: 2, inputs: 0}, &preparedAnswer{status: 200})
	if len(p.answers) != 2 || p.answers[newer] == nil || p.at != (preparedAt{version: 2}) {
		t.Errorf("kept %d answers at %+v", len(p.answers), p.at)
	}
	p.store(older, preparedAt{version: 1, inputs: 5}, &preparedAnswer{status: 200})
	if len(p.answers) != 2 || p.at != (preparedAt{version: 2}) {
		t.Errorf("an older version with newer inputs: kept %d answers at %+v", len(p.answers), p.at)
	}
}

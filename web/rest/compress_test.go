package rest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"github.com/wpsidecar/wpsidecar/internal/harness/testcoding"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// sizedBody is n bytes of a JSON string, the same for the same n.
func sizedBody(n int) []byte {
	b := []byte(`"` + strings.Repeat("field group ", n/12+1))
	b = b[:n-1]
	return append(b, '"')
}

// sizedNS answers GET /body/{n} with a body of n bytes tagged "e<n>", and
// a 304 itself when it sees If-None-Match, which with compression on it
// must not; GET /stream with a body it flushes, of no declared length.
type sizedNS struct{}

func (sizedNS) Name() string { return "sized/v1" }
func (sizedNS) Register(r *mux.Router) {
	r.HandleFunc("/body/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(mux.Vars(r)["n"])
		w.Header().Set("Etag", `"e`+strconv.Itoa(n)+`"`)
		if r.Header.Get("If-None-Match") != "" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		wpjson.WriteRaw(w, http.StatusOK, sizedBody(n))
	}).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/body/{n}", func(w http.ResponseWriter, r *http.Request) {
		wpjson.WriteJSON(w, http.StatusOK, map[string]string{"if_match": r.Header.Get("If-Match")})
	}).Methods(http.MethodPost)
	r.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Etag", `"s"`)
		for range 3 {
			w.Write(sizedBody(1500))
			http.NewResponseController(w).Flush()
		}
	}).Methods(http.MethodGet)
}

// bigPHP is a pass-through answering a large, compressible body.
type bigPHP struct{}

func (bigPHP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Vary", "Cookie")
	w.Write(sizedBody(5000))
}

// compressRoutes serves sizedNS with compression on (c) or off (nil).
func compressRoutes(t *testing.T, c *Compression) *Routes {
	t.Helper()
	s := &settings{}
	s.set(Routing{Home: "https://example.com"}, nil)
	routes, err := New(Options{PHP: bigPHP{}, Compression: c}, SiteOptions{Settings: s, Handlers: []Handlers{sizedNS{}}})
	if err != nil {
		t.Fatal(err)
	}
	return routes
}

func serve(routes *Routes, method, path string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "https://example.com"+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	routes.Serve(rec, req, "")
	return rec
}

const restVary = "Origin, Authorization, Cookie, Accept-Encoding"

// TestCompress_Answers: GET and HEAD of bodies under and over 1 KiB, for
// each Accept-Encoding: the coding, the exact Content-Length, the tag of
// the coding, Vary, and a body that decodes to the identity one.
func TestCompress_Answers(t *testing.T) {
	routes := compressRoutes(t, NewCompression())
	for _, tc := range []struct {
		accept   []string
		n        int
		encoding string
	}{
		{nil, 2000, ""},
		{[]string{"br, gzip"}, 2000, "br"},
		{[]string{"gzip, deflate, br, zstd"}, 2000, "br"},
		{[]string{"gzip"}, 2000, "gzip"},
		{[]string{"zstd;q=1, br;q=0.9"}, 2000, "zstd"},
		{[]string{"br;q=0", "gzip;q=0.5"}, 2000, "gzip"},
		{[]string{"identity;q=0"}, 2000, ""},
		{[]string{"*;q=0"}, 2000, ""},
		{[]string{"*"}, 2000, "br"},
		{[]string{"deflate"}, 2000, ""},
		{[]string{"br"}, 1024, "br"},
		{[]string{"br"}, 1023, ""},
		{[]string{"br, gzip"}, 100, ""},
	} {
		var hdr []string
		for _, a := range tc.accept {
			hdr = append(hdr, "Accept-Encoding", a)
		}
		path := "/wp-json/sized/v1/body/" + strconv.Itoa(tc.n)
		get := serve(routes, http.MethodGet, path, hdr...)
		etag := `"e` + strconv.Itoa(tc.n) + `"`
		if tc.encoding != "" {
			etag = `"e` + strconv.Itoa(tc.n) + "-" + tc.encoding + `"`
		}
		h := get.Header()
		if get.Code != 200 || h.Get("Content-Encoding") != tc.encoding || h.Get("Etag") != etag || h.Get("Vary") != restVary ||
			h.Get("Content-Length") != strconv.Itoa(get.Body.Len()) || h.Get("Content-Type") != "application/json; charset=UTF-8" {
			t.Errorf("GET %d, %q: %d %v (%d bytes)", tc.n, tc.accept, get.Code, h, get.Body.Len())
			continue
		}
		if got := testcoding.Decode(t, tc.encoding, get.Body.Bytes()); !bytes.Equal(got, sizedBody(tc.n)) {
			t.Errorf("GET %d, %q: decodes to %d bytes, not the body", tc.n, tc.accept, len(got))
		}
		head := serve(routes, http.MethodHead, path, hdr...)
		if head.Code != 200 || head.Body.Len() != 0 {
			t.Errorf("HEAD %d, %q: %d, %d bytes of body", tc.n, tc.accept, head.Code, head.Body.Len())
		}
		for _, k := range []string{"Content-Encoding", "Content-Length", "Etag", "Vary", "Content-Type", "Cache-Control"} {
			if head.Header().Get(k) != h.Get(k) {
				t.Errorf("HEAD %d, %q: %s %q, GET's %q", tc.n, tc.accept, k, head.Header().Get(k), h.Get(k))
			}
		}
	}
}

// TestCompress_IfNoneMatch: a client holding the body in any coding gets
// a 304 with the tag of the coding it would get now; the handler never
// sees If-None-Match (its 418).
func TestCompress_IfNoneMatch(t *testing.T) {
	routes := compressRoutes(t, NewCompression())
	for _, tc := range []struct {
		method, accept, inm string
		n                   int
		status              int
		etag                string
	}{
		{"GET", "br", `"e2000-gzip"`, 2000, 304, `"e2000-br"`},
		{"GET", "br", `"e2000"`, 2000, 304, `"e2000-br"`},
		{"GET", "", `"e2000-br"`, 2000, 304, `"e2000"`},
		{"GET", "gzip", `W/"e2000-zstd"`, 2000, 304, `"e2000-gzip"`},
		{"GET", "br", `"x", "e2000-zstd"`, 2000, 304, `"e2000-br"`},
		{"GET", "br", `*`, 2000, 304, `"e2000-br"`},
		{"HEAD", "zstd", `"e2000-br"`, 2000, 304, `"e2000-zstd"`},
		{"GET", "br", `"e100"`, 100, 304, `"e100"`},
		{"GET", "br", `"e100-br"`, 100, 304, `"e100"`},
		{"GET", "identity;q=0", `"e2000-br"`, 2000, 304, `"e2000"`},
		{"GET", "br", `"e1999-br"`, 2000, 200, `"e2000-br"`},
		{"GET", "br", `"e2000-deflate"`, 2000, 200, `"e2000-br"`},
		{"GET", "", `"other"`, 2000, 200, `"e2000"`},
	} {
		rec := serve(routes, tc.method, "/wp-json/sized/v1/body/"+strconv.Itoa(tc.n), "Accept-Encoding", tc.accept, "If-None-Match", tc.inm)
		h := rec.Header()
		if rec.Code != tc.status || h.Get("Etag") != tc.etag || h.Get("Vary") != restVary {
			t.Errorf("%s %q holding %s: %d %v, want %d with %s", tc.method, tc.accept, tc.inm, rec.Code, h, tc.status, tc.etag)
			continue
		}
		if tc.status == 304 {
			if rec.Body.Len() != 0 || h.Get("Content-Length") != "" || h.Get("Content-Encoding") != "" || h.Get("Content-Type") != "" {
				t.Errorf("%s %q holding %s: the 304 has a body or representation headers: %v %q", tc.method, tc.accept, tc.inm, h, rec.Body)
			}
		} else if got := testcoding.Decode(t, h.Get("Content-Encoding"), rec.Body.Bytes()); !bytes.Equal(got, sizedBody(tc.n)) {
			t.Errorf("%s %q holding %s: not the body", tc.method, tc.accept, tc.inm)
		}
	}
}

// TestCompress_IfMatch: a write with a coded tag is conditional on the
// data: the handler sees the identity tag.
func TestCompress_IfMatch(t *testing.T) {
	rec := serve(compressRoutes(t, NewCompression()), http.MethodPost, "/wp-json/sized/v1/body/2000", "If-Match", `"e2000-br", W/"x-gzip"`, "If-Match", `"y"`)
	if want := `{"if_match":"\"e2000\", W/\"x\", \"y\""}`; rec.Code != 200 || rec.Body.String() != want {
		t.Errorf("%d %s, want %s", rec.Code, rec.Body, want)
	}
}

// TestCompress_Shaped: with a global parameter the tag names the shape
// and then the coding; either tag of the shape revalidates.
func TestCompress_Shaped(t *testing.T) {
	routes := compressRoutes(t, NewCompression())
	rec := serve(routes, http.MethodGet, "/wp-json/sized/v1/body/2000?_jsonp=cb", "Accept-Encoding", "gzip")
	etag := rec.Header().Get("Etag")
	want := append(append([]byte("/**/cb("), sizedBody(2000)...), ')')
	if rec.Code != 200 || !strings.HasPrefix(etag, `"e2000-v`) || !strings.HasSuffix(etag, `-gzip"`) ||
		!bytes.Equal(testcoding.Decode(t, rec.Header().Get("Content-Encoding"), rec.Body.Bytes()), want) {
		t.Fatalf("_jsonp, gzip: %d %v", rec.Code, rec.Header())
	}
	identityTag := strings.TrimSuffix(etag, `-gzip"`) + `"`
	for _, held := range []string{etag, identityTag} {
		rec = serve(routes, http.MethodGet, "/wp-json/sized/v1/body/2000?_jsonp=cb", "Accept-Encoding", "br", "If-None-Match", held)
		if rec.Code != 304 || rec.Header().Get("Etag") != strings.TrimSuffix(identityTag, `"`)+`-br"` {
			t.Errorf("holding %s: %d %v", held, rec.Code, rec.Header())
		}
	}
	// The tag of the unshaped body is another answer's.
	if rec = serve(routes, http.MethodGet, "/wp-json/sized/v1/body/2000?_jsonp=cb", "Accept-Encoding", "br", "If-None-Match", `"e2000-br"`); rec.Code != 200 {
		t.Errorf("holding the unshaped tag: %d", rec.Code)
	}
}

// TestCompress_Stream: a flushed answer goes identity, as it comes.
func TestCompress_Stream(t *testing.T) {
	rec := serve(compressRoutes(t, NewCompression()), http.MethodGet, "/wp-json/sized/v1/stream", "Accept-Encoding", "br")
	want := bytes.Repeat(sizedBody(1500), 3)
	if rec.Code != 200 || rec.Header().Get("Content-Encoding") != "" || rec.Header().Get("Etag") != `"s"` || rec.Header().Get("Vary") != restVary || !bytes.Equal(rec.Body.Bytes(), want) {
		t.Errorf("stream: %d %v, %d bytes", rec.Code, rec.Header(), rec.Body.Len())
	}
}

// TestCompress_Off: without Compression, answers are as WordPress's:
// identity, no Vary on Accept-Encoding, If-None-Match the handler's.
func TestCompress_Off(t *testing.T) {
	routes := compressRoutes(t, nil)
	rec := serve(routes, http.MethodGet, "/wp-json/sized/v1/body/2000", "Accept-Encoding", "br, gzip")
	if rec.Code != 200 || rec.Header().Get("Content-Encoding") != "" || rec.Header().Get("Vary") != "Origin, Authorization, Cookie" ||
		rec.Header().Get("Etag") != `"e2000"` || !bytes.Equal(rec.Body.Bytes(), sizedBody(2000)) {
		t.Errorf("off: %d %v", rec.Code, rec.Header())
	}
	if rec = serve(routes, http.MethodGet, "/wp-json/sized/v1/body/2000", "If-None-Match", `"e2000"`); rec.Code != http.StatusTeapot {
		t.Errorf("off: If-None-Match did not reach the handler: %d", rec.Code)
	}
}

// TestCompress_PassThrough: what PHP answers is untouched, whatever the
// client accepts.
func TestCompress_PassThrough(t *testing.T) {
	routes := compressRoutes(t, NewCompression())
	for _, path := range []string{"/wp-json/wp/v2/posts", "/wp-json/sized/v1/nothing", "/"} {
		rec := serve(routes, http.MethodGet, path, "Accept-Encoding", "br, gzip", "If-None-Match", `"x"`)
		want := http.Header{"Content-Type": {"application/json; charset=UTF-8"}, "Vary": {"Cookie"}}
		if rec.Code != 200 || !equalHeaders(rec.Header(), want) || !bytes.Equal(rec.Body.Bytes(), sizedBody(5000)) {
			t.Errorf("%s: %d %v", path, rec.Code, rec.Header())
		}
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\n") != strings.Join(b[k], "\n") {
			return false
		}
	}
	return true
}

// TestCompress_CodedOnce: the same body asked again is taken from the
// cache, one entry per body and coding.
func TestCompress_CodedOnce(t *testing.T) {
	c := NewCompression()
	routes := compressRoutes(t, c)
	for range 3 {
		serve(routes, http.MethodGet, "/wp-json/sized/v1/body/3000", "Accept-Encoding", "br")
		serve(routes, http.MethodGet, "/wp-json/sized/v1/body/3000", "Accept-Encoding", "gzip")
	}
	if n, _ := c.enc.Len(); n != 2 {
		t.Errorf("%d coded bodies kept, want 2", n)
	}
}

func TestAddVary(t *testing.T) {
	for _, tc := range []struct {
		vary []string
		want string
	}{
		{nil, "Accept-Encoding"},
		{[]string{"Origin"}, "Origin, Accept-Encoding"},
		{[]string{"Origin", "Cookie"}, "Origin, Cookie, Accept-Encoding"},
		{[]string{"Origin, accept-encoding"}, "Origin, accept-encoding"},
		{[]string{"*"}, "*"},
	} {
		h := http.Header{}
		for _, v := range tc.vary {
			h.Add("Vary", v)
		}
		addVary(h, "Accept-Encoding")
		if got := strings.Join(h.Values("Vary"), ", "); got != tc.want {
			t.Errorf("Vary %q: %q, want %q", tc.vary, got, tc.want)
		}
	}
}

// groupList is the shape of GET /field-groups with the 20 groups of 10
// fields scripts/bench-groups.sh makes.
func groupList() []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for g := 1; g <= 20; g++ {
		if g > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"bench_` + strconv.Itoa(g) + `","title":"Bench group ` + strconv.Itoa(g) + `","config":{"type":"post","post_type":"post","fields":{`)
		for i := 1; i <= 10; i++ {
			if i > 1 {
				b.WriteByte(',')
			}
			b.WriteString(`"field_` + strconv.Itoa(i) + `":{"type":"text","label":"Field ` + strconv.Itoa(i) + ` of group ` + strconv.Itoa(g) + `","placeholder":"…","maxlength":80}`)
		}
		b.WriteString(`}},"status":"active","created_at":"2026-11-25 10:00:00","updated_at":"2026-11-25 10:00:0` + strconv.Itoa(g%10) + `"}`)
	}
	b.WriteByte(']')
	return b.Bytes()
}

type listNS struct{ body []byte }

func (listNS) Name() string { return "fieldmgr/v1" }
func (l listNS) Register(r *mux.Router) {
	r.HandleFunc("/field-groups", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Etag", `"list"`)
		wpjson.WriteRaw(w, http.StatusOK, l.body)
	}).Methods(http.MethodGet)
}

// BenchmarkCompress_GroupList: the 20-group list through the writer chain,
// identity and with "br, gzip" (the coded body from the cache); reports
// the bytes of an answer.
func BenchmarkCompress_GroupList(b *testing.B) {
	s := &settings{}
	s.set(Routing{Home: "https://example.com"}, nil)
	routes, err := New(Options{PHP: bigPHP{}, Compression: NewCompression()}, SiteOptions{Settings: s, Handlers: []Handlers{listNS{groupList()}}})
	if err != nil {
		b.Fatal(err)
	}
	for _, accept := range []string{"", "br, gzip", "gzip"} {
		b.Run("accept="+accept, func(b *testing.B) {
			var size int
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodGet, "https://example.com/wp-json/fieldmgr/v1/field-groups", nil)
					if accept != "" {
						req.Header.Set("Accept-Encoding", accept)
					}
					rec := httptest.NewRecorder()
					routes.Serve(rec, req, "")
					size = rec.Body.Len()
				}
			})
			b.ReportMetric(float64(size), "bytes/answer")
		})
	}
}

// TestCompress_Panic: a handler's panic leaves a kept answer unwritten,
// for the recovery to answer 500.
func TestCompress_Panic(t *testing.T) {
	s := &settings{}
	s.set(Routing{Home: "https://example.com"}, nil)
	routes, err := New(Options{PHP: bigPHP{}, Compression: NewCompression()}, SiteOptions{Settings: s, Handlers: []Handlers{panicNS{}}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	func() {
		defer func() { recover() }()
		req := httptest.NewRequest(http.MethodGet, "https://example.com/wp-json/panic/v1/now", nil)
		req.Header.Set("Accept-Encoding", "br")
		routes.Serve(rec, req, "")
	}()
	if rec.Code != 200 || rec.Flushed || rec.Body.Len() != 0 || rec.Result().Header.Get("Vary") != "Origin, Authorization, Cookie" {
		// The recorder's default Code is 200: nothing was written.
		t.Errorf("after the panic: %d, %q, %v", rec.Code, rec.Body, rec.Result().Header)
	}
}

type panicNS struct{}

func (panicNS) Name() string { return "panic/v1" }
func (panicNS) Register(r *mux.Router) {
	r.HandleFunc("/now", func(w http.ResponseWriter, r *http.Request) {
		w.Write(sizedBody(2000))
		panic("boom")
	})
}

// publicStub is a public route at /wp-json/pub/v1/list whose answer
// carries Vary: Origin when origin is set.
type publicStub struct{ origin bool }

func (publicStub) Matches(path, method string) bool {
	return path == "/wp-json/pub/v1/list" && (method == http.MethodGet || method == http.MethodHead)
}

func (p publicStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.origin {
		w.Header().Set("Vary", "Origin")
	}
	w.Header().Set("Cache-Control", "public, max-age=60")
	w.Header().Set("Etag", `"pub"`)
	wpjson.WriteRaw(w, http.StatusOK, sizedBody(4000))
}

// TestCompress_Public: a public route is coded as the namespaces are, its
// Vary extended.
func TestCompress_Public(t *testing.T) {
	for _, tc := range []struct {
		origin bool
		vary   string
	}{{false, "Accept-Encoding"}, {true, "Origin, Accept-Encoding"}} {
		s := &settings{}
		s.set(Routing{Home: "https://example.com"}, nil)
		routes, err := New(Options{PHP: bigPHP{}, Compression: NewCompression()}, SiteOptions{Settings: s, Public: publicStub{tc.origin}})
		if err != nil {
			t.Fatal(err)
		}
		rec := serve(routes, http.MethodGet, "/wp-json/pub/v1/list", "Accept-Encoding", "zstd, gzip")
		h := rec.Header()
		if rec.Code != 200 || h.Get("Content-Encoding") != "zstd" || h.Get("Etag") != `"pub-zstd"` || h.Get("Vary") != tc.vary ||
			h.Get("Cache-Control") != "public, max-age=60" || h.Get("Content-Length") != strconv.Itoa(rec.Body.Len()) ||
			!bytes.Equal(testcoding.Decode(t, "zstd", rec.Body.Bytes()), sizedBody(4000)) {
			t.Errorf("origin %v: %d %v", tc.origin, rec.Code, h)
		}
		rec = serve(routes, http.MethodGet, "/wp-json/pub/v1/list", "Accept-Encoding", "gzip", "If-None-Match", `"pub-zstd"`)
		if rec.Code != 304 || rec.Header().Get("Etag") != `"pub-gzip"` || rec.Header().Get("Vary") != tc.vary || rec.Header().Get("Cache-Control") != "public, max-age=60" {
			t.Errorf("origin %v, revalidation: %d %v", tc.origin, rec.Code, rec.Header())
		}
	}
}

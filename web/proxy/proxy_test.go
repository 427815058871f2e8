package proxy

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/internal/harness/testlog"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/web/rest"
	"github.com/wpsidecar/wpsidecar/web/restcache"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// recorded is what the upstream received.
type recorded struct {
	Method     string
	Host       string
	RequestURI string
	Header     http.Header
	BodyLen    int64
	BodySHA    string
}

// recorder is a PHP stand-in that records every request and answers by
// path.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
	srv  *httptest.Server
}

func newRecorder(t *testing.T, extra http.HandlerFunc) *recorder {
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{r.Method, r.Host, r.RequestURI, r.Header.Clone(), n, hex.EncodeToString(h.Sum(nil))})
		rec.mu.Unlock()
		if extra != nil {
			extra(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "php saw %s %s", r.Method, r.RequestURI)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) last(t *testing.T) recorded {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) == 0 {
		t.Fatal("upstream received nothing")
	}
	return rec.reqs[len(rec.reqs)-1]
}

// site is a Site whose database answers, with pretty permalinks.
var site = rest.SettingsFunc(func() (rest.Routing, error) { return rest.Routing{}, nil })

// testNS is a namespace with one route, GET /things/{id}, one that panics,
// and one that answers nothing to a client gone, as a check does.
type testNS struct{}

func (testNS) Name() string { return "test/v1" }
func (testNS) Register(r *mux.Router) {
	r.HandleFunc("/things/{id}", func(w http.ResponseWriter, r *http.Request) {
		wpjson.WriteJSON(w, http.StatusOK, map[string]string{"id": mux.Vars(r)["id"]})
	}).Methods(http.MethodGet)
	r.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) {
		// Headers of an answer that will never be sent.
		w.Header().Set("ETag", `"x"`)
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Header().Set("Cache-Tag", "fieldmgr")
		panic("boom")
	})
	r.HandleFunc("/until-gone", func(w http.ResponseWriter, r *http.Request) {
		zerolog.Ctx(r.Context()).Info().Msg("until-gone: waiting for the client to go")
		<-r.Context().Done()
		wpjson.Render(w, r, r.Context().Err())
	})
}

type syncBuffer = testlog.Buffer

// logLines decodes the JSON log.
func logLines(t *testing.T, s *syncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if l == "" {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

type fixture struct {
	rec     *recorder
	front   *httptest.Server
	log     *syncBuffer
	metrics *Metrics
}

type fixtureOpts struct {
	upstream        http.HandlerFunc
	upstreamURL     string
	trusted         []netip.Prefix
	upstreamTimeout time.Duration
	accessLog       func(status int) bool
	restCache       *restcache.Cache
}

func newFixture(t *testing.T, o fixtureOpts) *fixture {
	t.Helper()
	f := &fixture{log: &syncBuffer{}}
	f.rec = newRecorder(t, o.upstream)
	up := f.rec.srv.URL
	if o.upstreamURL != "" {
		up = o.upstreamURL
	}
	u, _ := url.Parse(up)
	if o.upstreamTimeout == 0 {
		o.upstreamTimeout = 5 * time.Second
	}
	f.metrics = NewMetrics()
	h, err := New(Options{
		Upstream: u, TrustedProxies: o.trusted, UpstreamTimeout: o.upstreamTimeout, UpstreamDial: time.Second,
		BodyTimeout: time.Minute, Main: rest.SiteOptions{Settings: site, Handlers: []rest.Handlers{testNS{}}},
		Log: zerolog.New(f.log), Metrics: f.metrics, AccessLog: o.accessLog, RESTCache: o.restCache,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.front = httptest.NewServer(h)
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

func TestPassthrough_KeepsHostRawPathAndRawQuery(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprint("cache-rest=", cached), func(t *testing.T) { passthroughKeeps(t, cached) })
	}
}

// passthroughKeeps: what PHP sees is what the client sent, and what the
// client gets is PHP's answer, with --cache-rest too (each URI asked
// twice: the second from memory where it may be kept).
func passthroughKeeps(t *testing.T, cached bool) {
	var o fixtureOpts
	if cached {
		c, err := restcache.New(restcache.Options{Namespaces: []string{"wp/v2"}})
		if err != nil {
			t.Fatal(err)
		}
		o.restCache = c
	}
	f := newFixture(t, o)
	addr := strings.TrimPrefix(f.front.URL, "http://")
	tests := []string{
		"/wp-json/wp/v2/posts/a%2Fb?x=1;y=2&z=%3B",
		"/a//b/../c/./d?q=%zz;;&&",
		"/?rest_route=/wp/v2/posts&_fields=id,title",
		"/wp-json/fieldmgr/v1/field-groups", // a namespace no route of which is registered here
		"/%E2%9C%93/caf%C3%A9",
	}
	for _, uri := range tests {
		for range 2 {
			resp, body, _ := rawRequest(t, addr, "GET "+uri+" HTTP/1.1\r\nHost: blog.example.com:8443\r\nConnection: close\r\n\r\n")
			out := resp.Status + "\n" + body
			if want := "200 OK\nphp saw GET " + uri; out != want {
				t.Errorf("%s: got %q, want %q", uri, out, want)
			}
			if got := f.rec.last(t); got.Host != "blog.example.com:8443" || got.RequestURI != uri {
				t.Errorf("%s: upstream got host %q uri %q", uri, got.Host, got.RequestURI)
			}
		}
	}
}

// TestPassREST_AccessLog: with --cache-rest, a REST request no route of
// the sidecar takes is logged as it was answered: a miss by PHP, then a
// hit from memory; the metrics count them.
func TestPassREST_AccessLog(t *testing.T) {
	c, err := restcache.New(restcache.Options{Namespaces: []string{"wp/v2"}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOpts{restCache: c})
	for range 2 {
		if resp, body := f.get(t, "/wp-json/wp/v2/posts?per_page=1"); resp.StatusCode != 200 || body != "php saw GET /wp-json/wp/v2/posts?per_page=1" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	f.get(t, "/wp-json/other/v1/nope") // not a namespace kept
	var got []string
	testwait.For(t, "three access lines", func() bool {
		got = got[:0]
		for _, l := range logLines(t, f.log) {
			if l["message"] == "request" {
				got = append(got, fmt.Sprint(l["rest_cache"], " ", l["served_by"], " ", l["route"]))
			}
		}
		return len(got) == 3
	})
	if want := []string{"miss php php", "hit sidecar rest-cache", "bypass php php"}; !slices.Equal(got, want) {
		t.Errorf("access lines %q, want %q", got, want)
	}
	f.rec.mu.Lock()
	n := len(f.rec.reqs)
	f.rec.mu.Unlock()
	if n != 2 {
		t.Errorf("PHP saw %d requests, want 2", n)
	}
	m := metricsText(t, f.metrics)
	for _, line := range []string{`wpsidecar_rest_cache_requests_total{result="hit"} 1`, `wpsidecar_rest_cache_requests_total{result="miss"} 1`,
		`wpsidecar_rest_cache_bypasses_total{reason="route"} 1`, `wpsidecar_rest_cache_kept_total 1`} {
		if !strings.Contains(m, "\n"+line+"\n") {
			t.Errorf("metrics lack %s:\n%s", line, m)
		}
	}
}

func TestPassthrough_HeadersCookiesRedirects(t *testing.T) {
	f := newFixture(t, fixtureOpts{upstream: func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Set-Cookie", "wordpress_test_cookie=WP%20Cookie%20check; path=/")
		h.Add("Set-Cookie", "wordpress_logged_in_abc=admin%7C123; path=/; HttpOnly")
		h.Add("X-Multi", "one")
		h.Add("X-Multi", "two")
		h.Set("Location", "http://blog.example.com/wp-admin/")
		// An id of the upstream's own (another sidecar's, a web server's).
		h.Set("X-Request-Id", "made-upstream")
		w.WriteHeader(http.StatusFound)
	}})
	req, _ := http.NewRequest(http.MethodPost, f.front.URL+"/wp-login.php", strings.NewReader("log=admin&pwd=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Add("Cookie", "a=1")
	req.Header.Add("Cookie", "b=2")
	req.Header.Add("X-Custom", "first")
	req.Header.Add("X-Custom", "second")
	req.Header.Set("Accept-Encoding", "identity")
	resp, _ := f.do(t, req)
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "http://blog.example.com/wp-admin/" {
		t.Errorf("redirect changed: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := resp.Header.Values("Set-Cookie"); len(got) != 2 || got[1] != "wordpress_logged_in_abc=admin%7C123; path=/; HttpOnly" {
		t.Errorf("Set-Cookie = %q", got)
	}
	if got := resp.Header.Values("X-Multi"); strings.Join(got, ",") != "one,two" {
		t.Errorf("X-Multi = %q", got)
	}
	got := f.rec.last(t)
	if strings.Join(got.Header.Values("X-Custom"), ",") != "first,second" || strings.Join(got.Header.Values("Cookie"), "; ") != "a=1; b=2" {
		t.Errorf("upstream headers: %v", got.Header)
	}
	if got.Header.Get("Accept-Encoding") != "identity" || got.Method != http.MethodPost || got.BodyLen != 15 {
		t.Errorf("upstream got %s with %d bytes, Accept-Encoding %q", got.Method, got.BodyLen, got.Header.Get("Accept-Encoding"))
	}
	// One id: the one the sidecar gave PHP and its log names.
	if ids := resp.Header.Values("X-Request-Id"); got.Header.Get("X-Request-Id") == "" || len(ids) != 1 || ids[0] != got.Header.Get("X-Request-Id") {
		t.Errorf("request id: client %q, php %q", ids, got.Header.Get("X-Request-Id"))
	}
}

func TestPassthrough_HEAD(t *testing.T) {
	f := newFixture(t, fixtureOpts{upstream: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1234")
		w.Header().Set("X-Pingback", "http://blog/xmlrpc.php")
	}})
	req, _ := http.NewRequest(http.MethodHead, f.front.URL+"/hello-world/", nil)
	resp, body := f.do(t, req)
	if resp.StatusCode != 200 || resp.ContentLength != 1234 || body != "" || resp.Header.Get("X-Pingback") == "" {
		t.Errorf("HEAD: %d len %d body %q", resp.StatusCode, resp.ContentLength, body)
	}
	if f.rec.last(t).Method != http.MethodHead {
		t.Error("upstream did not get HEAD")
	}
}

func TestPassthrough_ForwardedHeaders(t *testing.T) {
	tests := []struct {
		name                string
		trusted             []netip.Prefix
		wantXFF, wantProto  string
		wantHost, forwarded string
	}{
		{"untrusted peer: inbound values replaced", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
			"127.0.0.1", "http", "front.example", ""},
		{"no trusted proxies configured", nil, "127.0.0.1", "http", "front.example", ""},
		{"trusted peer: chain extended, proto and host kept", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			"203.0.113.7, 198.51.100.1, 127.0.0.1", "https", "cdn.example", "for=203.0.113.7;proto=https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{trusted: tt.trusted})
			req, _ := http.NewRequest(http.MethodGet, f.front.URL+"/", nil)
			req.Host = "front.example"
			req.Header.Add("X-Forwarded-For", "203.0.113.7")
			req.Header.Add("X-Forwarded-For", "198.51.100.1")
			req.Header.Set("X-Forwarded-Proto", "https")
			req.Header.Set("X-Forwarded-Host", "cdn.example")
			req.Header.Set("Forwarded", "for=203.0.113.7;proto=https")
			req.Header.Set("X-Request-Id", "from-client")
			req.Header.Set(HeaderPassed, "from-client")
			claims := []string{"X-Forwarded-Ssl", "X-Forwarded-Port", "X-Forwarded-Scheme", "X-Forwarded-Server", "Front-End-Https",
				"X-Real-Ip", "Client-Ip", "True-Client-Ip", "X-Cluster-Client-Ip", "Cf-Connecting-Ip", "X_forwarded_proto", "X-Https",
				"Cloudfront-Forwarded-Proto", "X-Arr-Ssl", "Fastly-Ssl", "X-Scheme", "X-Original-Host", "X-Original-Url"}
			for _, h := range claims {
				req.Header[h] = []string{"on"}
			}
			f.do(t, req)
			got := f.rec.last(t).Header
			trusted := tt.trusted != nil && tt.trusted[0].Contains(netip.MustParseAddr("127.0.0.1"))
			// What PHP reads as "the proxy said so" comes only from a
			// trusted proxy; X-Real-IP is the client the sidecar believes.
			for _, h := range claims {
				want := ""
				if trusted || h == "X-Real-Ip" {
					want = "on"
				}
				if !trusted && h == "X-Real-Ip" {
					want = "127.0.0.1"
				}
				if v := strings.Join(got[h], ","); v != want {
					t.Errorf("%s reached PHP as %q, want %q", h, v, want)
				}
			}
			if got.Get("X-Forwarded-For") != tt.wantXFF || got.Get("X-Forwarded-Proto") != tt.wantProto ||
				got.Get("X-Forwarded-Host") != tt.wantHost || got.Get("Forwarded") != tt.forwarded {
				t.Errorf("XFF %q proto %q host %q fwd %q", got.Get("X-Forwarded-For"), got.Get("X-Forwarded-Proto"), got.Get("X-Forwarded-Host"), got.Get("Forwarded"))
			}
			// The marker keeps the value the request came with (a web
			// server's secret; here whatever the client sent, which gains it
			// nothing: the server honours only its own).
			if v := got.Values(HeaderPassed); len(v) != 1 || v[0] != "from-client" {
				t.Errorf("%s reached PHP as %q", HeaderPassed, v)
			}
			if wantID := tt.trusted != nil && tt.trusted[0].Contains(netip.MustParseAddr("127.0.0.1")); (got.Get("X-Request-Id") == "from-client") != wantID {
				t.Errorf("X-Request-Id %q (trusted=%v)", got.Get("X-Request-Id"), wantID)
			}
		})
	}
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

func TestPassthrough_StreamsLargeUpload(t *testing.T) {
	const size = 50 << 20
	firstMB := make(chan struct{})
	f := newFixture(t, fixtureOpts{upstream: func(w http.ResponseWriter, r *http.Request) {}})
	// PHP stand-in that signals as soon as the first MiB arrived; the client
	// sends the rest only then, so a proxy that buffered the body would
	// deadlock here.
	f.rec.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 1<<20)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			t.Errorf("first MiB: %v", err)
			return
		}
		close(firstMB)
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d", n+int64(len(buf)))
	})
	pr, pw := io.Pipe()
	go func() {
		io.CopyN(pw, &chunkReader{left: size}, 1<<20)
		select {
		case <-firstMB:
		case <-time.After(10 * time.Second):
			pw.CloseWithError(errors.New("upstream never saw the first MiB: the proxy buffers uploads"))
			return
		}
		io.Copy(pw, &chunkReader{left: size - 1<<20})
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, f.front.URL+"/wp-json/wp/v2/media", pr)
	req.ContentLength = size
	resp, body := f.do(t, req)
	if resp.StatusCode != 200 || body != fmt.Sprint(size) {
		t.Errorf("upload: %d %q", resp.StatusCode, body)
	}
}

func TestPassthrough_StreamsLargeDownloadAndSSE(t *testing.T) {
	clientGotFirst, clientGotFirstMiB := make(chan struct{}), make(chan struct{})
	f := newFixture(t, fixtureOpts{upstream: func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/events":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: first\n\n")
			w.(http.Flusher).Flush()
			select { // the rest only once the client has the first event
			case <-clientGotFirst:
			case <-time.After(10 * time.Second):
				return
			}
			io.WriteString(w, "data: second\n\n")
		case "/big.zip":
			w.Header().Set("Content-Length", fmt.Sprint(50<<20))
			io.CopyN(w, &chunkReader{left: 50 << 20}, 1<<20)
			w.(http.Flusher).Flush()
			select {
			case <-clientGotFirstMiB:
			case <-time.After(10 * time.Second):
				return
			}
			io.Copy(w, &chunkReader{left: 49 << 20})
		}
	}})

	resp, err := http.Get(f.front.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "data: first\n" {
		t.Fatalf("first event: %q %v (not flushed?)", line, err)
	}
	close(clientGotFirst)
	rest, _ := io.ReadAll(br)
	resp.Body.Close()
	if string(rest) != "\ndata: second\n\n" {
		t.Errorf("rest of stream %q", rest)
	}

	resp, err = http.Get(f.front.URL + "/big.zip")
	if err != nil {
		t.Fatal(err)
	}
	// Half of the first MiB: up to a buffer's worth may wait in the
	// server's write buffer until more comes, which is fine for a body of
	// known length.
	if _, err := io.ReadFull(resp.Body, make([]byte, 512<<10)); err != nil {
		t.Fatalf("first half MiB of download: %v", err)
	}
	close(clientGotFirstMiB)
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n != 50<<20-512<<10 {
		t.Errorf("download rest = %d bytes", n)
	}
}

func TestPassthrough_WebSocketUpgrade(t *testing.T) {
	f := newFixture(t, fixtureOpts{upstream: func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "no upgrade", 400)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		line, _ := brw.ReadString('\n')
		io.WriteString(brw, "echo: "+line)
		brw.Flush()
	}})
	c, err := net.Dial("tcp", strings.TrimPrefix(f.front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	io.WriteString(c, "hello\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "echo: hello\n" {
		t.Errorf("tunnel: %q %v", line, err)
	}
}

func TestPassthrough_UpstreamDownIs502(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + l.Addr().String()
	l.Close()
	f := newFixture(t, fixtureOpts{upstreamURL: dead})
	resp, body := f.get(t, "/")
	if resp.StatusCode != http.StatusBadGateway || body != "502 Bad Gateway: the WordPress upstream could not be reached.\n" {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
	// The sidecar's own routes keep working.
	resp, body = f.get(t, "/wp-json/test/v1/things/7")
	if resp.StatusCode != 200 || body != `{"id":"7"}` {
		t.Errorf("own route with PHP down: %d %q", resp.StatusCode, body)
	}
	if !strings.Contains(metricsText(t, f.metrics), `wpsidecar_upstream_errors_total{kind="unreachable"} 1`) {
		t.Error("upstream error not counted")
	}
}

func TestPassthrough_SlowUpstreamIs504(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFixture(t, fixtureOpts{upstreamTimeout: 200 * time.Millisecond, upstream: func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}})
	resp, body := f.get(t, "/slow")
	if resp.StatusCode != http.StatusGatewayTimeout || body != "504 Gateway Timeout: the WordPress upstream did not answer in time.\n" {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
}

func TestPassthrough_ClientGoneIsLoggedNotAnError(t *testing.T) {
	started := make(chan struct{})
	f := newFixture(t, fixtureOpts{upstream: func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.front.URL+"/slow", nil)
	go func() { <-started; cancel() }()
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("request was not cancelled")
	}
	testwait.For(t, "the 499 logged", func() bool { return strings.Contains(f.log.String(), `"status":499`) })
	logs := f.log.String()
	if !strings.Contains(logs, "client went away before PHP answered") || !strings.Contains(logs, `"client_gone":true`) || strings.Contains(logs, `"level":"error"`) {
		t.Errorf("log:\n%s", logs)
	}
	if !strings.Contains(metricsText(t, f.metrics), `wpsidecar_upstream_errors_total{kind="client_gone"} 1`) {
		t.Error("client_gone not counted")
	}
}

// TestNamespace_ClientGoneIsLogged499: a route that answers nothing
// because its client went away is logged 499, as a pass-through is, not
// the 200 with no bytes an unwritten answer otherwise reads as (a flood
// of abandoned password checks looked like successes in the log).
func TestNamespace_ClientGoneIsLogged499(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.front.URL+"/wp-json/test/v1/until-gone", nil)
	go func() { // the client goes once the route has its request
		testwait.For(t, "the route waiting", func() bool { return strings.Contains(f.log.String(), "until-gone: waiting") })
		cancel()
	}()
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("request was not cancelled")
	}
	testwait.For(t, "the request's access line", func() bool { return strings.Contains(f.log.String(), `"path":"/wp-json/test/v1/until-gone"`) })
	logs := f.log.String()
	if !strings.Contains(logs, `"status":499`) || !strings.Contains(logs, `"client_gone":true`) || strings.Contains(logs, `"status":200`) {
		t.Errorf("log:\n%s", logs)
	}
}

func TestNamespace_PanicIsLogged500(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	resp, body := f.get(t, "/wp-json/test/v1/panic")
	if resp.StatusCode != 500 || body != `{"code":"wpsidecar_internal_error","message":"The sidecar failed to answer this request.","data":{"status":500}}` {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
	for _, k := range []string{"ETag", "Cache-Control", "Cache-Tag"} {
		if v := resp.Header.Get(k); v != "" {
			t.Errorf("the 500 carries the handler's %s: %q", k, v)
		}
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Error("the 500 has no X-Request-Id")
	}
	if !strings.Contains(f.log.String(), `"panic":"boom"`) {
		t.Errorf("panic not logged:\n%s", f.log)
	}
	if resp, _ := f.get(t, "/wp-json/test/v1/things/1"); resp.StatusCode != 200 {
		t.Error("server did not survive the panic")
	}
}

func TestAccessLogAndMetrics(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	f.get(t, "/wp-json/test/v1/things/9")
	f.get(t, "/sample-page/")
	lines := logLines(t, f.log)
	if len(lines) != 2 {
		t.Fatalf("%d log lines:\n%s", len(lines), f.log)
	}
	for i, want := range []map[string]any{
		{"method": "GET", "path": "/wp-json/test/v1/things/9", "status": 200.0, "bytes": 10.0, "served_by": "sidecar", "route": "GET /wp-json/test/v1/things/{id}", "remote_ip": "127.0.0.1", "message": "request"},
		{"method": "GET", "path": "/sample-page/", "status": 200.0, "bytes": 25.0, "served_by": "php", "route": "php", "message": "request"},
	} {
		for k, v := range want {
			if lines[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v", i, k, lines[i][k], v)
			}
		}
		for _, k := range []string{"request_id", "duration_ms"} {
			if _, ok := lines[i][k]; !ok {
				t.Errorf("line %d lacks %s", i, k)
			}
		}
	}
	if _, ok := lines[1]["upstream_ms"]; !ok {
		t.Error("pass-through line lacks upstream_ms")
	}
	m := metricsText(t, f.metrics)
	for _, want := range []string{
		`wpsidecar_http_requests_total{code="200",route="GET /wp-json/test/v1/things/{id}",served_by="sidecar"} 1`,
		`wpsidecar_http_requests_total{code="200",route="php",served_by="php"} 1`,
		`wpsidecar_http_request_duration_seconds_count{route="php",served_by="php"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestAccessLog_ClientAddress: behind a trusted proxy the access line's
// remote_ip is the client the sidecar believes, the proxy's own address in
// peer_ip; an untrusted peer's claim changes nothing.
func TestAccessLog_ClientAddress(t *testing.T) {
	tests := []struct {
		name         string
		trusted      []netip.Prefix
		xff          string
		remote, peer any
	}{
		{"trusted proxy", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, "198.51.100.4, 203.0.113.7", "203.0.113.7", "127.0.0.1"},
		{"trusted chain", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}, "198.51.100.4, 10.1.2.3", "198.51.100.4", "127.0.0.1"},
		{"untrusted peer", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, "203.0.113.7", "127.0.0.1", nil},
		{"trusted, nothing forwarded", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, "", "127.0.0.1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{trusted: tt.trusted})
			req, _ := http.NewRequest(http.MethodGet, f.front.URL+"/wp-json/test/v1/things/9", nil)
			if tt.xff != "" {
				req.Header.Set("X-Forwarded-For", tt.xff)
			}
			f.do(t, req)
			line := logLines(t, f.log)[0]
			if line["remote_ip"] != tt.remote || line["peer_ip"] != tt.peer {
				t.Errorf("remote_ip %v peer_ip %v, want %v %v", line["remote_ip"], line["peer_ip"], tt.remote, tt.peer)
			}
		})
	}
}

func metricsText(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

func TestClientIPFunc(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	f := ClientIPFunc(trusted)
	tests := []struct {
		peer, xff, want string
	}{
		{"192.0.2.1:5000", "", "192.0.2.1"},
		{"192.0.2.1:5000", "203.0.113.9", "192.0.2.1"},                     // an untrusted peer's claim is ignored
		{"10.0.0.2:5000", "203.0.113.9", "203.0.113.9"},                    // a trusted proxy's client
		{"10.0.0.2:5000", "6.6.6.6, 203.0.113.9, 10.0.0.3", "203.0.113.9"}, // the client's own claim (6.6.6.6) is not believed
		{"10.0.0.2:5000", "", "10.0.0.2"},
		{"[fd00::1]:5000", "2001:db8::7", "2001:db8::7"},
		{"10.0.0.2:5000", "garbage, 203.0.113.9", "203.0.113.9"},
		// The forms proxies write (security round 2, item 11).
		{"10.0.0.2:5000", "[2001:db8::1]", "2001:db8::1"},
		{"10.0.0.2:5000", "1.2.3.4:4444", "1.2.3.4"},
		{"10.0.0.2:5000", "[2001:db8::1]:4444", "2001:db8::1"},
		{"10.0.0.2:5000", `"198.51.100.7"`, "198.51.100.7"},
		// An entry that is no address does not make the proxy the client.
		{"10.0.0.2:5000", "unknown", ""},
		{"10.0.0.2:5000", "203.0.113.9, _hidden", ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tt.peer
		if tt.xff != "" {
			r.Header.Set("X-Forwarded-For", tt.xff)
		}
		if got := f(r); got != tt.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", tt.peer, tt.xff, got, tt.want)
		}
	}
}

// rawRequest sends bytes as they are (for paths, queries and framings a
// client library would normalise) on a new connection, reads one answer,
// and tells whether the server closed the connection after it.
func rawRequest(t *testing.T, addr, raw string) (*http.Response, string, bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, err = br.ReadByte()
	return resp, string(b), err == io.EOF
}

// TestPassthrough_MalformedBodyIsTheClients: a chunked body that breaks off
// in a bad chunk is answered 400, not 502, and not counted against PHP.
func TestPassthrough_MalformedBodyIsTheClients(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	resp, body, closed := rawRequest(t, f.front.Listener.Addr().String(),
		"POST /wp-admin/admin-ajax.php HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n")
	if resp.StatusCode != http.StatusBadRequest || body != "400 Bad Request: the request body could not be read.\n" || !closed {
		t.Errorf("got %d %q, closed %v", resp.StatusCode, body, closed)
	}
	if m := metricsText(t, f.metrics); strings.Contains(m, `wpsidecar_upstream_errors_total{kind="unreachable"} 1`) {
		t.Errorf("counted as an upstream error:\n%s", m)
	}
	if strings.Contains(f.log.String(), `"level":"error"`) {
		t.Errorf("logged as an error:\n%s", f.log.String())
	}
}

// TestRequestSmuggling_ContentLengthAndTransferEncoding: a request with both
// framings is answered by Transfer-Encoding and its connection closed; a
// plain request keeps its connection.
func TestRequestSmuggling_ContentLengthAndTransferEncoding(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	addr := f.front.Listener.Addr().String()
	for _, path := range []string{"/hello-world/", "/wp-json/test/v1/things/7"} {
		resp, _, closed := rawRequest(t, addr, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
		if !closed || !resp.Close {
			t.Errorf("%s, Content-Length and Transfer-Encoding: %d, connection left open", path, resp.StatusCode)
		}
		if _, _, closed := rawRequest(t, addr, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"); closed {
			t.Errorf("%s, Content-Length alone: connection closed", path)
		}
	}
}

func FuzzClientIP(f *testing.F) {
	f.Add("10.0.0.2:5000", "6.6.6.6, 203.0.113.9, 10.0.0.3")
	f.Add("[fd00::1]:1", "::ffff:1.2.3.4,,")
	f.Add("garbage", "%zz")
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	clientIP := ClientIPFunc(trusted)
	f.Fuzz(func(t *testing.T, peer, xff string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = peer
		r.Header.Set("X-Forwarded-For", xff)
		ip := clientIP(r)
		// Only a trusted peer's header is believed.
		if !isTrusted(trusted, peer) && ip != remoteIP(peer) {
			t.Errorf("untrusted peer %q: client %q", peer, ip)
		}
	})
}

// TestAccessLog: one access line per request by default; with
// Options.AccessLog, only the answers it picks (the error lines of a failed
// upstream stay either way).
func TestAccessLog(t *testing.T) {
	for _, c := range []struct {
		name       string
		pick       func(int) bool
		ok, errors int // access lines of 200 answers (of 100), of 502s (of 20)
	}{
		{"all", nil, 100, 20},
		{"server errors", func(status int) bool { return status >= 500 }, 0, 20},
		{"none", func(int) bool { return false }, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{accessLog: c.pick, upstream: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/fail" {
					panic(http.ErrAbortHandler) // PHP breaks the connection: 502
				}
			}})
			for range 100 {
				f.get(t, "/ok")
			}
			for range 20 {
				if resp, _ := f.get(t, "/fail"); resp.StatusCode != 502 {
					t.Fatalf("fail: %d", resp.StatusCode)
				}
			}
			ok, failed, upstream := 0, 0, 0
			for _, l := range logLines(t, f.log) {
				switch {
				case l["message"] == "request" && l["status"] == 200.0:
					ok++
				case l["message"] == "request" && l["status"] == 502.0:
					failed++
				case l["message"] == "upstream request failed":
					upstream++
				}
			}
			if ok != c.ok || failed != c.errors || upstream != 20 {
				t.Errorf("access lines: %d of 200s, %d of 502s; upstream errors %d", ok, failed, upstream)
			}
		})
	}
}

// TestPassthrough_MarkerAndLoop: what the sidecar passes on carries the
// marker with the value the web server in front gave the request (its
// secret), 1 without one; a request passed on that comes back to the
// sidecar (a server in front that does not recognise the marker) is
// answered 508, not sent round again (security round 3, item 8).
func TestPassthrough_MarkerAndLoop(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	for _, c := range []struct{ sent, want string }{{"", "1"}, {"0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"}} {
		req, _ := http.NewRequest(http.MethodGet, f.front.URL+"/wp-json/fieldmgr/v1/field-groups", nil)
		if c.sent != "" {
			req.Header.Set(HeaderPassed, c.sent)
		}
		if resp, body := f.do(t, req); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if v := f.rec.last(t).Header.Values(HeaderPassed); len(v) != 1 || v[0] != c.want {
			t.Errorf("sent %q: %s reached PHP as %q, want %q", c.sent, HeaderPassed, v, c.want)
		}
	}

	// A server in front that sends everything to the sidecar, the marker
	// notwithstanding (it gives every request its secret, as a recipe
	// does, but does not recognise it). It stops the loop itself after a
	// few rounds.
	var front string
	var rounds atomic.Int64
	loop := newFixture(t, fixtureOpts{upstream: func(w http.ResponseWriter, r *http.Request) {
		if rounds.Add(1) > 5 {
			http.Error(w, "looped", http.StatusInternalServerError)
			return
		}
		req, _ := http.NewRequest(r.Method, front+r.RequestURI, nil)
		req.Header = r.Header.Clone()
		req.Header.Set(HeaderPassed, "the-secret")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}})
	front = loop.front.URL
	resp, body := loop.get(t, "/wp-json/fieldmgr/v1/no-such-route")
	if resp.StatusCode != http.StatusLoopDetected || !strings.Contains(body, "came back to the sidecar") || rounds.Load() != 1 {
		t.Errorf("a loop: %d %q after %d rounds; want 508 after 1", resp.StatusCode, body, rounds.Load())
	}
	if !strings.Contains(loop.log.String(), "does not recognise the marker") {
		t.Errorf("no log line for the loop:\n%s", loop.log.String())
	}
}

// TestForwardedKey: what the pass-through forwards that PHP may read: from
// any peer the scheme alone (its claims are dropped before PHP), from a
// trusted proxy its claims too, but never the client's address.
func TestForwardedKey(t *testing.T) {
	key := forwardedKey([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	req := func(peer string, hdr ...string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/wp-json/wp/v2/posts", nil)
		r.RemoteAddr = peer
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Add(hdr[i], hdr[i+1])
		}
		return r
	}
	for _, c := range []struct {
		name string
		a, b *http.Request
		same bool
	}{
		{"an untrusted peer's claims", req("6.6.6.6:1"), req("6.6.6.6:1", "X-Forwarded-Proto", "http", "X-Forwarded-Host", "evil.example", "Forwarded", "proto=http;host=evil"), true},
		{"a trusted proxy's scheme", req("10.0.0.2:1", "X-Forwarded-Proto", "https"), req("10.0.0.2:1", "X-Forwarded-Proto", "http"), false},
		{"a trusted proxy's host", req("10.0.0.2:1", "X-Forwarded-Host", "a.example"), req("10.0.0.2:1", "X-Forwarded-Host", "b.example"), false},
		{"a trusted proxy's Forwarded proto", req("10.0.0.2:1", "Forwarded", "for=1.2.3.4;proto=https"), req("10.0.0.2:1", "Forwarded", "for=1.2.3.4;proto=http"), false},
		{"the client's address", req("10.0.0.2:1", "X-Forwarded-For", "1.2.3.4", "X-Real-Ip", "1.2.3.4", "Forwarded", "for=1.2.3.4;proto=https"),
			req("10.0.0.2:1", "X-Forwarded-For", "5.6.7.8", "X-Real-Ip", "5.6.7.8", "Forwarded", "for=5.6.7.8;proto=https"), true},
		{"a trusted proxy's underscore spelling", req("10.0.0.2:1"), req("10.0.0.2:1", "X_Forwarded_Proto", "http"), false},
		{"an untrusted peer's CloudFront scheme", req("6.6.6.6:1"), req("6.6.6.6:1", "CloudFront-Forwarded-Proto", "https"), true},
		{"a trusted proxy's CloudFront scheme", req("10.0.0.2:1"), req("10.0.0.2:1", "CloudFront-Forwarded-Proto", "https"), false},
		{"a trusted proxy's ARR SSL", req("10.0.0.2:1"), req("10.0.0.2:1", "X-ARR-SSL", "2048|256|CN=…"), false},
	} {
		if got := key(c.a) == key(c.b); got != c.same {
			t.Errorf("%s: keys %q and %q; same %v, want %v", c.name, key(c.a), key(c.b), got, c.same)
		}
	}
}

// FuzzForwardedKey: from a peer not trusted, no header reaches the key.
func FuzzForwardedKey(f *testing.F) {
	f.Add("6.6.6.6:1", "X-Forwarded-Proto", "http")
	f.Add("10.0.0.2:1", "Forwarded", `for="[::1]";proto=https,host=a`)
	key := forwardedKey([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	f.Fuzz(func(t *testing.T, peer, name, value string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = peer
		r.Header[name] = []string{value}
		k := key(r)
		if !isTrusted([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, peer) && k != "http" {
			t.Errorf("untrusted peer %q with %s: %q: key %q", peer, name, value, k)
		}
	})
}

// BenchmarkPassREST_Hit: a kept answer of PHP's given again, through the
// whole handler (request id, access log, metrics, the REST view, the key).
func BenchmarkPassREST_Hit(b *testing.B) {
	c, err := restcache.New(restcache.Options{Namespaces: []string{"wp/v2"}})
	if err != nil {
		b.Fatal(err)
	}
	body := strings.Repeat("x", 20000)
	php := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Header().Set("X-WP-Total", "22")
		io.WriteString(w, body)
	}))
	defer php.Close()
	u, _ := url.Parse(php.URL)
	h, err := New(Options{Upstream: u, UpstreamTimeout: time.Second, UpstreamDial: time.Second, BodyTimeout: time.Second,
		Main: rest.SiteOptions{Settings: site}, Log: zerolog.New(io.Discard), Metrics: NewMetrics(), RESTCache: c})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/wp-json/wp/v2/posts?per_page=10", nil)
	h.ServeHTTP(httptest.NewRecorder(), req)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := &discard{header: http.Header{}}
		h.ServeHTTP(w, req)
		if w.code != 200 {
			b.Fatal(w.code)
		}
	}
}

// discard is a client that takes an answer and keeps only its status.
type discard struct {
	header http.Header
	code   int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) WriteHeader(code int)        { d.code = code }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }

package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/web/rest"
)

// TestCompress_PassThroughUntouched: with --compress, what PHP answers
// reaches the client byte for byte, headers included, whatever the client
// accepts, and PHP sees the client's Accept-Encoding and If-None-Match;
// the sidecar's own answer varies by Accept-Encoding.
func TestCompress_PassThroughUntouched(t *testing.T) {
	big := []byte(`[` + strings.Repeat(`{"id":1,"title":"a post"},`, 200) + `{}]`)
	var gzipped bytes.Buffer
	gzipped.WriteString("\x1f\x8b not really gzip, and PHP's to say")
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Header().Set("Etag", `"php"`)
		if r.URL.Path == "/wp-json/wp/v2/coded" {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzipped.Bytes())
			return
		}
		w.Write(big)
	})
	u, _ := url.Parse(rec.srv.URL)
	h, err := New(Options{
		Upstream: u, UpstreamTimeout: 5 * time.Second, UpstreamDial: time.Second, BodyTimeout: time.Minute,
		Main: rest.SiteOptions{Settings: site, Handlers: []rest.Handlers{testNS{}}},
		Log:  zerolog.Nop(), Metrics: NewMetrics(), Compress: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(h)
	t.Cleanup(front.Close)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(path, accept string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodGet, front.URL+path, nil)
		req.Header.Set("Accept-Encoding", accept)
		req.Header.Set("If-None-Match", `"other"`)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, tc := range []struct {
		path, accept string
		body         []byte
		encoding     string
	}{
		{"/wp-json/wp/v2/posts", "br, gzip", big, ""},
		{"/wp-json/wp/v2/posts", "", big, ""},
		{"/wp-json/wp/v2/coded", "gzip", gzipped.Bytes(), "gzip"},
		{"/wp-json/wp/v2/coded", "br", gzipped.Bytes(), "gzip"},
	} {
		resp, body := get(tc.path, tc.accept)
		if resp.StatusCode != 200 || !bytes.Equal(body, tc.body) || resp.Header.Get("Content-Encoding") != tc.encoding ||
			resp.Header.Get("Vary") != "" || resp.Header.Get("Etag") != `"php"` {
			t.Errorf("%s, %q: %d %v %q", tc.path, tc.accept, resp.StatusCode, resp.Header, body)
		}
		got := rec.last(t)
		if got.Header.Get("Accept-Encoding") != tc.accept || got.Header.Get("If-None-Match") != `"other"` {
			t.Errorf("%s, %q: PHP saw Accept-Encoding %q, If-None-Match %q", tc.path, tc.accept, got.Header.Get("Accept-Encoding"), got.Header.Get("If-None-Match"))
		}
	}
	resp, body := get("/wp-json/test/v1/things/7", "br, gzip")
	if resp.StatusCode != 200 || string(body) != `{"id":"7"}` || resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Vary") != "Origin, Authorization, Cookie, Accept-Encoding" {
		t.Errorf("own route: %d %v %s", resp.StatusCode, resp.Header, body)
	}
}

package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/web/rest"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// keptNS answers GET /kept with 2 KiB that may be kept.
type keptNS struct{}

func (keptNS) Name() string { return "kept/v1" }
func (keptNS) Register(r *mux.Router) {
	r.HandleFunc("/kept", func(w http.ResponseWriter, r *http.Request) {
		wpsidecar.ScopeOf(r.Context()).Allow()
		wpjson.WriteRaw(w, http.StatusOK, []byte(`"`+strings.Repeat("kept answer ", 170)+`"`))
	}).Methods(http.MethodGet)
}

// TestAnswerCacheBytes: wpsidecar_answer_cache_bytes{cache} is what the
// prepared answers and the coded bodies hold, as each counts it against
// its bound: none at first, then an answer kept and its coded body.
func TestAnswerCacheBytes(t *testing.T) {
	m := NewMetrics()
	p := rest.NewPrepared(func(context.Context) (uint64, bool) { return 1, true })
	u, _ := url.Parse("http://127.0.0.1:1") // never asked
	h, err := New(Options{
		Upstream: u, UpstreamTimeout: time.Second, UpstreamDial: time.Second, BodyTimeout: time.Minute,
		Main: rest.SiteOptions{Settings: site, Handlers: []rest.Handlers{keptNS{}}},
		Log:  zerolog.Nop(), Metrics: m, Compress: true, Prepared: p,
	})
	if err != nil {
		t.Fatal(err)
	}
	gauges := func() map[string]int64 {
		got := map[string]int64{}
		for _, g := range regexp.MustCompile(`(?m)^wpsidecar_answer_cache_bytes\{cache="(\w+)"\} (\S+)$`).FindAllStringSubmatch(metricsText(t, m), -1) {
			v, err := strconv.ParseFloat(g[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			got[g[1]] = int64(v)
		}
		return got
	}
	if got := gauges(); len(got) != 2 || got["prepared"] != 0 || got["coded"] != 0 {
		t.Errorf("at first: %v", got)
	}
	req := httptest.NewRequest(http.MethodGet, "http://example.com/wp-json/kept/v1/kept", nil)
	req.Header.Set("Accept-Encoding", "br")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("Content-Encoding") != "br" || p.Stats().Kept != 1 {
		t.Fatalf("%d %v, %+v", rec.Code, rec.Header(), p.Stats())
	}
	// Each more than the bytes it keeps: the coded body, and the identity
	// one (2,042 bytes) besides in the cache of coded bodies.
	coded := int64(rec.Body.Len())
	want := map[string]int64{"prepared": p.Stats().Bytes, "coded": h.rest.Compression.Bytes()}
	if got := gauges(); len(got) != 2 || got["prepared"] != want["prepared"] || got["coded"] != want["coded"] || want["prepared"] <= coded || want["coded"] <= 2042+coded {
		t.Errorf("%v, want %v", got, want)
	}
}

package delivery_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/changes/delivery"
	"github.com/wpsidecar/wpsidecar/domain/cachetag"
	"github.com/wpsidecar/wpsidecar/internal/harness/testlog"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
)

// cdn records the requests a purger sends, as a vendor's API sees them,
// and answers statuses from a script (then 200).
type cdn struct {
	mu     sync.Mutex
	got    []string
	script []int
}

func (c *cdn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var hs []string
	for _, h := range []string{"Authorization", "Content-Type", "Fastly-Key", "Surrogate-Key", "Fastly-Soft-Purge", "Accept", "Xkey-Purge", "Xkey-Softpurge"} {
		if v := r.Header.Get(h); v != "" {
			hs = append(hs, h+": "+v)
		}
	}
	c.mu.Lock()
	c.got = append(c.got, fmt.Sprintf("%s %s host=%s %s %s", r.Method, r.URL.RequestURI(), r.Host, strings.Join(hs, "; "), b))
	status := 200
	if len(c.script) > 0 {
		status, c.script = c.script[0], c.script[1:]
	}
	c.mu.Unlock()
	w.WriteHeader(status)
}

func (c *cdn) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

func tagsN(prefix string, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// TestAdapters: each CDN's requests, exactly as its documentation asks.
func TestAdapters(t *testing.T) {
	page, _ := url.Parse("https://www.example.com/wp-json/site/v1/brand")
	api, _ := url.Parse("https://api.example.test")
	tests := []struct {
		a    delivery.Adapter
		p    delivery.Purge
		want []string
	}{
		{delivery.Varnish{Base: urlOf(t, "http://127.0.0.1:6081")}, delivery.Purge{Tags: []string{"themeopts", "themeopts:logo"}, URLs: []*url.URL{page}},
			[]string{"PURGE http://127.0.0.1:6081/ host=127.0.0.1:6081 xkey-purge=themeopts themeopts:logo", "PURGE http://127.0.0.1:6081/wp-json/site/v1/brand host=www.example.com "}},
		{delivery.Varnish{Base: urlOf(t, "http://127.0.0.1:6081"), Soft: true}, delivery.Purge{Tags: []string{"fieldmgr"}},
			[]string{"PURGE http://127.0.0.1:6081/ host=127.0.0.1:6081 xkey-softpurge=fieldmgr"}},
		{delivery.Nginx{Base: urlOf(t, "http://127.0.0.1:8088")}, delivery.Purge{Tags: []string{"ignored"}, URLs: []*url.URL{page}},
			[]string{"PURGE http://127.0.0.1:8088/wp-json/site/v1/brand host=www.example.com "}},
		{delivery.Cloudflare{API: api, Zone: "z1", Token: "t"}, delivery.Purge{Tags: tagsN("k", 31), URLs: []*url.URL{page}},
			[]string{
				"POST https://api.example.test/client/v4/zones/z1/purge_cache host=api.example.test authorization=Bearer t content-type=application/json body={\"tags\":[\"k0\",\"k1\",\"k2\",\"k3\",\"k4\",\"k5\",\"k6\",\"k7\",\"k8\",\"k9\",\"k10\",\"k11\",\"k12\",\"k13\",\"k14\",\"k15\",\"k16\",\"k17\",\"k18\",\"k19\",\"k20\",\"k21\",\"k22\",\"k23\",\"k24\",\"k25\",\"k26\",\"k27\",\"k28\",\"k29\"]}",
				"POST https://api.example.test/client/v4/zones/z1/purge_cache host=api.example.test authorization=Bearer t content-type=application/json body={\"tags\":[\"k30\"]}",
				"POST https://api.example.test/client/v4/zones/z1/purge_cache host=api.example.test authorization=Bearer t content-type=application/json body={\"files\":[\"https://www.example.com/wp-json/site/v1/brand\"]}",
			}},
		{delivery.Fastly{API: api, Service: "s1", Token: "t", Soft: true}, delivery.Purge{Tags: []string{"a", "b"}, URLs: []*url.URL{page}},
			[]string{"POST https://api.example.test/service/s1/purge host=api.example.test accept=application/json fastly-key=t fastly-soft-purge=1 surrogate-key=a b"}},
	}
	for _, tt := range tests {
		reqs, err := tt.a.Requests(tt.p)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range reqs {
			got = append(got, describe(r))
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n got %s\nwant %s", tt.a.Name(), strings.Join(got, "\n     "), strings.Join(tt.want, "\n     "))
		}
	}
	// Fastly: at most 256 keys a request.
	reqs, _ := delivery.Fastly{API: api, Service: "s", Token: "t"}.Requests(delivery.Purge{Tags: tagsN("k", 300)})
	if len(reqs) != 2 || len(strings.Fields(reqs[0].Header.Get("Surrogate-Key"))) != 256 || len(strings.Fields(reqs[1].Header.Get("Surrogate-Key"))) != 44 {
		t.Errorf("fastly batches: %d", len(reqs))
	}
}

func describe(r *http.Request) string {
	var hs []string
	for _, h := range []string{"Accept", "Authorization", "Content-Type", "Fastly-Key", "Fastly-Soft-Purge", "Surrogate-Key", "Xkey-Purge", "Xkey-Softpurge"} {
		if v := r.Header.Get(h); v != "" {
			hs = append(hs, strings.ToLower(h)+"="+v)
		}
	}
	s := r.Method + " " + r.URL.String() + " host=" + r.Host + " " + strings.Join(hs, " ")
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		s += " body=" + string(b)
	}
	return s
}

// TestPurger: changes close together go out as one request; a failing
// CDN is retried, a refusing one is not; what is queued at shutdown is
// drained.
func TestPurger(t *testing.T) {
	c := &cdn{script: []int{503, 200, 400}}
	srv := httptest.NewServer(c)
	defer srv.Close()
	p := delivery.NewPurger(delivery.Fastly{API: urlOf(t, srv.URL), Service: "s", Token: "t"}, zerolog.Nop())
	p.Window, p.Backoff = 50*time.Millisecond, 10*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { p.Run(ctx); close(ran) }()
	p.Purge(delivery.Purge{Tags: []string{"themeopts", "themeopts:a"}})
	p.Purge(delivery.Purge{Tags: []string{"themeopts", "themeopts:b"}})
	testwait.For(t, "the batch, retried", func() bool { return len(c.requests()) == 2 })
	for _, r := range c.requests() {
		if !strings.Contains(r, "Surrogate-Key: themeopts themeopts:a themeopts:b") {
			t.Errorf("batch: %s", r)
		}
	}
	p.Purge(delivery.Purge{Tags: []string{"fieldmgr"}}) // refused with 400: not retried
	// Counted as failed once given up: no retry of it can follow, and the
	// next request the CDN sees is the next purge's.
	testwait.For(t, "the refused purge", func() bool { sent, failed := p.Counts(); return sent == 1 && failed == 1 })
	if n := len(c.requests()); n != 3 {
		t.Errorf("%d requests: a 400 was retried", n)
	}
	cancel()
	<-ran
	p.Purge(delivery.Purge{Tags: []string{"late"}})
	p.Drain(context.Background())
	if got := c.requests(); len(got) != 4 || !strings.Contains(got[3], "Surrogate-Key: late") {
		t.Errorf("drain, after a refused purge not retried: %v", got)
	}
}

// xkeyVarnish answers PURGE as a Varnish with xkey does, but refuses a
// header longer than limit bytes with a 400 (Varnish's http_req_hdr_len),
// and holds every answer while hold is set; it keeps the tags purged.
type xkeyVarnish struct {
	limit int
	mu    sync.Mutex
	tags  map[string]int
	hold  chan struct{} // closed: answer
}

func (v *xkeyVarnish) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	<-v.hold
	h := r.Header.Get("xkey-purge")
	if len(h) > v.limit {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, t := range strings.Fields(h) {
		v.tags[t]++
	}
}

func (v *xkeyVarnish) purged(tag string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.tags[tag] > 0
}

// TestPurger_Bulk: a transaction that wrote a thousand posts (one SQL
// UPDATE, as wp search-replace does) purges every tag: the Varnish
// adapter keeps each xkey-purge header under Varnish's limit, and a
// refusal as too large (a Varnish with a smaller limit) is split and sent
// again, never given up (issue 55, item 1: one header of 1,002 tags was
// refused with 400 and the purge given up).
func TestPurger_Bulk(t *testing.T) {
	for _, limit := range []int{8192, 1500} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			v := &xkeyVarnish{limit: limit, tags: map[string]int{}, hold: make(chan struct{})}
			close(v.hold)
			srv := httptest.NewServer(v)
			defer srv.Close()
			p := delivery.NewPurger(delivery.Varnish{Base: urlOf(t, srv.URL)}, zerolog.Nop())
			p.Window, p.Backoff = 10*time.Millisecond, 10*time.Millisecond
			ctx, cancel := context.WithCancel(context.Background())
			ran := make(chan struct{})
			go func() { p.Run(ctx); close(ran) }()
			defer func() { cancel(); <-ran }()
			tags := []string{"rest", "rest:lists"}
			for i := range 1000 {
				tags = append(tags, fmt.Sprintf("rest:post:%d", 100000+i))
			}
			p.Purge(delivery.Purge{Tags: tags})
			testwait.For(t, "every tag purged", func() bool {
				for _, tag := range tags {
					if !v.purged(tag) {
						return false
					}
				}
				return true
			})
			if _, failed := p.Counts(); failed != 0 {
				t.Errorf("%d purges given up", failed)
			}
		})
	}
}

// TestPurger_Hung: while the CDN does not answer, purges pile up as a
// set, made broader past a bound (an entity's tag its namespace's), never
// dropped; once the CDN answers, they are sent (issue 55, item 4: the
// queue of 1,024 filled in 0.4 s and 1,400 purges were dropped).
func TestPurger_Hung(t *testing.T) {
	v := &xkeyVarnish{limit: 8192, tags: map[string]int{}, hold: make(chan struct{})}
	srv := httptest.NewServer(v)
	defer srv.Close()
	var logs testlog.Buffer
	p := delivery.NewPurger(delivery.Varnish{Base: urlOf(t, srv.URL)}, zerolog.New(&logs))
	p.Window, p.Backoff, p.MaxPause = 10*time.Millisecond, 10*time.Millisecond, 50*time.Millisecond
	p.Client = &http.Client{Timeout: 50 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { p.Run(ctx); close(ran) }()
	defer func() { cancel(); <-ran }()
	for i := range 6000 {
		p.Purge(delivery.Purge{Tags: []string{"site2:rest:lists", fmt.Sprintf("site2:rest:post:%d", i)}})
	}
	p.Purge(delivery.Purge{Tags: []string{"themeopts:accent"}})
	testwait.For(t, "purges failing while the CDN hangs", func() bool { return strings.Contains(logs.String(), "kept pending") })
	if !strings.Contains(logs.String(), "too many purges pending: purging broader tags") {
		t.Errorf("6,000 tags pending were not made broader:\n%s", logs.String())
	}
	close(v.hold) // it answers again
	// Each tag purged, or its broader one.
	covered := func(tag string) bool { return v.purged(tag) || v.purged(cachetag.Broad(tag)) }
	testwait.For(t, "what was pending purged", func() bool {
		for i := range 6000 {
			if !covered(fmt.Sprintf("site2:rest:post:%d", i)) {
				return false
			}
		}
		return covered("site2:rest:lists") && covered("themeopts:accent")
	})
	if strings.Contains(logs.String(), "dropped") {
		t.Errorf("a purge was dropped:\n%s", logs.String())
	}
	if _, failed := p.Counts(); failed != 0 {
		t.Errorf("%d purges given up", failed)
	}
}

func urlOf(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

package proxy

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wpsidecar/wpsidecar/web/rest"
	"github.com/wpsidecar/wpsidecar/web/restcache"
)

// Metrics are the sidecar's Prometheus metrics, in a registry of their own.
type Metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	upstreams *prometheus.CounterVec

	// series are the requests' counters and histograms by their labels,
	// found once: a request's own cost is then a map read, not a hash of
	// its labels per vector.
	mu     sync.RWMutex
	series map[seriesKey]series
}

type seriesKey struct {
	route    string
	status   int
	servedBy string
}

type series struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// NewMetrics registers the sidecar's metrics, the Go runtime's and the
// other parts' collectors (the database pool's, built by cmd).
func NewMetrics(others ...prometheus.Collector) *Metrics {
	m := &Metrics{
		reg:    prometheus.NewRegistry(),
		series: map[seriesKey]series{},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wpsidecar_http_requests_total",
			Help: "Requests by route, status code and who answered (sidecar or php).",
		}, []string{"route", "code", "served_by"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wpsidecar_http_request_duration_seconds",
			Help:    "Time from request to the end of the response, by route and who answered.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "served_by"}),
		upstreams: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wpsidecar_upstream_errors_total",
			Help: "Pass-through requests PHP did not answer: unreachable (502), timeout (504), client_gone.",
		}, []string{"kind"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.upstreams,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(others...)
	for _, k := range []string{"unreachable", "timeout", "client_gone"} {
		m.upstreams.WithLabelValues(k)
	}
	return m
}

// Register adds collectors of other parts of the sidecar.
func (m *Metrics) Register(cs ...prometheus.Collector) { m.reg.MustRegister(cs...) }

// Handler serves the metrics in Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *Metrics) observe(route string, status int, servedBy string, d time.Duration) {
	if m == nil {
		return
	}
	k := seriesKey{route, status, servedBy}
	m.mu.RLock()
	s, ok := m.series[k]
	m.mu.RUnlock()
	if !ok {
		// Bounded as the labels are: routes are templates, statuses three
		// digits.
		s = series{m.requests.WithLabelValues(route, strconv.Itoa(status), servedBy), m.latency.WithLabelValues(route, servedBy)}
		m.mu.Lock()
		m.series[k] = s
		m.mu.Unlock()
	}
	s.requests.Inc()
	s.latency.Observe(d.Seconds())
}

func (m *Metrics) upstreamError(kind string) {
	if m != nil {
		m.upstreams.WithLabelValues(kind).Inc()
	}
}

// preparedMetrics count the answers given again from those kept
// (wpsidecar_prepared_answers_total{result="given"}) and the answers
// built and kept ({result="kept"}), and measure what those kept hold.
func preparedMetrics(p *rest.Prepared) []prometheus.Collector {
	out := []prometheus.Collector{cacheBytes("prepared", func() int64 { return p.Stats().Bytes })}
	for result, n := range map[string]func(rest.PreparedStats) int64{
		"given": func(s rest.PreparedStats) int64 { return s.Given },
		"kept":  func(s rest.PreparedStats) int64 { return s.Kept },
	} {
		out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wpsidecar_prepared_answers_total",
			Help:        "Answers of serve-from-feed's prepared answers: given again from those kept, or built and kept.",
			ConstLabels: prometheus.Labels{"result": result}}, func() float64 { return float64(n(p.Stats())) }))
	}
	return out
}

// restCacheMetrics are --cache-rest's counts: answers by result, bypasses
// and drops by reason, and the bytes it holds.
func restCacheMetrics(c *restcache.Cache) []prometheus.Collector {
	out := []prometheus.Collector{cacheBytes("rest", func() int64 { return int64(c.Stats().Bytes) })}
	for result, n := range map[string]func(restcache.Stats) int64{
		"hit":       func(s restcache.Stats) int64 { return s.Hits },
		"collapsed": func(s restcache.Stats) int64 { return s.Collapsed },
		"miss":      func(s restcache.Stats) int64 { return s.Misses },
	} {
		out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wpsidecar_rest_cache_requests_total",
			Help:        "REST requests --cache-rest looked up: given from a kept answer (hit), given another request's fetch made meanwhile (collapsed), or fetched from PHP (miss); bypasses are wpsidecar_rest_cache_bypasses_total.",
			ConstLabels: prometheus.Labels{"result": result}}, func() float64 { return float64(n(c.Stats())) }))
	}
	out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wpsidecar_rest_cache_kept_total",
		Help: "PHP's answers --cache-rest fetched and kept."}, func() float64 { return float64(c.Stats().Kept) }))
	out = append(out, &reasonCounter{name: "wpsidecar_rest_cache_bypasses_total", help: "REST requests --cache-rest passed to PHP without a look, by reason.", read: func() map[string]int64 { return c.Stats().Bypassed }},
		&reasonCounter{name: "wpsidecar_rest_cache_drops_total", help: "Drops of --cache-rest's kept answers, by reason.", read: func() map[string]int64 { return c.Stats().Dropped }})
	return out
}

// reasonCounter is a counter by reason whose values another part keeps:
// a series per reason seen so far.
type reasonCounter struct {
	name, help string
	read       func() map[string]int64
}

func (rc *reasonCounter) desc() *prometheus.Desc {
	return prometheus.NewDesc(rc.name, rc.help, []string{"reason"}, nil)
}

func (rc *reasonCounter) Describe(ch chan<- *prometheus.Desc) { ch <- rc.desc() }

func (rc *reasonCounter) Collect(ch chan<- prometheus.Metric) {
	d := rc.desc()
	for reason, n := range rc.read() {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(n), reason)
	}
}

// cacheBytes measures what a cache of answers holds, as counted against
// its bound (wpsidecar_answer_cache_bytes{cache}).
func cacheBytes(cache string, n func() int64) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wpsidecar_answer_cache_bytes",
		Help:        "Bytes a cache of answers holds, as counted against its bound: prepared (serve-from-feed's prepared answers), coded (--compress's coded bodies) or rest (--cache-rest's kept answers of PHP's).",
		ConstLabels: prometheus.Labels{"cache": cache}}, func() float64 { return float64(n()) })
}

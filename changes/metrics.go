package changes

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wpsidecar/wpsidecar/store"
)

// FeedMetrics say how changes are noticed: wpsidecar_change_feed{mode} is 1
// for the mode in force (binlog, poll, off); with a binlog feed,
// wpsidecar_change_feed_silence_seconds is how long ago it last heard the
// server (an event or a heartbeat): what tells a quiet feed from a dead
// one. With serve-from-feed, wpsidecar_serve_from_feed_reads_total{source}
// counts the reads answered from memory, read from the database and kept,
// and read from the database because the feed was not current.
func FeedMetrics(mode func() string, feed *Feed, memo *store.Memo) []prometheus.Collector {
	var out []prometheus.Collector
	for _, m := range []string{ModeBinlog, ModePoll, "off"} {
		out = append(out, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wpsidecar_change_feed", Help: "How changes are noticed: 1 for the mode in force (binlog, poll after a fall-back or by choice, off).",
			ConstLabels: prometheus.Labels{"mode": m}}, func() float64 {
			if mode() == m {
				return 1
			}
			return 0
		}))
	}
	if feed != nil {
		out = append(out, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wpsidecar_change_feed_silence_seconds",
			Help: "Seconds since the binlog change feed last heard the server (an event or a heartbeat); -1 before it first did."}, func() float64 {
			if t := feed.LastSeen(); !t.IsZero() {
				return time.Since(t).Seconds()
			}
			return -1
		}))
	}
	if memo != nil {
		for source, n := range map[string]func(store.MemoStats) int64{
			"memory":   func(s store.MemoStats) int64 { return s.Hits },
			"database": func(s store.MemoStats) int64 { return s.Misses },
			"stale":    func(s store.MemoStats) int64 { return s.Bypassed },
		} {
			out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wpsidecar_serve_from_feed_reads_total",
				Help:        "Reads of serve-from-feed: answered from memory, read from the database (and kept), or read from the database because the feed was not current.",
				ConstLabels: prometheus.Labels{"source": source}}, func() float64 { return float64(n(memo.Stats())) }))
		}
	}
	return out
}

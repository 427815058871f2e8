package objcache

import "github.com/prometheus/client_golang/prometheus"

// Metrics count the object cache's deletion passes by result.
func (oc *Redis) Metrics() []prometheus.Collector {
	const name, help = "wpsidecar_object_cache_deletions_total", "Passes deleting stale object-cache keys after a write, by result (failed: PHP may serve old values)."
	pass := func(result string, pick func(done, failed uint64) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"result": result}},
			func() float64 { return float64(pick(oc.Passes())) })
	}
	return []prometheus.Collector{
		pass("ok", func(done, _ uint64) uint64 { return done }),
		pass("failed", func(_, failed uint64) uint64 { return failed }),
	}
}

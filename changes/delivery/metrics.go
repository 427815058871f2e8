package delivery

import "github.com/prometheus/client_golang/prometheus"

// PurgeMetrics count purge requests by CDN (several Varnishes add up) and
// result.
func PurgeMetrics(purgers []*Purger) []prometheus.Collector {
	const name, help = "wpsidecar_purges_total", "Purge requests sent to caches after changes, by CDN and result (failed: given up after retries)."
	byCDN := map[string][]*Purger{}
	var cdns []string
	for _, p := range purgers {
		if byCDN[p.Name()] == nil {
			cdns = append(cdns, p.Name())
		}
		byCDN[p.Name()] = append(byCDN[p.Name()], p)
	}
	var out []prometheus.Collector
	for _, cdn := range cdns {
		for _, failed := range []bool{false, true} {
			result := "ok"
			if failed {
				result = "failed"
			}
			out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help,
				ConstLabels: prometheus.Labels{"cdn": cdn, "result": result}},
				func() float64 {
					n := uint64(0)
					for _, p := range byCDN[cdn] {
						sent, gaveUp := p.Counts()
						if failed {
							n += gaveUp
						} else {
							n += sent
						}
					}
					return float64(n)
				}))
		}
	}
	return out
}

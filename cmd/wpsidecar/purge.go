package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/config"
)

// buildPurgers makes a purger for every cache configured.
func buildPurgers(c config.Purge, logger zerolog.Logger) []*changes.Purger {
	log := logger.With().Str("component", "purge").Logger()
	var out []*changes.Purger
	for _, u := range c.Varnish {
		out = append(out, changes.NewPurger(changes.Varnish{Base: u, Soft: c.VarnishSoft}, log))
	}
	for _, u := range c.Nginx {
		out = append(out, changes.NewPurger(changes.Nginx{Base: u}, log))
	}
	if c.CloudflareZone != "" {
		out = append(out, changes.NewPurger(changes.Cloudflare{API: c.CloudflareAPI, Zone: c.CloudflareZone, Token: c.CloudflareToken}, log))
	}
	if c.FastlyService != "" {
		out = append(out, changes.NewPurger(changes.Fastly{API: c.FastlyAPI, Service: c.FastlyService, Token: c.FastlyToken, Soft: c.FastlySoft}, log))
	}
	for _, p := range out {
		log.Info().Str("cdn", p.Name()).Msg("purging after each change")
	}
	return out
}

// purgeMetrics count purge requests by CDN (several Varnishes add up) and
// result.
func purgeMetrics(purgers []*changes.Purger) []prometheus.Collector {
	const name, help = "wpsidecar_purges_total", "Purge requests sent to caches after changes, by CDN and result (failed: given up after retries)."
	byCDN := map[string][]*changes.Purger{}
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

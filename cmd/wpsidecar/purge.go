package main

import (
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/changes/delivery"
	"github.com/wpsidecar/wpsidecar/config"
)

// buildPurgers makes a purger for every cache configured.
func buildPurgers(c config.Purge, logger zerolog.Logger) []*delivery.Purger {
	log := logger.With().Str("component", "purge").Logger()
	var out []*delivery.Purger
	for _, u := range c.Varnish {
		out = append(out, delivery.NewPurger(delivery.Varnish{Base: u, Soft: c.VarnishSoft}, log))
	}
	for _, u := range c.Nginx {
		out = append(out, delivery.NewPurger(delivery.Nginx{Base: u}, log))
	}
	if c.CloudflareZone != "" {
		out = append(out, delivery.NewPurger(delivery.Cloudflare{API: c.CloudflareAPI, Zone: c.CloudflareZone, Token: c.CloudflareToken}, log))
	}
	if c.FastlyService != "" {
		out = append(out, delivery.NewPurger(delivery.Fastly{API: c.FastlyAPI, Service: c.FastlyService, Token: c.FastlyToken, Soft: c.FastlySoft}, log))
	}
	for _, p := range out {
		log.Info().Str("cdn", p.Name()).Msg("purging after each change")
	}
	return out
}

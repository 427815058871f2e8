package main

import (
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

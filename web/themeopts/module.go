package themeopts

import (
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/module"
	"github.com/wpsidecar/wpsidecar/web/openapi"
)

// Configurations are where the theme options' module finds the
// configurations, each as in force now: Files (the server's and the
// commands', reloaded while running) or Fixed (one, for a description).
type Configurations interface {
	// Any tells whether there is a configuration at all: without one no
	// site serves theme options, and no option row is followed.
	Any() bool
	// Source is the configuration of a site (its place on a network; nil
	// on a single site, or for the network as a whole), from which its
	// handlers answer; nil: the site serves no theme options.
	Source(place *multisite.Site) Source
	// OptName is the option row site id keeps its options in ("": none).
	OptName(site int64) string
}

// configOf is what src holds now (nil: none).
func configOf(src Source) *themeoption.Config {
	if src == nil {
		return nil
	}
	return src.Current()
}

// Module is the theme options as the shared layers handle them: kept in
// an option row of each site, under the configurations c (nil: none). It
// is built once; what differs by site (the handlers, the history's
// capability) is built by Site for each.
func Module(c Configurations) module.Module {
	if c == nil {
		c = Fixed{}
	}
	// The main site's (or the network's) configuration, as the parts that
	// serve no one site see it: webhooks, purges, OpenAPI, the commands.
	main := func() *themeoption.Config { return configOf(c.Source(nil)) }
	m := module.Module{
		Unit:     themeoption.Unit{Config: main},
		Public:   new(themeoption.PublicSource()),
		Reverter: store.OptionArrayReverter{Namespace: wpsidecar.ThemeOptions, Diff: themeoption.Diff},
		API: func() openapi.NamespaceDoc {
			return openapi.NamespaceDoc{Name: "themeopts/v1", Routes: Routes(), Unit: themeoption.Unit{}, Schemas: themeoption.OpenAPISchemas(main())}
		},
		Part: func(view *store.DB, ms *multisite.Site) (exportdir.Part, error) {
			return Part{DB: view, Config: configOf(c.Source(ms))}, nil
		},
		Site: func(d module.SiteDeps) (module.Served, error) {
			src := c.Source(d.Site)
			if src == nil {
				// Its history's entries still ask the default capability.
				return module.Served{Unit: themeoption.Unit{}, Log: func(ev *zerolog.Event) *zerolog.Event { return ev.Bool("themeopts", false) }}, nil
			}
			s := NewService(d.Authn, d.DB, d.Settings, src, d.Log.With().Str("component", "themeopts").Logger())
			return module.Served{
				Handlers: s,
				Public:   s.Public,
				Unit:     themeoption.Unit{Config: src.Current},
				Log:      func(ev *zerolog.Event) *zerolog.Event { return ev.Bool("themeopts", true) },
			}, nil
		},
	}
	if c.Any() {
		m.OptionRow = &changes.OptionRow{Namespace: wpsidecar.ThemeOptions, Name: c.OptName, Diff: themeoption.Diff}
	}
	return m
}

// Fixed is one configuration for every site (nil: none), not reloaded:
// what the openapi command describes.
type Fixed struct{ Config *themeoption.Config }

func (f Fixed) Any() bool { return f.Config != nil }

func (f Fixed) Source(*multisite.Site) Source {
	if f.Config == nil {
		return nil
	}
	return f
}

// Current is the configuration, as a Source.
func (f Fixed) Current() *themeoption.Config { return f.Config }

func (f Fixed) OptName(int64) string {
	if f.Config == nil {
		return ""
	}
	return f.Config.OptName
}

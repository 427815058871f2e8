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

// Configs are where the theme options' module finds the configurations
// in force (they are reloaded while running); a nil field: none.
type Configs struct {
	// Current is the one in force of the site the module is built for
	// (its unit's capability; the main site's: what OpenAPI describes).
	Current func() *themeoption.Config
	// Of is a site's, as export and import see it.
	Of func(ms *multisite.Site) *themeoption.Config
	// OptName is the option row site keeps its options in ("": none);
	// nil when no site is served any.
	OptName func(site int64) string
	// Source is the file the site's handlers answer from; nil: the site
	// serves no theme options.
	Source Source
}

// Module is the theme options as the shared layers handle them: kept in
// an option row of each site, under the configurations c.
func Module(c Configs) module.Module {
	m := module.Module{
		Unit:     themeoption.Unit{Config: c.Current},
		Public:   new(themeoption.PublicSource()),
		Reverter: store.OptionArrayReverter{Namespace: wpsidecar.ThemeOptions, Diff: themeoption.Diff},
		API: func() openapi.NamespaceDoc {
			var opts *themeoption.Config
			if c.Current != nil {
				opts = c.Current()
			}
			return openapi.NamespaceDoc{Name: "themeopts/v1", Routes: Routes(), Unit: themeoption.Unit{}, Schemas: themeoption.OpenAPISchemas(opts)}
		},
		Part: func(view *store.DB, ms *multisite.Site) (exportdir.Part, error) {
			var opts *themeoption.Config
			if c.Of != nil {
				opts = c.Of(ms)
			}
			return Part{DB: view, Config: opts}, nil
		},
	}
	m.Site = func(d module.SiteDeps) (module.Served, error) {
		if c.Source == nil {
			return module.Served{Log: func(ev *zerolog.Event) *zerolog.Event { return ev.Bool("themeopts", false) }}, nil
		}
		s := NewService(d.Authn, d.DB, d.Settings, c.Source, d.Log.With().Str("component", "themeopts").Logger())
		return module.Served{
			Handlers: s,
			Public:   s.Public,
			Log:      func(ev *zerolog.Event) *zerolog.Event { return ev.Bool("themeopts", true) },
		}, nil
	}
	if c.OptName != nil {
		m.OptionRow = &changes.OptionRow{Namespace: wpsidecar.ThemeOptions, Name: c.OptName, Diff: themeoption.Diff}
	}
	return m
}

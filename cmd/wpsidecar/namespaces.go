package main

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/cli/command"
	"github.com/wpsidecar/wpsidecar/cli/exportdir"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/domain/themeopt"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/fieldmgr"
	"github.com/wpsidecar/wpsidecar/web/historyapi"
	"github.com/wpsidecar/wpsidecar/web/openapi"
	"github.com/wpsidecar/wpsidecar/web/site"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

// The namespaces, as each part that handles them all alike is handed
// them: the one place that names them besides their own packages (and
// site, which builds each site's handlers). A namespace added is a line
// in each list.

// units are the namespaces served, as the parts shared by all of them
// see them (the history, webhooks), under a theme options configuration
// in force (nil: none).
func units(themeopts func() *themeopt.Config) wpsidecar.Units {
	return wpsidecar.Units{fieldgroup.Unit{}, themeopt.Unit{Config: themeopts}}
}

// historyUnits are the namespaces as the store keeps their history: each
// unit with the store's writer-back of its entries.
func historyUnits() []store.HistoryUnit {
	return []store.HistoryUnit{
		{Unit: fieldgroup.Unit{}, Reverter: store.FieldGroupsReverter{}},
		{Unit: themeopt.Unit{}, Reverter: store.OptionArrayReverter{Namespace: wpsidecar.ThemeOptions, Diff: themeopt.Diff}},
	}
}

// api is what the OpenAPI description shows, under a theme options
// configuration (nil: none): each namespace with its route table, unit
// and schemas, then the sidecar's own (the history).
func api(opts *themeopt.Config) []openapi.Namespace {
	fgSchemas, fgParams := fieldgroup.OpenAPI()
	return []openapi.Namespace{
		{Name: "fieldmgr/v1", Routes: fieldmgr.Routes(), Unit: fieldgroup.Unit{}, Holds: "field groups", Schemas: fgSchemas, PathParams: fgParams},
		{Name: "themeopts/v1", Routes: themeopts.Routes(), Unit: themeopt.Unit{}, Holds: "theme options", Schemas: themeopt.OpenAPISchemas(opts)},
		{Name: "wpsidecar/v1", Routes: historyapi.Routes()},
	}
}

// tables are the namespaces kept in tables of their own, as change
// detection (the feed, the poller) follows them: the field groups'.
func tables(cfg *config.Config) []changes.Table {
	groups := groupsTable(cfg)
	return []changes.Table{{
		Namespace: wpsidecar.FieldGroups, Name: cfg.FieldmgrTable,
		Key: fieldgroup.KeyColumn, ID: fieldgroup.IDColumn, Value: fieldgroup.RowValue,
		Rows: func(db *store.DB) (changes.TableRows, error) { return db.FieldGroups(db.Table(groups)) },
	}}
}

// optionRows are the namespaces kept in an option row of each site, as
// change detection follows them: the theme options' (when served).
func optionRows(sites site.Index, themeopts bool) []changes.OptionRow {
	if !themeopts {
		return nil
	}
	return []changes.OptionRow{{Namespace: wpsidecar.ThemeOptions, Name: sites.OptName, Diff: themeopt.Diff}}
}

// kinds are the namespaces as export and import handle them: the theme
// options configurations opened once per command (as the server would
// serve them), then each site's kinds over its view of the database.
func kinds(cfg *config.Config) func() (command.KindsOf, error) {
	return func() (command.KindsOf, error) {
		topts, _, err := site.OpenThemeopts(themeoptsFiles(cfg), zerolog.Nop(), func(func(context.Context)) {})
		if err != nil {
			return nil, err
		}
		groups := groupsTable(cfg)
		return func(view *store.DB, ms *multisite.Site) ([]exportdir.Kind, error) {
			g, err := view.FieldGroups(view.Table(groups))
			if err != nil {
				return nil, err
			}
			var opts *themeopt.Config
			if f := topts.Of(ms); f != nil {
				opts = f.Current()
			}
			return []exportdir.Kind{exportdir.FieldGroups{Table: g}, exportdir.ThemeOptions{DB: view, Config: opts}}, nil
		}, nil
	}
}

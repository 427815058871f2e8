// Package module is a namespace as every layer that handles all of them
// alike is handed it: one value per namespace, provided by its handler
// package (fieldmgr.Module, themeopts.Module) and listed once (package
// cmd/namespaces), from which cmd derives what change detection, the
// store's history, OpenAPI, export and import are given, and from which
// site builds each site's handlers. It names no namespace.
package module

import (
	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/openapi"
)

// Module is one namespace served: what each shared layer needs of it.
type Module struct {
	// Unit is the namespace as the parts shared by all see it: the
	// history, webhooks, purges, the contract.
	Unit wpsidecar.Unit
	// Reverter writes its history entries back (store).
	Reverter store.Reverter
	// API is its OpenAPI namespace (route table, unit, schemas) under
	// the configuration in force when called.
	API func() openapi.NamespaceDoc
	// Table is the table of its own it is kept in, as change detection
	// follows it; nil when it is kept in an option row.
	Table *changes.Table
	// OptionRow is the option row of each site it is kept in, as change
	// detection follows it; nil when it is kept in a table, or not served.
	OptionRow *changes.OptionRow
	// Part is its part of an export directory, over a site's view of the
	// database (ms: the site's place on a network; nil on a single site).
	Part func(view *store.DB, ms *multisite.Site) (exportdir.Part, error)
	// Public is how the public routes file names it and reads what a
	// route shows of it; nil: no route shows it.
	Public *publicroute.Source
	// Site builds its handlers for one site (package site ranges over
	// the modules, naming none); nil where no site is served (commands).
	Site func(SiteDeps) (Served, error)
}

// Units are the modules' units, in their order.
func Units(mods []Module) wpsidecar.Units {
	u := make(wpsidecar.Units, 0, len(mods))
	for _, m := range mods {
		u = append(u, m.Unit)
	}
	return u
}

// HistoryUnits are the modules as the store keeps their history: each
// unit with its writer-back.
func HistoryUnits(mods []Module) []store.HistoryUnit {
	h := make([]store.HistoryUnit, 0, len(mods))
	for _, m := range mods {
		h = append(h, store.HistoryUnit{Unit: m.Unit, Reverter: m.Reverter})
	}
	return h
}

// PublicSources are the namespaces public routes may show.
func PublicSources(mods []Module) []publicroute.Source {
	var k []publicroute.Source
	for _, m := range mods {
		if m.Public != nil {
			k = append(k, *m.Public)
		}
	}
	return k
}

// API are the modules' OpenAPI namespaces, in their order.
func API(mods []Module) []openapi.NamespaceDoc {
	a := make([]openapi.NamespaceDoc, 0, len(mods))
	for _, m := range mods {
		a = append(a, m.API())
	}
	return a
}

// Tables are the tables change detection follows.
func Tables(mods []Module) []changes.Table {
	var t []changes.Table
	for _, m := range mods {
		if m.Table != nil {
			t = append(t, *m.Table)
		}
	}
	return t
}

// OptionRows are the option rows change detection follows.
func OptionRows(mods []Module) []changes.OptionRow {
	var r []changes.OptionRow
	for _, m := range mods {
		if m.OptionRow != nil {
			r = append(r, *m.OptionRow)
		}
	}
	return r
}

// Parts are a site's namespaces as export and import handle them, over
// view, the site's view of the database.
func Parts(mods []Module) func(view *store.DB, ms *multisite.Site) ([]exportdir.Part, error) {
	return func(view *store.DB, ms *multisite.Site) ([]exportdir.Part, error) {
		parts := make([]exportdir.Part, 0, len(mods))
		for _, m := range mods {
			p, err := m.Part(view, ms)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		}
		return parts, nil
	}
}

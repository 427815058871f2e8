package fieldmgr

import (
	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/module"
	"github.com/wpsidecar/wpsidecar/web/openapi"
)

// Module is the field groups as the shared layers handle them, kept in
// table (site 1's, with the table prefix); groups is its name after the
// prefix, which each site's view of the database prefixes (and each
// site's handlers are built over).
func Module(table, groups string) module.Module {
	return module.Module{
		Unit:     fieldgroup.Unit{},
		Public:   new(fieldgroup.PublicSource()),
		Reverter: fieldgrouptable.Reverter{},
		API: func() openapi.NamespaceDoc {
			schemas, params := fieldgroup.OpenAPI()
			return openapi.NamespaceDoc{Name: "fieldmgr/v1", Routes: Routes(), Unit: fieldgroup.Unit{}, Schemas: schemas, PathParams: params}
		},
		Table: &changes.Table{
			Namespace: wpsidecar.FieldGroups, Name: table,
			Key: fieldgroup.KeyColumn, ID: fieldgroup.IDColumn, Value: fieldgroup.RowValue,
			Rows: func(db *store.DB) (changes.TableRows, error) { return fieldgrouptable.Open(db, db.Table(groups)) },
		},
		Part: func(view *store.DB, _ *multisite.Site) (exportdir.Part, error) {
			g, err := fieldgrouptable.Open(view, view.Table(groups))
			if err != nil {
				return nil, err
			}
			return Part{Table: g}, nil
		},
		Site: func(d module.SiteDeps) (module.Served, error) {
			g, err := fieldgrouptable.Open(d.DB, d.DB.Table(groups))
			if err != nil {
				return module.Served{}, err
			}
			f := New(d.Authn, g, d.Settings, d.Log.With().Str("component", "fieldmgr").Logger())
			return module.Served{
				Handlers: f,
				Public:   f.Public,
				Log:      func(ev *zerolog.Event) *zerolog.Event { return ev.Str("fieldmgr_table", g.Table()) },
			}, nil
		},
	}
}

package fieldmgr

import (
	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/cli/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/module"
	"github.com/wpsidecar/wpsidecar/web/openapi"
)

// Module is the field groups as the shared layers handle them, kept in
// table (site 1's, with the table prefix); groups is its name after the
// prefix, which each site's view of the database prefixes.
func Module(table, groups string) module.Module {
	return module.Module{
		Unit:     fieldgroup.Unit{},
		Reverter: store.FieldGroupsReverter{},
		API: func() openapi.Namespace {
			schemas, params := fieldgroup.OpenAPI()
			return openapi.Namespace{Name: "fieldmgr/v1", Routes: Routes(), Unit: fieldgroup.Unit{}, Holds: "field groups", Schemas: schemas, PathParams: params}
		},
		Table: &changes.Table{
			Namespace: wpsidecar.FieldGroups, Name: table,
			Key: fieldgroup.KeyColumn, ID: fieldgroup.IDColumn, Value: fieldgroup.RowValue,
			Rows: func(db *store.DB) (changes.TableRows, error) { return db.FieldGroups(db.Table(groups)) },
		},
		Kind: func(view *store.DB, _ *multisite.Site) (exportdir.Kind, error) {
			g, err := view.FieldGroups(view.Table(groups))
			if err != nil {
				return nil, err
			}
			return exportdir.FieldGroups{Table: g}, nil
		},
	}
}

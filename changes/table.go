package changes

import (
	"context"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/store"
)

// Table describes a namespace kept in a table of its own, one row an
// item (the field groups'; any namespace shaped alike), as both detectors
// follow it: cmd lists them, and neither detector names a namespace.
type Table struct {
	Namespace wpsidecar.Namespace
	// Name is site 1's table, with the table prefix; on a network, site
	// N's is {base}{N}_{the rest of Name}.
	Name string
	// Key is the column of an item's key; ID the table's primary key, an
	// integer (the row the feed waits to see committed).
	Key, ID string
	// Value is what the history keeps of a row, given its columns by
	// name as the binary log has them (a column that is not text: "").
	Value func(row map[string]string) string
	// Rows are the table of the site db reads (a site's view on a
	// network), as the poller reads it.
	Rows func(db *store.DB) (TableRows, error)
}

// TableRows are one site's table of a namespace, read cheaply enough to
// compare every poll: every row's version, then the values of the rows
// whose version moved.
type TableRows interface {
	// Table is the table's name, the site's prefix included: a commit's
	// Object.
	Table() string
	// Versions are every row's version, by key: a string that changes
	// whenever the row does.
	Versions(ctx context.Context) (map[string]string, error)
	// Values are the rows of keys, by key, as the history keeps them (a
	// key without a row is absent).
	Values(ctx context.Context, keys []string) (map[string]string, error)
}

// item is a row's change between two images (nil: no row), its values as
// t's namespace keeps them.
func (t Table) item(key string, before, after map[string]string) wpsidecar.Item {
	return wpsidecar.Item{Key: key, Before: t.value(before), After: t.value(after)}
}

func (t Table) value(row map[string]string) *string {
	if row == nil {
		return nil
	}
	v := t.Value(row)
	return &v
}

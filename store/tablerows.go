package store

import "context"

// Values are the groups of keys, by key, as the history keeps them
// (fieldgroup.Value's JSON): what a poller compares, as
// changes.TableRows.
func (f *FieldGroups) Values(ctx context.Context, keys []string) (map[string]string, error) {
	rows, err := f.Rows(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for k, g := range rows {
		out[k] = g.Value().JSON()
	}
	return out, nil
}

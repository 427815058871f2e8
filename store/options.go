package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/wpsidecar/wpsidecar"
)

// Option reads one row of {prefix}options as WordPress's get_option() sees
// it before unserializing: the name is trimmed, an empty or missing name is
// wpsidecar.ErrNotFound, and siteurl, home, category_base and tag_base lose their
// trailing slashes. An empty home falls back to siteurl, as in get_option().
func (db *DB) Option(ctx context.Context, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", wpsidecar.ErrNotFound
	}
	var v string
	err := db.sql.QueryRowContext(ctx,
		"SELECT option_value FROM "+db.Table("options")+" WHERE option_name = ? LIMIT 1", name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", wpsidecar.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("store: option %q: %w", name, classify(err))
	}
	if name == "home" && v == "" {
		return db.Option(ctx, "siteurl")
	}
	return optionFilter(name, v), nil
}

// Options reads several options in one query; missing names are absent from
// the result.
func (db *DB) Options(ctx context.Context, names ...string) (map[string]string, error) {
	if len(names) == 0 {
		return map[string]string{}, nil
	}
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	q := "SELECT option_name, option_value FROM " + db.Table("options") +
		" WHERE option_name IN (?" + strings.Repeat(",?", len(names)-1) + ")"
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: options: %w", classify(err))
	}
	out, err := pairs(rows, "options")
	if err != nil {
		return nil, err
	}
	for n, v := range out {
		out[n] = optionFilter(n, v)
	}
	if h, ok := out["home"]; ok && h == "" {
		if s, ok := out["siteurl"]; ok {
			out["home"] = s
		}
	}
	return out, nil
}

func optionFilter(name, v string) string {
	switch name {
	case "siteurl", "home", "category_base", "tag_base":
		return strings.TrimRight(v, `/\`)
	}
	return v
}

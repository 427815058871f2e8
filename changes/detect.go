// Package changes notices changes to the namespaces' own tables (the
// field groups', and any a Table describes) and the theme options row,
// whoever made them (PHP, another sidecar replica, this one), by
// following the binary log or by polling cheap version signals, and
// hands each as one event, a wpsidecar.Commit, to its subscribers: the
// memo, the settings, the history, signed webhooks and CDN purges
// (commit.go says what a commit does).
package changes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/themeopt"
	"github.com/wpsidecar/wpsidecar/store"
)

// Detector compares, every interval, what one site stores with what it
// saw last, and tells its subscriber a Commit for each namespace that
// changed, item by item as the binlog feed would (with no origin: polls
// have no name for a transaction). The first look only takes the
// baseline.
type Detector struct {
	site    int64 // the blog id on a network; 0 on a single site
	db      *store.DB
	tables  []polledTable
	optName func() string // the theme options row; "" when not served
	sub     Subscriber
	log     zerolog.Logger

	optSeen string // the row's name when optRaw was taken
	optRaw  string // the row as it was then
	optBase bool
}

// polledTable is one namespace's table of the site, and its rows as last
// seen.
type polledTable struct {
	Table
	rows TableRows          // nil until the first look
	seen map[string]seenRow // by key; nil before the baseline
}

// seenRow is a row as last seen: its version, and its value.
type seenRow struct{ version, value string }

// NewDetector returns the detector of site (0 on a single site) over db,
// its view of the database, looking at each of tables (read through
// their Rows) and at the theme options row optName names (nil: none).
func NewDetector(site int64, db *store.DB, tables []Table, optName func() string, sub Subscriber, log zerolog.Logger) *Detector {
	d := &Detector{site: site, db: db, optName: optName, sub: sub, log: log}
	for _, t := range tables {
		d.tables = append(d.tables, polledTable{Table: t})
	}
	return d
}

// Run polls every interval until ctx ends (see Every).
func (d *Detector) Run(ctx context.Context, interval time.Duration) {
	Every(ctx, interval, d.log, d.Poll)
}

// Every is change detection by polling: poll every interval until ctx
// ends. A failed poll (database down) is logged once and retried at the
// next tick; nothing is lost, since the next successful poll compares with
// the last state seen. It is the one polling loop, a single site's or a
// network's (whose poll looks at each site).
func Every(ctx context.Context, interval time.Duration, log zerolog.Logger, poll func(context.Context) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		err := poll(ctx)
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			log.Warn().Err(err).Msg("change detection: cannot read; retrying every interval")
			failing = true
		case err == nil && failing:
			log.Info().Msg("change detection: reading again")
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Poll looks once and reports what changed since the last look.
func (d *Detector) Poll(ctx context.Context) error {
	var errs []error
	for i := range d.tables {
		errs = append(errs, d.pollTable(ctx, &d.tables[i]))
	}
	if d.optName != nil {
		errs = append(errs, d.pollOptions(ctx))
	}
	return errors.Join(errs...)
}

// pollTable reads every row's version of t, and the values of those whose
// version changed: what they were is what was seen last. Versions are
// read first, so that a write between the two reads is reported again at
// the next look rather than missed.
func (d *Detector) pollTable(ctx context.Context, t *polledTable) error {
	if t.rows == nil {
		rows, err := t.Rows(d.db)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Namespace, err)
		}
		t.rows = rows
	}
	versions, err := t.rows.Versions(ctx)
	if err != nil {
		return err
	}
	var changed []string
	for k, v := range versions {
		if old, ok := t.seen[k]; !ok || old.version != v {
			changed = append(changed, k)
		}
	}
	values, err := t.rows.Values(ctx, changed)
	if err != nil {
		return err
	}
	now := make(map[string]seenRow, len(versions))
	for k, v := range versions {
		if value, ok := values[k]; ok {
			now[k] = seenRow{v, value}
		} else if old, ok := t.seen[k]; ok && old.version == v {
			now[k] = old
		}
		// else: gone between the two reads; a removal at the next look.
	}
	if t.seen != nil {
		var items []wpsidecar.Item
		for k, row := range now {
			if old, had := t.seen[k]; !had {
				items = append(items, wpsidecar.Item{Key: k, After: &row.value})
			} else if old.version != row.version {
				items = append(items, wpsidecar.Item{Key: k, Before: &old.value, After: &row.value})
			}
		}
		for k, old := range t.seen {
			if _, ok := now[k]; !ok {
				items = append(items, wpsidecar.Item{Key: k, Before: &old.value})
			}
		}
		if len(items) > 0 {
			slices.SortFunc(items, func(a, b wpsidecar.Item) int { return strings.Compare(a.Key, b.Key) })
			d.report(wpsidecar.Commit{Namespace: t.Namespace, Object: t.rows.Table(), Items: items})
		}
	}
	t.seen = now
	return nil
}

func (d *Detector) pollOptions(ctx context.Context) error {
	name := d.optName()
	raw, err := d.db.RawOption(ctx, name)
	if err != nil && !errors.Is(err, wpsidecar.ErrNotFound) {
		return err
	}
	if d.optBase && d.optSeen == name {
		if items := themeopt.Diff(d.optRaw, raw); len(items) > 0 {
			d.report(wpsidecar.Commit{Namespace: wpsidecar.ThemeOptions, Object: name, Items: items})
		}
	}
	d.optSeen, d.optRaw, d.optBase = name, raw, true
	return nil
}

func (d *Detector) report(c wpsidecar.Commit) {
	c.Site, c.When, c.Author = d.site, time.Now(), wpsidecar.Author{Via: wpsidecar.ViaPoll}
	d.log.Info().Str("namespace", string(c.Namespace)).Strs("keys", keys(c)).Msg("stored data changed")
	d.sub.Commit(c)
}

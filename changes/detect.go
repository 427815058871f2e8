// Package changes notices changes to the namespaces' own tables (any a
// Table describes) and option rows (any an OptionRow describes), whoever
// made them (PHP, another sidecar replica, this one), by
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
	options []polledOption
	sub     Subscriber
	log     zerolog.Logger
}

// polledOption is one namespace's option row of the site, as last seen.
type polledOption struct {
	OptionRow
	name string // the row's name when raw was taken
	raw  string // the row as it was then
	base bool   // raw was taken
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
// their Rows) and at each of options (the row each names for site).
func NewDetector(site int64, db *store.DB, tables []Table, options []OptionRow, sub Subscriber, log zerolog.Logger) *Detector {
	d := &Detector{site: site, db: db, sub: sub, log: log}
	for _, t := range tables {
		d.tables = append(d.tables, polledTable{Table: t})
	}
	for _, o := range options {
		d.options = append(d.options, polledOption{OptionRow: o})
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
	for i := range d.options {
		errs = append(errs, d.pollOption(ctx, &d.options[i]))
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

// pollOption reads o's row and reports its items that changed since the
// last look; a row renamed since (a new configuration) is a new baseline.
func (d *Detector) pollOption(ctx context.Context, o *polledOption) error {
	name := o.Name(d.site)
	if name == "" {
		o.name, o.raw, o.base = "", "", false
		return nil
	}
	raw, err := d.db.RawOption(ctx, name)
	if err != nil && !errors.Is(err, wpsidecar.ErrNotFound) {
		return err
	}
	if o.base && o.name == name {
		if items := o.Diff(o.raw, raw); len(items) > 0 {
			d.report(wpsidecar.Commit{Namespace: o.Namespace, Object: name, Items: items})
		}
	}
	o.name, o.raw, o.base = name, raw, true
	return nil
}

func (d *Detector) report(c wpsidecar.Commit) {
	c.BlogID, c.When, c.Author = d.site, time.Now(), wpsidecar.Author{Via: wpsidecar.ViaPoll}
	d.log.Info().Str("namespace", string(c.Namespace)).Strs("keys", c.DistinctKeys()).Msg("stored data changed")
	d.sub.Commit(c)
}

package store

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/wpsidecar/wpsidecar/domain/multisite"
)

// NetworkWatcher keeps a network's site map (multisite.Map) as fresh as
// the settings snapshot: read every interval, and at once when asked
// (Refresh, e.g. by the change feed when wp_blogs or wp_site change). A
// failed read keeps the last map: sites are added and removed rarely, and
// a request is better routed by a map a few seconds old than refused.
type NetworkWatcher struct {
	db      *DB
	consts  multisite.Constants
	every   time.Duration
	current atomic.Pointer[multisite.Map]
}

// NewNetworkWatcher has read nothing yet.
func NewNetworkWatcher(db *DB, consts multisite.Constants, every time.Duration) *NetworkWatcher {
	return &NetworkWatcher{db: db, consts: consts, every: every}
}

// Current is the last map read; ErrUnavailable before the first.
func (w *NetworkWatcher) Current() (*multisite.Map, error) {
	if m := w.current.Load(); m != nil {
		return m, nil
	}
	return nil, fmt.Errorf("%w: the network's sites not read yet", ErrUnavailable)
}

// Refresh reads the map once.
func (w *NetworkWatcher) Refresh(ctx context.Context) error {
	m, err := w.db.LoadNetwork(ctx, w.consts)
	if err != nil {
		return classify(err)
	}
	w.current.Store(m)
	return nil
}

// Run refreshes until ctx ends: every interval, or every 250 ms while no
// map was ever read.
func (w *NetworkWatcher) Run(ctx context.Context) {
	for {
		err := w.Refresh(ctx)
		if ctx.Err() != nil {
			return
		}
		next := w.every
		if err != nil {
			w.db.log.Warn().Err(err).Msg("the network's sites could not be read; the last map stays in use")
			if w.current.Load() == nil {
				next = 250 * time.Millisecond
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(next):
		}
	}
}

// NetworkSites counts the sites of {base}blogs: 0 when the table does not
// exist (a single site).
func (db *DB) NetworkSites(ctx context.Context) (int64, error) {
	var n int64
	err := db.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+db.base+"blogs").Scan(&n)
	if missingTable(err) {
		return 0, nil
	}
	return n, classify(err)
}

// LoadNetwork reads the networks and sites of the base prefix's tables
// ({base}site and {base}blogs) into a site map with the network's
// constants c.
func (db *DB) LoadNetwork(ctx context.Context, c multisite.Constants) (*multisite.Map, error) {
	m := &multisite.Map{Const: c}
	rows, err := db.sql.QueryContext(ctx, "SELECT id, domain, path FROM "+db.base+"site ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("multisite: networks: %w", err)
	}
	for rows.Next() {
		var n multisite.Network
		if err := rows.Scan(&n.ID, &n.Domain, &n.Path); err != nil {
			rows.Close()
			return nil, fmt.Errorf("multisite: networks: %w", err)
		}
		m.Networks = append(m.Networks, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("multisite: networks: %w", err)
	}
	rows, err = db.sql.QueryContext(ctx, "SELECT blog_id, site_id, domain, path, archived, spam, deleted FROM "+db.base+"blogs ORDER BY blog_id")
	if err != nil {
		return nil, fmt.Errorf("multisite: sites: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s multisite.Site
		var archived, spam int
		if err := rows.Scan(&s.ID, &s.NetworkID, &s.Domain, &s.Path, &archived, &spam, &s.Deleted); err != nil {
			return nil, fmt.Errorf("multisite: sites: %w", err)
		}
		s.Archived, s.Spam = archived == 1, spam == 1
		m.Sites = append(m.Sites, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("multisite: sites: %w", err)
	}
	m.Index()
	return m, nil
}

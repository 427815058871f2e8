package store

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/wpsidecar/wpsidecar/multisite"
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
	m, err := multisite.Load(ctx, w.db.sql, w.db.base, w.consts)
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

package changes

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/store"
)

// Refresher reads again what a transaction made stale outside the memo:
// a site's settings snapshot, when one of the options it is read from was
// written, and a network's map of sites, when its tables were. The feed's
// goroutine only asks (Touched), never waiting on the database: the reads
// run on Run's goroutine, one after the other, and what is asked while
// they run is read once more after them (asks coalesce).
//
// Idle tells whether everything asked has been read: serve-from-feed
// answers from memory only then, so that a reader who finds the feed
// current finds the settings read again too, as when the feed read them
// on its own goroutine.
type Refresher struct {
	// Settings is site's settings snapshot (0 on a single site, 1 the
	// main site of a network); nil when its services are not built (they
	// read them when first built).
	Settings func(site int64) *store.SettingsWatcher
	// Network is the network's map of sites; nil on a single site.
	Network *store.NetworkWatcher
	// Timeout bounds each read (default 5 s).
	Timeout time.Duration
	Log     zerolog.Logger

	mu      sync.Mutex
	sites   map[int64]bool
	network bool
	wake    chan struct{}
	// asked counts asks; read is asked as of the last batch read: idle
	// when they are equal.
	asked, read atomic.Int64
}

func (r *Refresher) init() {
	if r.wake == nil {
		r.wake = make(chan struct{}, 1)
		r.sites = map[int64]bool{}
	}
}

// Touched asks for what t made stale to be read again.
func (r *Refresher) Touched(t wpsidecar.Touched) {
	var sites []int64
	if r.Settings != nil {
		for id, names := range t.Options {
			if w := r.Settings(id); w != nil && slices.ContainsFunc(names, func(n string) bool { return slices.Contains(w.Options(), n) }) {
				sites = append(sites, id)
			}
		}
	}
	network := (t.Network || t.Missed) && r.Network != nil
	if len(sites) == 0 && !network {
		return
	}
	r.mu.Lock()
	r.init()
	for _, id := range sites {
		r.sites[id] = true
	}
	r.network = r.network || network
	r.asked.Add(1)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// Commit is nothing to read again.
func (r *Refresher) Commit(wpsidecar.Commit) {}

// Idle: nothing asked is still to be read.
func (r *Refresher) Idle() bool { return r.asked.Load() == r.read.Load() }

// Run reads what is asked until ctx ends.
func (r *Refresher) Run(ctx context.Context) {
	r.mu.Lock()
	r.init()
	wake := r.wake
	r.mu.Unlock()
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		r.mu.Lock()
		sites, network, asked := r.sites, r.network, r.asked.Load()
		r.sites, r.network = map[int64]bool{}, false
		r.mu.Unlock()
		if network {
			rctx, cancel := context.WithTimeout(ctx, timeout)
			if err := r.Network.Refresh(rctx); err != nil {
				r.Log.Warn().Err(err).Msg("the network's sites changed; re-reading them failed (the next refresh tries again)")
			}
			cancel()
		}
		for _, id := range slices.Sorted(maps.Keys(sites)) {
			w := r.Settings(id)
			if w == nil {
				continue // let go meanwhile
			}
			rctx, cancel := context.WithTimeout(ctx, timeout)
			if err := w.Refresh(rctx); err != nil {
				r.Log.Warn().Err(err).Int64("blog_id", id).Msg("site settings changed; re-reading them failed (the next refresh tries again)")
			}
			cancel()
		}
		r.read.Store(asked)
	}
}

package changes

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/store"
)

// Poller looks once at every site's tables and option rows and
// reports what changed since its last look: a single site's Detector,
// or one for each site of a network's map. What it saw is kept from one
// run of polling to the next, so that a look taken once the feed's
// position is read reports what committed before it (Auto).
type Poller struct {
	single    *Detector
	sites     *store.NetworkWatcher
	db        *store.DB
	tables    []Table
	options   []OptionRow
	sub       Subscriber
	log       zerolog.Logger
	detectors map[int64]*Detector
}

// NewPoller is the poller of a single site (sites nil) or of a network's
// sites, over db, looking at each of tables and options.
func NewPoller(sites *store.NetworkWatcher, db *store.DB, tables []Table, options []OptionRow, sub Subscriber, log zerolog.Logger) *Poller {
	p := &Poller{sites: sites, db: db, tables: tables, options: options, sub: sub, log: log, detectors: map[int64]*Detector{}}
	if sites == nil {
		p.single = NewDetector(0, db, tables, options, sub, log)
	}
	return p
}

// Run polls every interval until ctx ends.
func (p *Poller) Run(ctx context.Context, interval time.Duration) {
	Every(ctx, interval, p.log, p.Poll)
}

// Poll is one look (a network's map not read yet: nothing to compare).
func (p *Poller) Poll(ctx context.Context) error {
	if p.single != nil {
		return p.single.Poll(ctx)
	}
	m, err := p.sites.Current()
	if err != nil {
		return nil
	}
	var errs []error
	seen := map[int64]bool{}
	for _, ms := range m.Sites {
		seen[ms.ID] = true
		d := p.detectors[ms.ID]
		if d == nil {
			d = NewDetector(ms.ID, p.db.ForSite(ms.ID), p.tables, p.options, p.sub, p.log.With().Int64("blog_id", ms.ID).Logger())
			p.detectors[ms.ID] = d
		}
		errs = append(errs, d.Poll(ctx))
	}
	for id := range p.detectors {
		if !seen[id] {
			delete(p.detectors, id) // a site gone from the network
		}
	}
	return errors.Join(errs...)
}

// RecheckEvery is how often change-feed auto, polling every interval,
// asks the server whether it can feed the sidecar again: thirty
// intervals, at most a minute (a check is a few cheap statements).
func RecheckEvery(interval time.Duration) time.Duration {
	return min(time.Minute, 30*interval)
}

// Auto is change-feed auto: the feed is followed while the server can
// feed it; otherwise the sidecar polls, and asks the server again every
// Recheck (0: never, change-feed binlog's polling for good after a
// fall-back).
type Auto struct {
	Feed *Feed
	// Poller, when not nil, polls every Interval while the feed cannot
	// follow, and looks once more before it follows again.
	Poller *Poller
	// Forget, when set, is called before the feed may be current again;
	// the feed's subscriber is then told every write may have been
	// missed (Touched.Missed): memory, the settings and CDNs forget.
	Forget func()
	// Mode is told the detection in force, and why not the feed.
	Mode              func(mode string, why error)
	Recheck, Interval time.Duration // Interval: between looks
	Timeout           time.Duration // of a check
	Log               zerolog.Logger
}

// Run follows the feed, or polls when it cannot (why, the feed's last
// Check's problem, not nil), until ctx ends.
func (a Auto) Run(ctx context.Context, why error) {
	if why == nil && a.Poller != nil {
		// The poller's first look is its baseline and reports nothing:
		// taken now, the first look after a fall-back, however soon,
		// reports what changed since (what the feed reported too, again:
		// nothing is lost).
		if err := a.Poller.Poll(ctx); err != nil {
			a.Log.Warn().Err(err).Msg("change-feed auto: the poller's first look failed; a fall-back's first look is its baseline")
		}
	}
	for ctx.Err() == nil {
		if why != nil && !a.await(ctx, why) {
			return
		}
		a.Mode(ModeBinlog, nil)
		a.Feed.Run(ctx, func(context.Context) {})
		why = a.Feed.Err()
	}
}

// poll polls until ctx ends (with no Poller, there is nothing to poll
// for).
func (a Auto) poll(ctx context.Context) {
	if a.Poller != nil {
		a.Poller.Run(ctx, a.Interval)
	}
}

// await polls until the server can feed the sidecar again, asking it
// every Recheck; false when ctx ended first. Nothing is missed in the
// switch: the feed's Check reads the server's position first, then the
// poller looks once more (what committed before the position), and the
// feed follows from the position. Memory is forgotten before the feed
// can be current again: it heard nothing while it was stopped.
func (a Auto) await(ctx context.Context, why error) bool {
	a.Mode(ModePoll, why)
	if a.Recheck <= 0 {
		a.poll(ctx)
		return false
	}
	pctx, stop := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() { defer close(polled); a.poll(pctx) }()
	defer func() { stop(); <-polled }()
	t := time.NewTicker(a.Recheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, a.Timeout)
		err := a.Feed.Check(cctx)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() == nil && err.Error() != why.Error() {
			a.Log.Warn().Err(err).Dur("recheck_every", a.Recheck).Msg("change-feed auto: the server still cannot feed the sidecar; polling")
			why = err
			a.Mode(ModePoll, why)
		}
	}
	stop()
	<-polled
	for a.Poller != nil {
		err := a.Poller.Poll(ctx)
		if err == nil || ctx.Err() != nil {
			break
		}
		a.Log.Warn().Err(err).Msg("change-feed auto: the last look before following the binary log failed; looking again")
		select {
		case <-ctx.Done():
		case <-time.After(a.Interval):
		}
	}
	if ctx.Err() != nil {
		return false
	}
	if a.Forget != nil {
		a.Forget()
	}
	if a.Feed.o.Subscriber != nil {
		a.Feed.o.Subscriber.Touched(wpsidecar.Touched{Missed: true}) // CDNs forget too
	}
	a.Log.Info().Msg("change-feed auto: the server can feed the sidecar again; following its binary log from its current position")
	return true
}

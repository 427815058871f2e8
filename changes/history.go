package changes

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/store"
)

// Recorder subscribes to commits and records in each site's history the
// changes others committed, as the binlog feed saw them, through the
// history's one recorder (store.History.Record; the sidecar's own writes
// are recorded by it in their transactions). Commit only queues (the
// feed goes on at once); Run writes the queue until ctx ends. A full
// queue (the database slower than the changes) loses entries, logged.
type Recorder struct {
	db      *store.DB
	timeout time.Duration
	log     zerolog.Logger
	queue   chan wpsidecar.Commit
}

// NewRecorder records in the histories of db's sites; timeout bounds each
// write.
func NewRecorder(db *store.DB, timeout time.Duration, log zerolog.Logger) *Recorder {
	return &Recorder{db: db, timeout: timeout, log: log, queue: make(chan wpsidecar.Commit, 1024)}
}

// Touched is nothing to record.
func (r *Recorder) Touched(wpsidecar.Touched) {}

// Commit queues c when it is another writer's change named in the log:
// a polled change has no name every instance agrees on (each would
// record it), and the sidecar's own writes are recorded already.
func (r *Recorder) Commit(c wpsidecar.Commit) {
	if c.Origin == "" || c.Author.Login != wpsidecar.LoginPHP {
		return
	}
	select {
	case r.queue <- c:
	default:
		r.log.Error().Int64("blog_id", c.BlogID).Str("origin", c.Origin).Msg("history: too many changes waiting; this one is not recorded")
	}
}

// Run writes what Commit queued until ctx ends.
func (r *Recorder) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-r.queue:
			view := r.db
			if c.BlogID > 0 {
				view = r.db.ForSite(c.BlogID)
			}
			wctx, cancel := context.WithTimeout(ctx, r.timeout)
			err := view.History().Record(wctx, c)
			cancel()
			if err != nil {
				r.log.Error().Err(err).Int64("blog_id", c.BlogID).Str("origin", c.Origin).Msg("history: recording a change seen in the binlog failed")
			}
		}
	}
}

// PruneHistory keeps every site's history (db's, or on a network each
// site's of siteMap) within maxAge and maxCount, every interval while
// leading tells this instance leads.
func PruneHistory(ctx context.Context, db *store.DB, siteMap *store.NetworkWatcher, maxAge time.Duration, maxCount int, every time.Duration, leading func() bool, log zerolog.Logger) {
	prune := func() {
		if !leading() {
			return
		}
		views := []*store.DB{db}
		if siteMap != nil {
			if m, err := siteMap.Current(); err == nil {
				views = views[:0]
				for _, s := range m.Sites {
					views = append(views, db.ForSite(s.ID))
				}
			}
		}
		for _, v := range views {
			n, err := v.History().Prune(ctx, maxAge, maxCount)
			if err != nil {
				log.Warn().Err(err).Str("table", v.History().Table()).Msg("history: pruning failed (tried again later)")
			} else if n > 0 {
				log.Info().Int64("deleted", n).Str("table", v.History().Table()).Msg("history pruned")
			}
		}
	}
	Every(ctx, every, log, func(ctx context.Context) error { prune(); return nil })
}

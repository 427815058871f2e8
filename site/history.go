package site

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/store"
)

// seen is a change another writer committed, for the history.
type seen struct {
	site   int64
	origin string
	c      changes.HistoryChange
}

// HistoryRecorder records in each site's history what the binlog feed saw
// others change: record is the feed's History hook, which only queues (the
// feed goes on at once); run writes the queue until ctx ends. A full queue
// (the database slower than the changes) loses entries, logged.
type HistoryRecorder struct {
	cfg   *config.Config
	db    *store.DB
	log   zerolog.Logger
	queue chan seen
}

// NewHistoryRecorder returns the recorder of db's sites.
func NewHistoryRecorder(cfg *config.Config, db *store.DB, log zerolog.Logger) *HistoryRecorder {
	return &HistoryRecorder{cfg: cfg, db: db, log: log, queue: make(chan seen, 1024)}
}

// Record queues what one transaction changed of site id.
func (r *HistoryRecorder) Record(id int64, origin string, c changes.HistoryChange) {
	select {
	case r.queue <- seen{id, origin, c}:
	default:
		r.log.Error().Int64("blog_id", id).Str("origin", origin).Msg("history: too many changes waiting; this one is not recorded")
	}
}

// Run writes what Record queued until ctx ends.
func (r *HistoryRecorder) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-r.queue:
			view := r.db
			if s.site > 0 {
				view = r.db.ForSite(s.site)
			}
			h := view.History()
			wctx, cancel := context.WithTimeout(ctx, r.cfg.DB.Timeout)
			var err error
			if len(s.c.Groups) > 0 {
				err = h.RecordSeen(wctx, s.origin+"/g", s.c.When, store.HistoryFieldmgr, siteTable(r.cfg, view), s.c.Groups)
			}
			if err == nil && len(s.c.Options) > 0 {
				err = h.RecordSeen(wctx, s.origin+"/o", s.c.When, store.HistoryThemeopts, s.c.OptName, s.c.Options)
			}
			cancel()
			if err != nil {
				r.log.Error().Err(err).Int64("blog_id", s.site).Str("origin", s.origin).Msg("history: recording a change seen in the binlog failed")
			}
		}
	}
}

// PruneHistory keeps every site's history within the configured bounds,
// every interval while leading tells this instance leads.
func PruneHistory(ctx context.Context, cfg *config.Config, db *store.DB, siteMap *store.NetworkWatcher, every time.Duration, leading func() bool, log zerolog.Logger) {
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
			n, err := v.History().Prune(ctx, cfg.History.MaxAge, cfg.History.MaxCount)
			if err != nil {
				log.Warn().Err(err).Str("table", v.History().Table()).Msg("history: pruning failed (tried again later)")
			} else if n > 0 {
				log.Info().Int64("deleted", n).Str("table", v.History().Table()).Msg("history pruned")
			}
		}
	}
	changes.Every(ctx, every, log, func(ctx context.Context) error { prune(); return nil })
}

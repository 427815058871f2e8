package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/site"
	"github.com/wpsidecar/wpsidecar/store"
)

// changeFeed is the binlog feed when --change-feed binlog and the server
// can feed it; nil (polling) otherwise, with the reason logged. It follows
// every site's tables: a site's theme options row (when themeopts), its
// settings (refreshed when one changes, for the sites served). memo, when
// not nil, forgets what each committed transaction wrote; siteMap, when
// not nil, is read again when a network's sites change.
func changeFeed(ctx context.Context, cfg *config.Config, db *store.DB, sites site.Index, siteMap *store.NetworkWatcher, themeopts bool,
	notify func(changes.Change), memo *store.Memo, history *site.HistoryRecorder, log zerolog.Logger) *changes.Feed {
	if cfg.ChangeFeed != changes.ModeBinlog {
		return nil
	}
	var touched func(changes.Touched)
	if memo != nil {
		touched = func(t changes.Touched) {
			memo.Forget(store.Changed{All: t.DDL, Users: len(t.UserIDs) > 0, Options: t.Options, Groups: len(t.Groups) > 0})
		}
	}
	var network func()
	if siteMap != nil {
		network = func() {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := siteMap.Refresh(rctx); err != nil {
				log.Warn().Err(err).Msg("the network's sites changed; re-reading them failed (the next refresh tries again)")
			}
		}
	}
	var optName func(int64) string
	if themeopts {
		optName = sites.OptName
	}
	o := changes.FeedOptions{
		OptName: optName, Notify: notify, Touched: touched, Network: network, Log: log, HistoryTable: db.Table("wpsidecar_history"),
		SiteOptions: func(id int64) []string { return db.ForSite(id).SiteOptionNames() },
		Settings: func(id int64) {
			s := sites.Built(id)
			if s == nil {
				return // read when the site is first served
			}
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.Settings().Refresh(rctx); err != nil {
				log.Warn().Err(err).Int64("blog_id", id).Msg("site settings changed; re-reading them failed (the next refresh tries again)")
			}
		},
	}
	if history != nil {
		o.History = history.Record
	}
	feed, err := changes.OpenFeed(ctx, cfg, o)
	if err != nil {
		log.Error().Err(err).Msg("binlog change feed unusable; polling instead")
		return nil
	}
	conn, id := feed.Conn()
	host, port, _ := net.SplitHostPort(conn.Addr)
	log.Info().Str("host", host).Str("port", port).Str("server_id", strconv.FormatUint(uint64(id), 10)).Msg("binlog change feed on")
	return feed
}

// checkFeed is --check-config's word on the binlog feed: whether the
// server can feed the sidecar, or what to change.
func checkFeed(ctx context.Context, cfg *config.Config, out io.Writer) error {
	feed, err := changes.OpenFeed(ctx, cfg, changes.FeedOptions{Log: zerolog.Nop()})
	if err != nil {
		fmt.Fprintf(out, "# change-feed binlog: %v; the sidecar would poll instead\n", err)
		return err
	}
	defer feed.Close()
	conn, _ := feed.Conn()
	fmt.Fprintf(out, "# change-feed binlog: %s can feed the sidecar\n", conn.Addr)
	return nil
}

// closer drains by closing (a feed's pool, once its Run has returned).
type closer func() error

func (c closer) Drain(context.Context) { c() }

// memoLimit bounds serve-from-feed's memory: entries of each kind (users
// by what they logged in with, option rows, field-group reads).
const memoLimit = 10000

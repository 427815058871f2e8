package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/cmd/namespaces"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/module"
	"github.com/wpsidecar/wpsidecar/web/restcache"
)

// changeFeed is the binlog feed of --change-feed binlog or auto (nil with binlog when the server cannot feed it;
// kept with auto, to be checked again, unless it cannot be made at all) and why it does not follow (nil: it can).
// It follows every site's tables and option rows (the modules') and tells sub what each transaction did.
func changeFeed(ctx context.Context, cfg *config.Config, db *store.DB, mods []module.Module, sub changes.Subscriber, log zerolog.Logger) (*changes.Feed, error) {
	o := changes.FeedOptions{Tables: module.Tables(mods), OptionRows: module.OptionRows(mods), Subscriber: sub, Log: log, HistoryTable: db.Table("wpsidecar_history"), Primary: db}
	if n := restcache.Needs(cfg.TablePrefix); len(cfg.CacheREST) > 0 { // --cache-rest drops what any table's write may alter, by id where it can
		o.EveryTable, o.RowValues, o.QuietColumns, o.Keys = true, n.RowValues, n.QuietColumns, n.Keys
	}
	feed, err := changes.PrepareFeed(feedConfig(cfg), o)
	if err == nil {
		cctx, cancel := context.WithTimeout(ctx, cfg.DB.Timeout)
		defer cancel()
		err = feed.Check(cctx)
	}
	switch {
	case err == nil:
		conn, id := feed.Conn()
		host, port, _ := net.SplitHostPort(conn.Addr)
		log.Info().Str("host", host).Str("port", port).Str("server_id", strconv.FormatUint(uint64(id), 10)).Msg("binlog change feed on")
	case cfg.ChangeFeed == changes.ModeBinlog || feed == nil:
		if feed != nil {
			feed.Close()
		}
		log.Error().Err(err).Msg("binlog change feed unusable; polling instead")
		return nil, err
	default:
		log.Warn().Err(err).Dur("recheck_every", changes.RecheckEvery(cfg.ChangeInterval)).Msg("change-feed auto: the server cannot feed the sidecar; polling and reading the database for every GET until it can")
	}
	return feed, err
}

// setFeedMode says how changes are noticed, and why not by the binlog.
func (s *sidecar) setFeedMode(mode string, why error) {
	reason := ""
	if why != nil {
		reason = why.Error()
	}
	s.feedWhy.Store(reason)
	s.feedMode.Store(mode)
}

// checkFeed is --check-config's word on the binlog feed: whether the server can feed the sidecar, or what to
// change; with change-feed auto, what the sidecar would do (a server that cannot feed it is no error).
func checkFeed(ctx context.Context, cfg *config.Config, out io.Writer) error {
	feed, err := changes.OpenFeed(ctx, feedConfig(cfg), changes.FeedOptions{Tables: module.Tables(namespaces.Modules(cfg, nil)), Log: zerolog.Nop()})
	switch {
	case err != nil && cfg.ChangeFeed == changes.ModeBinlog:
		fmt.Fprintf(out, "# change-feed binlog: %v; the sidecar would poll instead\n", err)
		return err
	case err != nil:
		fmt.Fprintf(out, "# change-feed auto: poll: %v; the sidecar would poll and read the database for every GET, asking the server again every %s\n", err, changes.RecheckEvery(cfg.ChangeInterval))
		return nil
	}
	defer feed.Close()
	if w := feed.Warning(); w != "" { // after the feed's word
		defer fmt.Fprintf(out, "# change-feed: warning: %s\n", w)
	}
	conn, _ := feed.Conn()
	if cfg.ChangeFeed == changes.ModeBinlog {
		fmt.Fprintf(out, "# change-feed binlog: %s can feed the sidecar\n", conn.Addr)
		return nil
	}
	serve := "reading the database for every GET (serve-from-feed false)"
	if cfg.ServeFromFeed {
		serve = "answering GETs from memory while the feed is current (serve-from-feed)"
	}
	fmt.Fprintf(out, "# change-feed auto: binlog: %s can feed the sidecar; it would follow the binary log, %s\n", conn.Addr, serve)
	return nil
}

// checkRESTCache is --check-config's word on --cache-rest: on (given the
// feed's word before it), or off.
func checkRESTCache(cfg *config.Config, out io.Writer) {
	if len(cfg.CacheREST) == 0 {
		fmt.Fprintln(out, "# cache-rest: off: every REST request the sidecar does not answer goes to PHP")
		return
	}
	fmt.Fprintf(out, "# cache-rest: %s: PHP's answers to anonymous GET and HEAD requests kept in at most %d MiB while the binlog feed is current; every request goes to PHP while it is not\n",
		strings.Join(cfg.CacheREST, ","), cfg.CacheRESTMiB)
}

// closer drains by closing (a feed's pool, once its Run has returned).
type closer func() error

func (c closer) Drain(context.Context) { c() }

// memoLimit bounds serve-from-feed's memory: entries of each kind (users, option rows, field-group reads).
const memoLimit = 10000

// feedConfig is what of the configuration the binlog feed follows.
func feedConfig(cfg *config.Config) changes.FeedConfig {
	network, addr := cfg.DB.Address()
	return changes.FeedConfig{DSN: cfg.BinlogDSN, Net: network, Addr: addr, User: cfg.DB.User, Password: cfg.DB.Password,
		TLS: store.TLS(cfg.DB.TLS), Schema: cfg.DB.Name, Timeout: cfg.DB.Timeout, ServerID: uint32(cfg.BinlogServerID),
		TablePrefix: cfg.TablePrefix, Multisite: cfg.Multisite,
		ServeFromFeed: cfg.ServeFromFeed, MaxStaleness: cfg.MaxStaleness}
}

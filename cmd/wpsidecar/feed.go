package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/site"
	"github.com/wpsidecar/wpsidecar/store"
)

// changeFeed is the binlog feed when --change-feed binlog and the server
// can feed it; nil (polling) otherwise, with the reason logged. It follows
// every site's tables (a site's theme options row when themeopts) and
// tells sub what each transaction did.
func changeFeed(ctx context.Context, cfg *config.Config, db *store.DB, sites site.Index, themeopts bool, sub changes.Subscriber, log zerolog.Logger) *changes.Feed {
	if cfg.ChangeFeed != changes.ModeBinlog {
		return nil
	}
	var optName func(int64) string
	if themeopts {
		optName = sites.OptName
	}
	feed, err := changes.OpenFeed(ctx, feedConfig(cfg), changes.FeedOptions{Tables: tables(cfg), OptName: optName, Subscriber: sub, Log: log, HistoryTable: db.Table("wpsidecar_history"), Primary: db})
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
	feed, err := changes.OpenFeed(ctx, feedConfig(cfg), changes.FeedOptions{Tables: tables(cfg), Log: zerolog.Nop()})
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

// feedConfig is what of the configuration the binlog feed follows.
func feedConfig(cfg *config.Config) changes.FeedConfig {
	network, addr := cfg.DB.Address()
	return changes.FeedConfig{DSN: cfg.BinlogDSN, Net: network, Addr: addr, User: cfg.DB.User, Password: cfg.DB.Password,
		TLS: store.TLS(cfg.DB.TLS), Schema: cfg.DB.Name, Timeout: cfg.DB.Timeout, ServerID: uint32(cfg.BinlogServerID),
		TablePrefix: cfg.TablePrefix, Multisite: cfg.Multisite,
		ServeFromFeed: cfg.ServeFromFeed, MaxStaleness: cfg.MaxStaleness}
}

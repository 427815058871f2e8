package main

import (
	"context"
	"math/rand/v2"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/store"
)

// changeFeed is the binlog feed when --change-feed binlog and the server
// can feed it; nil (polling) otherwise, with the reason logged.
func changeFeed(ctx context.Context, cfg *config.Config, db *store.DB, settings *store.SettingsWatcher, optName func() string,
	notify func(changes.Change), log zerolog.Logger) (*changes.Feed, error) {
	if cfg.ChangeFeed != "binlog" {
		return nil, nil
	}
	conn := cfg.BinlogDSN
	if conn == nil {
		conn = mysql.NewConfig()
		network, addr := cfg.DB.Address()
		if network != "tcp" {
			log.Error().Msg("binlog change feed: the database is reached by a socket; give --binlog-dsn with a TCP address; polling instead")
			return nil, nil
		}
		conn.Net, conn.Addr, conn.User, conn.Passwd = "tcp", addr, cfg.DB.User, cfg.DB.Password
	}
	id := uint32(cfg.BinlogServerID)
	if id == 0 {
		id = uint32(1<<20 + rand.IntN(1<<30))
	}
	feed, err := changes.NewFeed(changes.FeedOptions{
		Conn: conn, ServerID: id, Schema: cfg.DB.Name, Options: db.Table("options"), Groups: cfg.FieldmgrTable,
		OptName: optName, SiteOptions: db.SiteOptionNames(), Notify: notify, Log: log,
		Settings: func() {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := settings.Refresh(rctx); err != nil {
				log.Warn().Err(err).Msg("site settings changed; re-reading them failed (the next refresh tries again)")
			}
		},
	})
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.DB.Timeout)
	defer cancel()
	if err := feed.Check(cctx); err != nil {
		feed.Close()
		log.Error().Err(err).Msg("binlog change feed unusable; polling instead")
		return nil, nil
	}
	host, port, _ := net.SplitHostPort(conn.Addr)
	log.Info().Str("host", host).Str("port", port).Str("server_id", strconv.FormatUint(uint64(id), 10)).Msg("binlog change feed on")
	return feed, nil
}

// closer drains by closing (a feed's pool, once its Run has returned).
type closer func() error

func (c closer) Drain(context.Context) { c() }

// feedMetrics say how changes are noticed: wpsidecar_change_feed{mode} is 1
// for the mode in force (binlog, poll, off).
func feedMetrics(mode *atomic.Value) []prometheus.Collector {
	var out []prometheus.Collector
	for _, m := range []string{changes.ModeBinlog, changes.ModePoll, "off"} {
		out = append(out, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wpsidecar_change_feed", Help: "How changes are noticed: 1 for the mode in force (binlog, poll after a fall-back or by choice, off).",
			ConstLabels: prometheus.Labels{"mode": m}}, func() float64 {
			if mode.Load().(string) == m {
				return 1
			}
			return 0
		}))
	}
	return out
}

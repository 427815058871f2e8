package changes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/store"
)

// OpenFeed is the configuration's feed (newFeed) checked against the server (closed when the
// server cannot feed it).
func OpenFeed(ctx context.Context, cfg *config.Config, o FeedOptions) (*Feed, error) {
	feed, err := newFeed(cfg, o)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, cfg.DB.Timeout)
	defer cancel()
	if err := feed.Check(cctx); err != nil {
		feed.Close()
		return nil, err
	}
	return feed, nil
}

// newFeed is the binlog feed of the configuration: its connection (from
// --binlog-dsn, else the database settings over TCP), replica id and
// tables, with o's callbacks.
func newFeed(cfg *config.Config, o FeedOptions) (*Feed, error) {
	o.Conn = cfg.BinlogDSN
	if o.Conn != nil {
		o.Conn = o.Conn.Clone()
	} else {
		network, addr := cfg.DB.Address()
		if network != "tcp" {
			return nil, fmt.Errorf("%w: the database is reached by a socket; give --binlog-dsn with a TCP address", ErrFeedUnusable)
		}
		o.Conn = mysql.NewConfig()
		o.Conn.Net, o.Conn.Addr, o.Conn.User, o.Conn.Passwd = "tcp", addr, cfg.DB.User, cfg.DB.Password
	}
	if o.Conn.TLSConfig == "" {
		// A --binlog-dsn that names no tls= is encrypted as the database's
		// other connections are.
		if err := store.TLS(cfg.DB.TLS).Apply(o.Conn); err != nil {
			return nil, err
		}
	}
	o.ServerID = uint32(cfg.BinlogServerID)
	if o.ServerID == 0 {
		o.ServerID = uint32(1<<20 + rand.IntN(1<<30))
	}
	o.Schema, o.Options, o.Groups = cfg.DB.Name, cfg.TablePrefix+"options", cfg.FieldmgrTable
	if cfg.Multisite {
		o.Sites = []string{cfg.TablePrefix + "blogs", cfg.TablePrefix + "site"}
		o.BasePrefix = cfg.TablePrefix
	}
	if cfg.ServeFromFeed {
		// The users' rows matter too, and the feed must hear the server
		// twice within max-staleness to vouch for it.
		o.Users, o.Usermeta = cfg.TablePrefix+"users", cfg.TablePrefix+"usermeta"
		o.Heartbeat = max(10*time.Millisecond, min(time.Second, cfg.MaxStaleness/2))
	}
	return NewFeed(o)
}

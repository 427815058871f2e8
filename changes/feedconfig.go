package changes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/wpsidecar/wpsidecar/store"
)

// FeedConfig is what of the sidecar's settings the binlog feed follows
// (cmd makes it from the configuration).
type FeedConfig struct {
	// DSN is --binlog-dsn (nil: the database settings, over TCP).
	DSN *mysql.Config
	// The database: how it is reached, by whom, its TLS, the schema.
	Net, Addr, User, Password string
	TLS                       store.TLS
	Schema                    string
	Timeout                   time.Duration // of the check against the server
	// ServerID is --binlog-server-id (0: one picked at random).
	ServerID uint32
	// TablePrefix, and whether the site is a network (every site's tables
	// are followed then). The namespaces' own tables are
	// FeedOptions.Tables.
	TablePrefix string
	Multisite   bool
	// ServeFromFeed: the users' rows matter too, and the feed must hear
	// the server twice within MaxStaleness to vouch for it.
	ServeFromFeed bool
	MaxStaleness  time.Duration
}

// OpenFeed is c's feed (PrepareFeed) checked against the server (closed when
// the server cannot feed it).
func OpenFeed(ctx context.Context, c FeedConfig, o FeedOptions) (*Feed, error) {
	feed, err := PrepareFeed(c, o)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if err := feed.Check(cctx); err != nil {
		feed.Close()
		return nil, err
	}
	return feed, nil
}

// PrepareFeed is the binlog feed of c, not checked yet: its connection
// (from --binlog-dsn, else the database settings over TCP), replica id
// and tables, told to o's subscriber. Its error (ErrFeedUnusable: a
// socket and no --binlog-dsn; a TLS setting) is one asking the server
// again would not change.
func PrepareFeed(c FeedConfig, o FeedOptions) (*Feed, error) {
	o.Conn = c.DSN
	if o.Conn != nil {
		o.Conn = o.Conn.Clone()
	} else {
		if c.Net != "tcp" {
			return nil, fmt.Errorf("%w: the database is reached by a socket; give --binlog-dsn with a TCP address", ErrFeedUnusable)
		}
		o.Conn = mysql.NewConfig()
		o.Conn.Net, o.Conn.Addr, o.Conn.User, o.Conn.Passwd = "tcp", c.Addr, c.User, c.Password
	}
	if o.Conn.TLSConfig == "" {
		// A --binlog-dsn that names no tls= is encrypted as the database's
		// other connections are.
		if err := c.TLS.Apply(o.Conn); err != nil {
			return nil, err
		}
	}
	o.ServerID = c.ServerID
	if o.ServerID == 0 {
		o.ServerID = uint32(1<<20 + rand.IntN(1<<30))
	}
	o.Schema, o.Options = c.Schema, c.TablePrefix+"options"
	if c.Multisite {
		o.Sites = []string{c.TablePrefix + "blogs", c.TablePrefix + "site"}
		o.BasePrefix = c.TablePrefix
	}
	if c.ServeFromFeed {
		o.Users, o.Usermeta = c.TablePrefix+"users", c.TablePrefix+"usermeta"
		o.Heartbeat = max(10*time.Millisecond, min(time.Second, c.MaxStaleness/2))
	}
	return NewFeed(o)
}

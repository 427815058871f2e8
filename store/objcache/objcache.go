// Package objcache keeps a WordPress persistent object cache in Redis
// coherent with the rows the sidecar writes: after each write it deletes
// the keys PHP would read the old row from, named exactly as the Redis
// Object Cache drop-in (rhubarbgroup/redis-cache) names them.
//
// The drop-in's key is {salt}{prefix}:{group}:{key}. The salt is
// WP_REDIS_PREFIX, trimmed (WP_CACHE_KEY_SALT when WP_REDIS_PREFIX is not
// defined). The prefix is the table prefix on a single site, for every
// group; on a multisite network it is the blog id for per-blog groups and
// empty for global ones; either way with '_', '-', ':' and '$' trimmed from
// both ends. A ':' inside the group or key is written as '-'.
package objcache

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Options says where the cache is and how the drop-in names its keys. The
// connection fields mirror the drop-in's WP_REDIS_* constants.
type Options struct {
	Scheme   string // tcp (default), tls or unix
	Host     string // default 127.0.0.1
	Port     int    // default 6379
	Path     string // the socket, with scheme unix
	Username string
	Password string
	Database int
	Timeout  time.Duration // connect, read and write; default 1s as the drop-in's

	Salt        string // WP_REDIS_PREFIX, or WP_CACHE_KEY_SALT when that is undefined
	TablePrefix string
	Multisite   bool

	// Again is how long after a write its keys are deleted a second time
	// (default 1s; negative: never). A PHP request that read the old row
	// just before the write commits may store it in the cache after the
	// first deletion; the second one removes it.
	Again time.Duration

	Logger zerolog.Logger
}

// Redis deletes stale keys from the object cache.
type Redis struct {
	client       *redis.Client
	salt         string
	globalPrefix string
	blogPrefix   string // on a single site; "" on a network (the blog id)
	again        time.Duration
	log          zerolog.Logger

	deleted, failed atomic.Uint64 // deletion passes, for metrics

	mu     sync.Mutex // guards closed and wg.Add against Close
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup
}

// New builds the client. It does not connect: Ping does, and each deletion
// connects when it needs to.
func New(o Options) (*Redis, error) {
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.Again == 0 {
		o.Again = time.Second
	}
	ro := &redis.Options{
		Username: o.Username, Password: o.Password, DB: o.Database,
		DialTimeout: o.Timeout, ReadTimeout: o.Timeout, WriteTimeout: o.Timeout,
		// One attempt, so that a dead cache costs a write at most Timeout.
		PoolSize: 4, MaxRetries: -1, DialerRetries: 1,
		// The drop-in speaks RESP2; so do older servers.
		Protocol:        2,
		DisableIdentity: true,
	}
	host := o.Host
	if host == "" {
		host = "127.0.0.1"
	}
	port := o.Port
	if port == 0 {
		port = 6379
	}
	switch scheme := strings.ToLower(o.Scheme); scheme {
	case "", "tcp", "tls":
		ro.Network, ro.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(port))
		if scheme == "tls" {
			ro.TLSConfig = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		}
	case "unix":
		if o.Path == "" {
			return nil, errors.New("objcache: scheme unix needs a socket path")
		}
		ro.Network, ro.Addr = "unix", o.Path
	default:
		return nil, fmt.Errorf("objcache: unknown scheme %q (tcp, tls or unix)", o.Scheme)
	}
	r := &Redis{
		client: redis.NewClient(ro),
		salt:   strings.TrimSpace(o.Salt),
		again:  o.Again,
		log:    o.Logger,
		stop:   make(chan struct{}),
	}
	r.globalPrefix, r.blogPrefix = o.TablePrefix, o.TablePrefix
	if o.Multisite {
		r.globalPrefix, r.blogPrefix = "", ""
	}
	return r, nil
}

// Key is the drop-in's name for key in group: a global group's, or a
// per-blog group's of the single site or of a network's main site.
func (r *Redis) Key(group, key string, global bool) string {
	if global {
		return r.key(r.globalPrefix, group, key)
	}
	return r.BlogKey(1, group, key)
}

// BlogKey is the drop-in's name for key in a per-blog group of blog (a
// network's blog id; 0 or 1 is the main or single site).
func (r *Redis) BlogKey(blog int64, group, key string) string {
	prefix := r.blogPrefix
	if prefix == "" {
		prefix = strconv.FormatInt(max(blog, 1), 10)
	}
	return r.key(prefix, group, key)
}

func (r *Redis) key(prefix, group, key string) string {
	return r.salt + strings.Trim(prefix, "_-:$") + ":" + keyPart(group) + ":" + keyPart(key)
}

func keyPart(s string) string { return strings.ReplaceAll(s, ":", "-") }

// OptionKeys are the keys through which PHP reads an option of blog: the
// autoloaded set, the set of names known to be missing, and the option on
// its own.
func (r *Redis) OptionKeys(blog int64, name string) []string {
	return []string{r.BlogKey(blog, "options", "alloptions"), r.BlogKey(blog, "options", "notoptions"), r.BlogKey(blog, "options", name)}
}

// UserMetaKeys is the key of a user's cached meta (user_meta is global).
func (r *Redis) UserMetaKeys(userID int64) []string {
	return []string{r.Key("user_meta", strconv.FormatInt(userID, 10), true)}
}

// OptionChanged deletes what PHP caches of option name of blog. It is
// called after the write commits.
func (r *Redis) OptionChanged(ctx context.Context, blog int64, name string) {
	r.evict(ctx, "option", name, r.OptionKeys(blog, name))
}

// UserMetaChanged deletes what PHP caches of a user's meta.
func (r *Redis) UserMetaChanged(ctx context.Context, userID int64) {
	r.evict(ctx, "user_meta", strconv.FormatInt(userID, 10), r.UserMetaKeys(userID))
}

// UserChanged deletes PHP's cached users row of a user.
func (r *Redis) UserChanged(ctx context.Context, userID int64) {
	id := strconv.FormatInt(userID, 10)
	r.evict(ctx, "users", id, []string{r.Key("users", id, true)})
}

// evict deletes keys now and, after Again, once more. A failure is logged,
// not returned: the database write it follows has been made.
func (r *Redis) evict(ctx context.Context, what, name string, keys []string) {
	r.del(context.WithoutCancel(ctx), what, name, keys, "")
	if r.again < 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTimer(r.again)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.stop: // shutting down: do it now rather than never
		}
		r.del(context.Background(), what, name, keys, "again")
	}()
}

func (r *Redis) del(ctx context.Context, what, name string, keys []string, pass string) {
	n, err := r.client.Del(ctx, keys...).Result()
	if err != nil {
		r.failed.Add(1)
		r.log.Error().Err(err).Str(what, name).Strs("keys", keys).Str("pass", pass).
			Msg("object cache: could not delete stale keys; PHP may serve the old value until they expire or the cache is flushed")
		return
	}
	r.deleted.Add(1)
	r.log.Debug().Str(what, name).Strs("keys", keys).Int64("deleted", n).Str("pass", pass).Msg("object cache: stale keys deleted")
}

// Passes counts the deletion passes made and those that failed.
func (r *Redis) Passes() (done, failed uint64) { return r.deleted.Load(), r.failed.Load() }

// Ping checks that the cache answers.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("objcache: %w", err)
	}
	return nil
}

// Close runs the pending second deletions at once and closes the client.
func (r *Redis) Close() error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.stop)
	}
	r.mu.Unlock()
	r.wg.Wait()
	return r.client.Close()
}

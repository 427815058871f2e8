// Package store holds all SQL: the connection pool, WordPress options and the
// site-settings snapshot. It knows MySQL and WordPress's data formats and
// nothing of HTTP.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/rs/zerolog"
)

// Sentinel errors. Callers test them with errors.Is.
var (
	// ErrUnavailable: the database could not be reached or refused the
	// connection; the request may succeed later. Packages that must not
	// import store recognise it by its Unavailable method.
	ErrUnavailable error = unavailableError{}
	// ErrBusy: every connection was in use for longer than the wait the
	// pool allows (Options.MaxWait); the request may succeed shortly.
	// Packages that must not import store recognise it by its Busy method.
	ErrBusy error = busyError{}
)

type busyError struct{}

func (busyError) Error() string { return "database connections busy" }
func (busyError) Busy() bool    { return true }

type unavailableError struct{}

func (unavailableError) Error() string     { return "database unavailable" }
func (unavailableError) Unavailable() bool { return true }

// Options says how to reach WordPress's database.
type Options struct {
	Net       string // "tcp" or "unix"
	Addr      string
	User      string
	Password  string
	DBName    string
	Charset   string
	Collation string
	// TLS encrypts the connections to the primary and the replicas.
	TLS         TLS
	TablePrefix string
	// Multisite: network options live in {prefix}sitemeta (network 1); the
	// sidecar serves the network's main site.
	Multisite bool
	MaxOpen   int
	Timeout   time.Duration
	// MaxWait bounds how long a request waits for one of the MaxOpen
	// connections: longer, and it fails with ErrBusy instead of queueing
	// without limit. 0: no bound.
	MaxWait time.Duration
	Logger  zerolog.Logger
	// Replicas are read replicas (user, password and database default to
	// the primary's); GETs read one whose lag is at most MaxReplicaLag
	// (see WatchReplicas).
	Replicas      []*mysql.Config
	MaxReplicaLag time.Duration
	// Cache, when not nil, is told of every committed write to a row that
	// WordPress may keep in a persistent object cache.
	Cache CacheInvalidator
	// History: the sidecar's writes are recorded in each site's
	// {prefix}wpsidecar_history (see History).
	History bool
	// HistoryUnits are the namespaces whose history is kept: the
	// history records and reverts only theirs.
	HistoryUnits []HistoryUnit
}

// CacheInvalidator removes what a persistent object cache holds of rows
// the sidecar has written, so that PHP reads them again. It is called after
// the write commits and reports its own failures.
type CacheInvalidator interface {
	// OptionChanged: blog is the site's id on a network (1 the main
	// site's), 0 on a single site.
	OptionChanged(ctx context.Context, blog int64, name string)
	UserMetaChanged(ctx context.Context, userID int64)
	// UserChanged: a users row (the users group, by ID, which
	// clean_user_cache deletes; the login, e-mail and slug groups hold
	// only the ID, right while those stay).
	UserChanged(ctx context.Context, userID int64)
}

// DB is WordPress's database, seen from one site: per-site tables carry
// the site's prefix, the network's global tables the base prefix (see
// ForSite).
type DB struct {
	*pools
	base   string // the table prefix of wp-config.php
	prefix string // the site's: base for site 1, base + "N_" for site N
	blog   int64  // the site's id on a network; 0 for the single site's view
}

// pools is what every site's view shares: the connections and what is
// known of the servers.
type pools struct {
	sql       *sql.DB
	dbName    string
	multisite bool
	// piggyback: reads may ride as a second statement (see Piggyback);
	// only where parameters are interpolated safely.
	piggyback bool
	log       zerolog.Logger
	cache     CacheInvalidator
	memo      *Memo
	// turns holds a token for each request using a connection of the
	// pool (nil: no bound on the wait); maxWait is how long one waits for
	// its turn, waitRefused how many waited longer.
	turns       chan struct{}
	maxWait     time.Duration
	waitRefused atomic.Uint64
	// keepHistory: writes are recorded; historyReady holds the history
	// tables known to exist.
	keepHistory  bool
	historyReady sync.Map
	historyUnits historyUnits
	replicas     []*replica
	maxLag       time.Duration
	next         atomic.Uint32 // round robin over healthy replicas
	// listReads numbers the reads of a namespace's list (GroupList's
	// version), shared by every site's view: no two reads share one.
	listReads atomic.Uint64
	// readAfterRefused counts user lookups of unproven requests whose GTID
	// to read after was not waited for.
	readAfterRefused atomic.Uint64
	// primaryPos is the primary's GTID position at the last look
	// (*gtidSet); flavorSeen its flavor, once read.
	primaryPos atomic.Value
	flavorSeen atomic.Value
}

// identRe is what a table name or prefix may be: the sidecar puts them
// into SQL itself (identifiers cannot be placeholders), so nothing else.
var identRe = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// Open builds the connection pool. It does not connect: WaitReady does.
func Open(o Options) (*DB, error) {
	if !identRe.MatchString(o.TablePrefix) {
		return nil, fmt.Errorf("store: invalid table prefix %q", o.TablePrefix)
	}
	if o.History && len(o.HistoryUnits) == 0 {
		// Every write records in the history, in its transaction.
		return nil, errors.New("store: the history is kept but no namespace's HistoryUnit is given")
	}
	units, err := newHistoryUnits(o.HistoryUnits)
	if err != nil {
		return nil, err
	}
	safe := interpolationSafe(o.Charset, o.Collation)
	db, err := openPool(o, o.Net, o.Addr, o.User, o.Password, o.DBName, safe)
	if err != nil {
		return nil, err
	}
	if !safe {
		o.Logger.Info().Str("charset", o.Charset).Msg("database charset is not safe for client-side escaping: server-side placeholders, one statement per round trip")
	}
	d := &DB{pools: &pools{sql: db, dbName: o.DBName, multisite: o.Multisite, piggyback: safe, log: o.Logger, cache: o.Cache, maxLag: o.MaxReplicaLag,
		keepHistory: o.History, historyUnits: units, maxWait: o.MaxWait},
		base: o.TablePrefix, prefix: o.TablePrefix}
	if o.MaxWait > 0 {
		d.turns = make(chan struct{}, maxOpen(o.MaxOpen))
	}
	for _, r := range o.Replicas {
		user, pass, name := r.User, r.Passwd, r.DBName
		if user == "" {
			user, pass = o.User, o.Password
		}
		if name == "" {
			name = o.DBName
		}
		pool, err := openPool(o, "tcp", r.Addr, user, pass, name, safe)
		if err != nil {
			d.Close()
			return nil, err
		}
		d.replicas = append(d.replicas, &replica{addr: r.Addr, sql: pool})
	}
	return d, nil
}

// openPool is a connection pool to one server, set up as wpdb connects.
func openPool(o Options, network, addr, user, password, dbName string, safe bool) (*sql.DB, error) {
	c := mysql.NewConfig()
	c.Net, c.Addr = network, addr
	c.User, c.Passwd, c.DBName = user, password, dbName
	if o.Charset != "" {
		// SET NAMES <charset> COLLATE <collation>, as wpdb does.
		if err := c.Apply(mysql.Charset(o.Charset, o.Collation)); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	if err := o.TLS.Apply(c); err != nil {
		return nil, err
	}
	c.Timeout, c.ReadTimeout, c.WriteTimeout = o.Timeout, o.Timeout, o.Timeout
	// Client-side interpolation saves the prepare and close round trips on
	// every query, and lets a piggybacked read be a second statement in the
	// user lookup's round trip. The driver escapes byte by byte, which is
	// sound only where no multibyte character can end in a backslash or a
	// quote: under gbk, big5, sjis, cp932 or gb18030 a lead byte swallows
	// the escaping backslash. Other charsets get server-side placeholders
	// and one statement per query.
	c.InterpolateParams = safe
	c.MultiStatements = safe
	// UPDATE reports the rows it matched, not only those it changed, so
	// "not found" is never confused with "already so".
	c.ClientFoundRows = true
	c.Loc = time.UTC
	c.Logger = mysqlLogger{o.Logger}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(maxOpen(o.MaxOpen))
	db.SetMaxIdleConns(maxOpen(o.MaxOpen))
	db.SetConnMaxLifetime(5 * time.Minute)
	db.SetConnMaxIdleTime(time.Minute)
	return db, nil
}

// maxOpen is a pool's size: n, 16 unless given.
func maxOpen(n int) int {
	if n <= 0 {
		return 16
	}
	return n
}

// safeCharsets are the connection character sets in which neither a
// backslash nor a quote byte can be part of a multibyte character.
var safeCharsets = map[string]bool{"utf8mb4": true, "utf8mb3": true, "utf8": true, "latin1": true, "ascii": true, "binary": true}

// interpolationSafe tells whether client-side escaping is sound for the
// connection's charset and collation (a collation names its charset
// first). No charset is the driver's utf8mb4.
func interpolationSafe(charset, collation string) bool {
	if charset != "" && !safeCharsets[strings.ToLower(charset)] {
		return false
	}
	if collation == "" {
		return true
	}
	cs, _, _ := strings.Cut(strings.ToLower(collation), "_")
	return safeCharsets[cs]
}

// UseMemo has the GETs' reads (UserForAuth and its ride-alongs, RawOption,
// field groups' List and Get) answered from m while it serves, and the
// sidecar's own writes forget what they change. Call it before any read.
func (db *DB) UseMemo(m *Memo) { db.memo = m }

// turn waits, at most maxWait, until fewer requests use the pool's
// connections than it has, so that a request that would wait longer is
// refused (ErrBusy) rather than queued without limit; done ends the turn.
func (p *pools) turn(ctx context.Context) (done func(), err error) {
	if p.turns == nil {
		return func() {}, nil
	}
	select {
	case p.turns <- struct{}{}:
		return p.endTurn, nil
	default:
	}
	t := time.NewTimer(p.maxWait)
	defer t.Stop()
	select {
	case p.turns <- struct{}{}:
		return p.endTurn, nil
	case <-t.C:
		p.waitRefused.Add(1)
		return nil, ErrBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pools) endTurn() { <-p.turns }

// query runs q on from; a replica that fails it (gone since its last
// look, or without a table the primary has just made) leaves it to the
// primary.
func (db *DB) query(ctx context.Context, from *sql.DB, q string, args ...any) (*sql.Rows, error) {
	rows, err := from.QueryContext(ctx, q, args...)
	if err != nil && from != db.sql && ctx.Err() == nil {
		db.log.Debug().Err(err).Msg("a replica failed a read; the primary answers it")
		rows, err = db.sql.QueryContext(ctx, q, args...)
	}
	return rows, err
}

// readAlone runs pb as a query of its own, or answers it from the memo.
func (db *DB) readAlone(ctx context.Context, pb *Piggyback) error {
	k := memoKey{pb.kind, pb.key}
	v, ok, gen, serving := db.memo.lookup(ctx, k)
	if !ok {
		done, err := db.turn(ctx)
		if err != nil {
			return err
		}
		defer done()
		rows, err := db.query(ctx, db.reader(ctx, serving), pb.query, pb.args...)
		if err != nil {
			return classify(err)
		}
		defer rows.Close()
		if v, err = pb.read(rows); err != nil {
			return classify(err)
		}
		if serving {
			db.memo.put(k, gen, v)
		}
	}
	pb.finish(v, nil)
	return nil
}

// Close closes the pools.
func (db *DB) Close() error {
	for _, r := range db.replicas {
		r.sql.Close()
	}
	return db.sql.Close()
}

// SQL is the pool, for its statistics.
func (db *DB) SQL() *sql.DB { return db.sql }

// Table is a WordPress table's name: the network's global tables (users,
// usermeta and, on a network, site, sitemeta, blogs, blogmeta, signups,
// registration_log) with the base prefix, the others with the site's, as
// wpdb names them.
func (db *DB) Table(name string) string {
	if globalTables[name] {
		return db.base + name
	}
	return db.prefix + name
}

var globalTables = map[string]bool{"users": true, "usermeta": true, "site": true, "sitemeta": true, "blogs": true,
	"blogmeta": true, "signups": true, "registration_log": true}

// ForSite is the database as site blogID of the network sees it: its
// options and other per-site tables are {base}{blogID}_…, except site 1's,
// which are the base prefix's (wpdb's get_blog_prefix). The view shares
// everything else with db.
func (db *DB) ForSite(blogID int64) *DB {
	prefix := db.base
	if blogID > 1 {
		prefix = db.base + strconv.FormatInt(blogID, 10) + "_"
	}
	return &DB{pools: db.pools, base: db.base, prefix: prefix, blog: blogID}
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.sql.PingContext(ctx); err != nil {
		return classify(err)
	}
	return nil
}

// connectionErrors are server errors that mean "cannot use the database
// now", not "this query is wrong".
var connectionErrors = map[uint16]bool{
	1040: true, // too many connections
	1045: true, // access denied
	1049: true, // unknown database
	1053: true, // server shutdown in progress
	1129: true, // host blocked
	1130: true, // host not allowed
	1203: true, // too many user connections
	1226: true, // user resource limit
	1927: true, // connection killed
	3159: true, // the server takes only encrypted connections (--db-tls)
}

// classify wraps connection-level failures in ErrUnavailable so that the
// HTTP layer answers 503; query errors stay as they are.
func classify(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) && !connectionErrors[me.Number] {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// unrepresentable reports the server's refusal to compare a parameter that
// is not text in the connection's charset with a column of another:
// MariaDB's error 1267 ("Illegal mix of collations"), MySQL's 3988
// ("Conversion from collation … impossible for parameter").
func unrepresentable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1267 || me.Number == 3988)
}

// mysqlLogger sends the driver's own messages to the sidecar's log.
type mysqlLogger struct{ l zerolog.Logger }

func (m mysqlLogger) Print(v ...any) {
	m.l.Warn().Str("component", "mysql").Msg(fmt.Sprint(v...))
}

// pairs reads two-column rows (name, value) into a map: the first row of a
// name wins (get_network_option's rule; other callers' names are unique).
// what names the read in errors. The rows are closed.
func pairs(rows *sql.Rows, what string) (map[string]string, error) {
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("store: %s: %w", what, classify(err))
		}
		if _, seen := out[k]; !seen {
			out[k] = v
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, classify(err))
	}
	return out, nil
}

package changes

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/store"
)

// FeedOptions configure a Feed.
type FeedOptions struct {
	// Conn reaches the server as a replica does: a user with REPLICATION
	// SLAVE and REPLICATION CLIENT (BINLOG MONITOR on MariaDB).
	Conn *mysql.Config
	// ServerID is the feed's replica id: unique among the server's replicas.
	ServerID uint32
	// Schema and the options table (site 1's) whose rows matter.
	Schema, Options string
	// Tables are the namespaces kept in tables of their own, followed
	// row by row.
	Tables []Table
	// Users and Usermeta, when set, are followed too: their rows' user
	// ids are in Touched.
	Users, Usermeta string
	// BasePrefix, on a multisite network, is the table prefix: a table
	// {BasePrefix}{N}_{name} whose {BasePrefix}{name} is Options or a
	// Table's Name is site N's (those are site 1's). Commits name their
	// site: 0 on a single site.
	BasePrefix string
	// Sites are a network's tables of sites and networks ({base}blogs,
	// {base}site): a transaction that writes one is Touched.Network.
	Sites []string
	// OptionRows are the namespaces kept in an option row of each site,
	// followed through the options table's rows.
	OptionRows []OptionRow
	// EveryTable has every table of Schema followed, by name: the tables
	// each site's transactions wrote are in Touched.Written (what keeps
	// WordPress's own answers must hear of a write to any of them).
	EveryTable bool
	// RowValues names, by site-1 table name ("wp_posts"), the columns
	// whose values in every row image written are reported in
	// Touched.RowValues: what a cache keyed by WordPress's own ids drops.
	RowValues map[string][]string
	// QuietColumns names, by site-1 table name ("wp_users"), columns
	// whose change alone is no write to Touched.Written and RowValues: an
	// update of a row that changed none but them is left out of both
	// (and still in UserIDs, Options and the rest). Nothing else than
	// what the log shows is compared: a row image without a column
	// another image has counts as a change.
	QuietColumns map[string][]string
	// Keys names, by site-1 table name ("wp_posts"), the primary key of
	// tables whose writes are reported only once the primary shows them
	// (as the followed tables' are: Primary), so that what is read again
	// after the report (PHP's answer, kept) is the new row.
	Keys map[string]string
	// HistoryTable is the history's table (the site-1 name): a transaction
	// that wrote it is the sidecar's own, whose history was recorded as it
	// wrote. Its commits' Author is then Via binlog alone; others' are
	// LoginPHP's.
	HistoryTable string
	// Subscriber is told what each committed transaction did, in commit
	// order, on the feed's goroutine.
	Subscriber Subscriber
	// Primary is the sidecar's pool on the server the feed follows: a
	// transaction is reported only once a read there sees it
	// (store.DB.Committed says why it may not at first). Nil: at once.
	Primary *store.DB
	// CommitWait bounds that wait (0: 2 s), after which a transaction is
	// reported anyway.
	CommitWait time.Duration
	// Heartbeat is the server's heartbeat period: a feed that hears
	// nothing for three of them reconnects.
	Heartbeat time.Duration
	Log       zerolog.Logger
}

// Modes of the change detection, for /readyz and metrics.
const (
	ModeBinlog = "binlog"
	ModePoll   = "poll"
)

// Feed follows the server's binary log as a replica does and reports each
// committed change to the namespaces' tables and option rows (and to the
// site settings' options) at once, with no polling.
type Feed struct {
	o        FeedOptions
	server   *store.BinlogServer
	mode     atomic.Value // ModeBinlog or ModePoll
	lastSeen atomic.Int64 // unix nanoseconds of the last event or heartbeat
	// why is what stopped the feed following the log (a whyStopped), for
	// /readyz: the last Check's problem or the fall-back's cause.
	why atomic.Value
	// caughtUp is when the feed was last known to have applied the
	// server's whole log (unix nanoseconds; 0 since the feed
	// (re)connected): when the server last sent a heartbeat, once what
	// the feed read before it is reported (the server sends one only with
	// nothing left to send), or when a look at the log's end started that
	// the feed then reached (Sync; a busy server sends no heartbeat). An
	// event says nothing of what is still behind it (a large transaction
	// of another schema streaming).
	caughtUp atomic.Int64
	warning  atomic.Value // Warning's
	// imageNoted: a rows event without every column went by.
	imageNoted atomic.Bool
	// applied is the point of the log up to which every transaction is
	// reported; index hands out Sync's looks at the log's end.
	applied progress
	index   readIndex

	cols map[string][]string // table → column names, in order
	// colsStale: a DDL statement went by; the column order is read again.
	colsStale bool
	flavor    string // gomysql.MariaDBFlavor or MySQLFlavor: their GTIDs and dump commands differ
	// tls is the feed's connection's TLS: the pool's settings, or none
	// where TLS is only preferred and the server does not offer it.
	tls *tls.Config

	// where to resume: a GTID set where the server has them, else a file
	// and position; only ever a committed transaction's end.
	gtid gomysql.GTIDSet
	pos  gomysql.Position

	// ordered: the server makes transactions visible in the log's order
	// (store.BinlogSettings.OrderedCommits).
	ordered bool
	// queue is what follow has read and not reported yet, in the log's
	// order: transactions waiting for the primary to show them (confirm).
	// probeAt is when to look again, pause the time between looks.
	queue   []queued
	probeAt time.Time
	pause   time.Duration
	// late are transactions reported before the primary showed them
	// (recheckLate).
	late []queued
}

// NewFeed checks nothing yet: Check and Run do.
func NewFeed(o FeedOptions) (*Feed, error) {
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	if o.CommitWait <= 0 {
		o.CommitWait = 2 * time.Second
	}
	server, err := store.OpenBinlogServer(o.Conn)
	if err != nil {
		return nil, err
	}
	f := &Feed{o: o, server: server, index: readIndex{kick: make(chan struct{}, 1)}}
	f.mode.Store(ModeBinlog)
	return f, nil
}

// Close releases the feed's connection pool, once Run has returned.
func (f *Feed) Close() error { return f.server.Close() }

// Conn is the connection and replica id the feed uses.
func (f *Feed) Conn() (*mysql.Config, uint32) { return f.o.Conn, f.o.ServerID }

// Mode is the detection in force: binlog, or poll after a fall-back or
// a failed Check.
func (f *Feed) Mode() string { return f.mode.Load().(string) }

// whyStopped wraps an error for atomic.Value, which takes no nil.
type whyStopped struct{ err error }

// Err is why the feed does not follow the log: what the last Check found
// missing, or what made Run fall back; nil while it follows.
func (f *Feed) Err() error {
	if w, ok := f.why.Load().(whyStopped); ok {
		return w.err
	}
	return nil
}

// stop notes that the feed no longer vouches for anything, and why.
func (f *Feed) stop(why error) {
	f.mode.Store(ModePoll) // first: Current reads the mode
	f.caughtUp.Store(0)
	f.why.Store(whyStopped{why})
}

// Current tells whether the feed follows the log and the server said,
// within maxStale, that it had nothing left to send (a heartbeat), and
// the feed has reported what it read before: whether what it reported is
// the database as of at most maxStale ago. A stream of events without a
// pause (a backlog, a large transaction) is not current until it is
// applied, nor a transaction read until the primary shows it.
func (f *Feed) Current(maxStale time.Duration) bool {
	at := f.caughtUp.Load()
	return f.Mode() == ModeBinlog && at != 0 && time.Since(time.Unix(0, at)) <= maxStale
}

// LastSeen is when the feed last heard from the server (zero: never).
func (f *Feed) LastSeen() time.Time {
	if n := f.lastSeen.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// ErrFeedUnusable: the server cannot feed the sidecar (its binary log is
// off, not row-based, or the user may not read it); the error says what
// to change.
var ErrFeedUnusable = errors.New("binlog change feed unusable")

// Check tells what the server lacks for the feed, with the statement or
// the my.cnf lines that give it, and reads where the log stands now (Run
// starts there: what came before is what the sidecar reads anyway). It
// may be called again once Run has returned: the feed then resumes from
// the server's position of that moment, and until Run starts again it
// is not current.
func (f *Feed) Check(ctx context.Context) error {
	err := f.check(ctx)
	if err != nil {
		f.stop(err)
	}
	return err
}

func (f *Feed) check(ctx context.Context) error {
	b, err := f.server.Settings(ctx)
	if err != nil {
		return fmt.Errorf("%w: cannot read the server's binlog settings: %v", ErrFeedUnusable, err)
	}
	f.flavor, f.ordered = b.Flavor, b.OrderedCommits
	f.tls = f.o.Conn.TLS
	if f.o.Conn.AllowFallbackToPlaintext && !b.Encrypted {
		f.tls = nil
	}
	var problems []string
	if b.LogBin != "1" && !strings.EqualFold(b.LogBin, "ON") {
		problems = append(problems, "the binary log is off (start the server with log_bin and a server_id: in my.cnf's [mysqld], log_bin=binlog, server_id=1, binlog_format=ROW and binlog_row_image=FULL, then restart it)")
	}
	if !strings.EqualFold(b.Format, "ROW") {
		problems = append(problems, fmt.Sprintf("binlog_format is %s (SET GLOBAL binlog_format=ROW, and binlog_format=ROW in my.cnf's [mysqld] to keep it)", b.Format))
	}
	if !strings.EqualFold(b.RowImage, "FULL") {
		problems = append(problems, fmt.Sprintf("binlog_row_image is %s (SET GLOBAL binlog_row_image=FULL, and binlog_row_image=FULL in my.cnf's [mysqld] to keep it)", b.RowImage))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrFeedUnusable, strings.Join(problems, "; "))
	}
	f.pos, f.gtid, err = f.server.Position(ctx, f.flavor)
	switch {
	case errors.Is(err, store.ErrNoBinlog):
		return fmt.Errorf("%w: %v", ErrFeedUnusable, err)
	case err != nil:
		return fmt.Errorf("%w: SHOW MASTER STATUS: %v (%s)", ErrFeedUnusable, err, f.grant())
	}
	if err := f.readColumns(ctx, f.o.Options); err != nil {
		return err
	}
	warning := ""
	if !strings.EqualFold(b.RowMetadata, "FULL") && len(f.cols[f.o.Options]) == 0 {
		warning = fmt.Sprintf("the log does not name the rows' columns (binlog_row_metadata is %q) and %s sees none of %s's: rows written outside the sidecar are not interpreted "+
			"(the history and webhooks miss their keys, --cache-rest drops every answer at each write); SET GLOBAL binlog_row_metadata=FULL (and in my.cnf), or GRANT SELECT ON %s.* to the feed's user",
			b.RowMetadata, f.o.Conn.User, f.o.Options, f.o.Schema)
	}
	f.warning.Store(warning)
	f.imageNoted.Store(false)
	return nil
}

// grant is the statement that lets the feed's user read the log (the
// account's host is the one SELECT CURRENT_USER() names; REPLICATION
// CLIENT is BINLOG MONITOR on MariaDB 10.5 and later, which still takes
// the old name).
func (f *Feed) grant() string {
	return fmt.Sprintf("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '%s'@'%%', the host as SELECT CURRENT_USER() names it", f.o.Conn.User)
}

// columns is the column names of a row event's table, in order, as many
// as the event has values: the log's own where the server names them
// (binlog_row_metadata=FULL), else read from information_schema, and
// read again when not known (a table created after the feed started),
// after a DDL statement, or when the count differs. nil when the table
// does not have that many columns now (an event older than a change of
// the table), or they cannot be read, which is logged.
func (f *Feed) columns(ctx context.Context, tm *replication.TableMapEvent) []string {
	n := int(tm.ColumnCount)
	if names := tm.ColumnNameString(); len(names) == n && n > 0 && names[0] != "" {
		return names
	}
	table := string(tm.Table)
	if c, ok := f.cols[table]; ok && !f.colsStale && len(c) == n {
		return c
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if f.colsStale {
		clear(f.cols) // every table's read again when next seen
		f.colsStale = false
	}
	if err := f.readColumns(rctx, table); err != nil {
		f.o.Log.Warn().Err(err).Str("table", table).Msg("binlog change feed: the table's columns could not be read; its rows in this transaction are not interpreted")
		return nil
	}
	if c := f.cols[table]; len(c) == n {
		return c
	}
	f.o.Log.Warn().Str("table", table).Int("logged", n).Int("now", len(f.cols[table])).
		Msg("binlog change feed: the log's rows do not match the table's columns now; its rows in this transaction are not interpreted")
	return nil
}

// readColumns learns the column order of the followed tables and of table
// (another site's, on a network): row events carry values, not names,
// unless the server logs them. What the feed's user may not see (a user
// with replication grants alone sees no columns) is read over the site's
// own connection, when there is one.
func (f *Feed) readColumns(ctx context.Context, table string) error {
	if f.cols == nil {
		f.cols = map[string][]string{}
	}
	tables := []string{f.o.Options, f.o.Users, f.o.Usermeta, table}
	for _, t := range f.o.Tables {
		tables = append(tables, t.Name)
	}
	for _, t := range tables {
		delete(f.cols, t)
	}
	cols, err := f.server.Columns(ctx, f.o.Schema, tables...)
	if err != nil {
		return err
	}
	if _, seen := cols[table]; !seen && f.o.Primary != nil {
		if cols, err = f.o.Primary.Columns(ctx, f.o.Schema, tables...); err != nil {
			return err
		}
	}
	for t, c := range cols {
		f.cols[t] = c
	}
	return nil
}

// Warning is what the feed follows the log without, at a cost ("" none):
// the rows' column names it can neither find in the log nor read (the
// last Check's word); rows logged without all their columns since.
func (f *Feed) Warning() string {
	w, _ := f.warning.Load().(string)
	if f.imageNoted.Load() {
		w = strings.TrimPrefix(w+"; rows were logged without all their columns (binlog_row_image is not FULL): such writes are not interpreted, and whatever memory keeps is dropped at each; SET GLOBAL binlog_row_image=FULL, and in my.cnf", "; ")
	}
	return w
}

// Run follows the log, from where Check found it, until ctx ends. A lost
// connection is resumed from the last committed transaction; when the
// server no longer has that position (binlogs purged) or refuses the
// feed, the feed logs why (Err), calls fallback (polling) and returns.
func (f *Feed) Run(ctx context.Context, fallback func(context.Context)) {
	f.why.Store(whyStopped{})
	f.mode.Store(ModeBinlog) // not current before the server's first heartbeat or look
	pctx, stopProbe := context.WithCancel(ctx)
	var probing sync.WaitGroup
	probing.Go(func() { f.probe(pctx, f.o.Heartbeat) })
	probing.Go(func() { f.looks(pctx) })
	defer probing.Wait()
	defer stopProbe()
	pause := 250 * time.Millisecond
	for ctx.Err() == nil {
		err := f.follow(ctx)
		if ctx.Err() != nil {
			return
		}
		var me *gomysql.MyError
		if errors.Is(err, errUnreadable) || errors.As(err, &me) && (me.Code == 1236 || me.Code == 1227 || me.Code == 1045) {
			switch {
			case me == nil:
			case me.Code == 1236:
				err = fmt.Errorf("%w: %v (the server no longer has the position the feed was at: its binary logs were purged)", ErrFeedUnusable, err)
			default:
				err = fmt.Errorf("%w: %v (%s)", ErrFeedUnusable, err, f.grant())
			}
			f.o.Log.Error().Err(err).Msg("binlog change feed cannot go on; falling back to polling")
			f.stop(err)
			fallback(ctx)
			return
		}
		f.o.Log.Warn().Err(err).Dur("retry_in", pause).Msg("binlog change feed interrupted; resuming from the last committed transaction")
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// follow reads events from the saved position until an error.
func (f *Feed) follow(ctx context.Context) error {
	cfg := replication.BinlogSyncerConfig{
		ServerID: f.o.ServerID, Flavor: f.flavor, User: f.o.Conn.User, Password: f.o.Conn.Passwd,
		HeartbeatPeriod: f.o.Heartbeat, ReadTimeout: 3 * f.o.Heartbeat, DisableRetrySync: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), UseDecimal: false, TLSConfig: f.tls,
	}
	host, port := splitHostPort(f.o.Conn.Addr)
	cfg.Host, cfg.Port = host, port
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	var streamer *replication.BinlogStreamer
	var err error
	if f.gtid != nil {
		streamer, err = syncer.StartSyncGTID(f.gtid.Clone())
	} else {
		streamer, err = syncer.StartSync(f.pos)
	}
	if err != nil {
		return err
	}
	f.caughtUp.Store(0)
	f.applied.reset()
	// Looks at the log's end reconnect too: to the server the stream now
	// follows, whose positions are the ones applied (a fail-over behind
	// one address changes servers).
	f.server.Reconnect()
	f.o.Log.Info().Str("file", f.pos.Name).Uint32("pos", f.pos.Pos).Str("gtid", gtidString(f.gtid)).Msg("binlog change feed following")
	defer f.settle(ctx)
	var tx pending
	file := f.pos.Name
	for {
		// While transactions wait to be shown, reading goes on; the wait
		// for the next event ends when it is time to look again.
		wait, stop := ctx, context.CancelFunc(func() {})
		if len(f.queue) > 0 || len(f.late) > 0 {
			wait, stop = context.WithDeadline(ctx, f.probeAt)
		}
		ev, err := streamer.GetEvent(wait)
		stop()
		switch {
		case err == nil:
			if err := f.apply(ctx, &tx, &file, ev, ev.Header.LogPos); err != nil {
				return err
			}
			f.lastSeen.Store(time.Now().UnixNano())
		case ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded):
			return err
		}
		if (len(f.queue) > 0 || len(f.late) > 0) && !time.Now().Before(f.probeAt) {
			f.confirm(ctx)
		}
	}
}

// apply takes one event of the log into tx, and reports tx at its commit;
// end is where the event ends in the log (for the events a compressed
// transaction holds, where the transaction does). An event the parser
// cannot decode is an error of the stream, after which the feed
// reconnects (and is not current meanwhile); one of a type it does not
// know at all may hold rows, and is errUnreadable: the feed gives up
// rather than miss a change.
func (f *Feed) apply(ctx context.Context, tx *pending, file *string, ev *replication.BinlogEvent, end uint32) error {
	switch e := ev.Event.(type) {
	case *replication.RotateEvent:
		*file = string(e.NextLogName)
		f.pos = gomysql.Position{Name: *file, Pos: uint32(e.Position)}
	case *replication.FormatDescriptionEvent, *replication.MariadbGTIDListEvent, *replication.MariadbBinlogCheckPointEvent, *replication.PreviousGTIDsEvent:
		// A file's first events: past them once nothing waits.
		f.between(tx, gomysql.Position{Name: *file, Pos: end})
	case *replication.TransactionPayloadEvent:
		// binlog_transaction_compression: the whole transaction, its
		// commit included, inside one event (decompressed by the parser).
		for _, inner := range e.Events {
			if err := f.apply(ctx, tx, file, inner, end); err != nil {
				return err
			}
		}
	case *replication.RowsEvent:
		f.collect(ctx, tx, e, ev.Header.EventType)
	case *replication.GTIDEvent:
		tx.gtid, tx.open = mysqlGTID(e), true
	case *replication.GtidTaggedLogEvent:
		tx.gtid, tx.open = mysqlGTID(&e.GTIDEvent), true
		if e.Tag != "" && f.gtid != nil {
			// The replication library resumes by GTID sets without
			// tags: from here on the feed resumes at its file position.
			f.o.Log.Info().Str("gtid", tx.gtid).Msg("binlog change feed: tagged GTIDs in the log; resuming by file position from now on")
			f.gtid = nil
		}
	case *replication.MariadbGTIDEvent:
		tx.gtid, tx.open = e.GTID.String(), true
	case *replication.XIDEvent:
		f.commit(tx, gomysql.Position{Name: *file, Pos: end}, e.GSet, ev.Header.Timestamp, true)
	case *replication.QueryEvent:
		switch q := string(e.Query); {
		case strings.EqualFold(q, "BEGIN"):
			tx.open = true
		case strings.EqualFold(q, "COMMIT"), strings.EqualFold(q, "ROLLBACK"):
			// A logged ROLLBACK ends rows of non-transactional tables,
			// which stay written.
			f.commit(tx, gomysql.Position{Name: *file, Pos: end}, e.GSet, ev.Header.Timestamp, false)
		default:
			// DDL, which commits by itself. Its schema is the session's
			// default database, not necessarily the table's: any counts.
			tx.touched.DDL = true
			f.colsStale = true
			f.commit(tx, gomysql.Position{Name: *file, Pos: end}, e.GSet, ev.Header.Timestamp, false)
		}
	default:
		switch t := ev.Header.EventType; {
		case t == replication.HEARTBEAT_EVENT || t == replication.HEARTBEAT_LOG_EVENT_V2:
			// Current once what came before is reported.
			if n := len(f.queue); n > 0 {
				f.queue[n-1].caughtUp = time.Now().UnixNano()
			} else {
				f.caughtUp.Store(time.Now().UnixNano())
			}
			f.between(tx, gomysql.Position{Name: *file, Pos: end})
		case t.String() == "UnknownEvent":
			return fmt.Errorf("%w: event type %d at %s:%d", errUnreadable, t, *file, end)
		}
	}
	return nil
}

// between moves the applied point to pos, an event's end outside any
// transaction, when no transaction waits to be reported.
func (f *Feed) between(tx *pending, pos gomysql.Position) {
	if !tx.open && len(f.queue) == 0 && pos.Pos > 0 {
		f.applied.advance(pos)
	}
}

// errUnreadable: the log holds an event the feed cannot read.
var errUnreadable = errors.New("binlog change feed: an event of a type it cannot read")

// mysqlGTID is a MySQL transaction's GTID as the server writes it:
// uuid:number, or uuid:tag:number (MySQL 8.3 on), so that two tags' same
// number are two transactions.
func mysqlGTID(e *replication.GTIDEvent) string {
	u, err := uuid.FromBytes(e.SID)
	if err != nil {
		return ""
	}
	if e.Tag != "" {
		return u.String() + ":" + e.Tag + ":" + strconv.FormatInt(e.GNO, 10)
	}
	return u.String() + ":" + strconv.FormatInt(e.GNO, 10)
}

// pending is what a transaction changed, reported at its commit.
type pending struct {
	sites   map[int64]*sitePending
	touched Touched
	// ours: the transaction wrote the history, as the sidecar's writes do.
	ours bool
	// gtid is the transaction's GTID, where the server has them.
	gtid string
	// written is a row the transaction wrote in each followed table, by
	// its primary key: what commit waits on to be visible.
	written []writtenRow
	// open: the transaction has begun (its GTID or BEGIN read) and not
	// ended.
	open bool
}

type writtenRow struct {
	table, column string
	id            int64
}

// sitePending is what a transaction changed of one site's namespaces,
// item by item, row image by row image.
type sitePending struct {
	tables  []objectPending // by FeedOptions.Tables' index
	options []objectPending // by FeedOptions.OptionRows' index
}

// objectPending is what a transaction changed of one site's table or
// option row of a namespace: the table (with the site's prefix) or the
// option's name, and its items.
type objectPending struct {
	object string
	items  []wpsidecar.Item
}

func (f *Feed) site(tx *pending, id int64) *sitePending {
	if tx.sites == nil {
		tx.sites = map[int64]*sitePending{}
	}
	if tx.sites[id] == nil {
		tx.sites[id] = &sitePending{tables: make([]objectPending, len(f.o.Tables)), options: make([]objectPending, len(f.o.OptionRows))}
	}
	return tx.sites[id]
}

// table is the index in FeedOptions.Tables of the table whose site-1 name
// is name; -1 for none.
func (f *Feed) table(name string) int {
	return slices.IndexFunc(f.o.Tables, func(t Table) bool { return t.Name == name })
}

// siteTable is the site-1 name of a site's table ({base}2_options:
// {base}options) and the site: 0 on a single site, 1 for the base
// prefix's tables on a network.
func (f *Feed) siteTable(table string) (string, int64) {
	base := f.o.BasePrefix
	if base == "" {
		return table, 0
	}
	if rest, ok := strings.CutPrefix(table, base); ok {
		if n, name, ok := strings.Cut(rest, "_"); ok {
			if id, err := strconv.ParseInt(n, 10, 64); err == nil && id > 1 && strconv.FormatInt(id, 10) == n {
				return base + name, id
			}
		}
	}
	return table, 1
}

// collect notes a row event's entities.
func (f *Feed) collect(ctx context.Context, tx *pending, e *replication.RowsEvent, et replication.EventType) {
	if string(e.Table.Schema) != f.o.Schema {
		return
	}
	table := string(e.Table.Table)
	if i := slices.Index(f.o.Sites, table); i >= 0 && i < len(sitesKeys) {
		tx.touched.Network = true
		// The site map is read again: once the transaction shows.
		if cols := f.columns(ctx, e.Table); cols != nil && len(e.Rows) > 0 {
			f.noteWritten(tx, table, sitesKeys[i], rowNum(cols, e.Rows[0], sitesKeys[i]))
		}
		return
	}
	name, siteID := f.siteTable(table)
	if f.readsRows(name) && !wholeImages(e) {
		// binlog_row_image is no longer FULL: what the feed reads of the
		// rows (their ids, an option's name) may be missing.
		tx.touched.DDL = true
		if f.imageNoted.CompareAndSwap(false, true) {
			f.o.Log.Error().Str("table", table).Msg("binlog change feed: rows logged without all their columns (binlog_row_image is not FULL): such writes are not interpreted, and whatever memory keeps is dropped at each; SET GLOBAL binlog_row_image=FULL, and in my.cnf")
		}
		return
	}
	rows := e.Rows
	if quiet := f.o.QuietColumns[name]; len(quiet) > 0 && isUpdate(et) {
		if cols := f.columns(ctx, e.Table); cols != nil {
			rows = loudRows(cols, rows, quiet)
		}
	}
	if f.o.EveryTable && len(rows) > 0 {
		tx.touched.wrote(siteID, name)
	}
	if want := f.o.RowValues[name]; len(want) > 0 && len(rows) > 0 {
		cols := f.columns(ctx, e.Table)
		if cols == nil {
			tx.touched.DDL = true // which rows is not known
			return
		}
		for _, row := range rows { // an update's before and after images both
			for _, c := range want {
				tx.touched.rowValue(siteID, name+"."+c, rowText(cols, row, c))
			}
		}
	}
	if pk := f.o.Keys[name]; pk != "" && len(rows) > 0 {
		if cols := f.columns(ctx, e.Table); cols != nil {
			f.noteWritten(tx, table, pk, rowNum(cols, rows[0], pk))
		}
	}
	ti := f.table(name)
	switch name {
	case f.o.HistoryTable:
		tx.ours = true
		return
	case f.o.Options, f.o.Users, f.o.Usermeta:
	default:
		if ti < 0 {
			return
		}
	}
	cols := f.columns(ctx, e.Table)
	if cols == nil {
		// The rows cannot be read: whatever kept them must let go.
		tx.touched.DDL = true
		return
	}
	col := func(row []any, name string) string { return rowString(cols, row, name) }
	num := func(row []any, name string) int64 { return rowNum(cols, row, name) }
	if pk := f.primaryKey(name); pk != "" && len(e.Rows) > 0 {
		f.noteWritten(tx, table, pk, num(e.Rows[0], pk))
	}
	switch {
	case ti >= 0:
		t := f.o.Tables[ti]
		if tx.touched.Tables == nil {
			tx.touched.Tables = map[string][]string{}
		}
		if _, ok := tx.touched.Tables[table]; !ok {
			tx.touched.Tables[table] = []string{} // written, whatever its keys read as
		}
		for _, row := range e.Rows {
			if k := col(row, t.Key); k != "" && !slices.Contains(tx.touched.Tables[table], k) {
				tx.touched.Tables[table] = append(tx.touched.Tables[table], k)
			}
		}
		image := func(row []any) map[string]string {
			m := make(map[string]string, len(cols))
			for _, c := range cols {
				m[c] = col(row, c)
			}
			return m
		}
		p := &f.site(tx, siteID).tables[ti]
		p.object = table
		p.items = append(p.items, tableItems(t, e.Rows, et, image)...)
	case name == f.o.Users, name == f.o.Usermeta:
		idCol := "ID"
		if table == f.o.Usermeta {
			idCol = "user_id"
		}
		for _, row := range e.Rows { // an update's before and after images both
			if id := num(row, idCol); id != 0 && !slices.Contains(tx.touched.UserIDs, id) {
				tx.touched.UserIDs = append(tx.touched.UserIDs, id)
			}
		}
	case name == f.o.Options:
		if tx.touched.Options == nil {
			tx.touched.Options = map[int64][]string{}
		}
		for _, row := range e.Rows {
			if name := col(row, "option_name"); name != "" && !slices.Contains(tx.touched.Options[siteID], name) {
				tx.touched.Options[siteID] = append(tx.touched.Options[siteID], name)
			}
		}
		f.collectOptions(tx, siteID, e.Rows, et, col)
	}
}

// readsRows tells whether the feed reads the rows of a table (site-1
// name name), not just its name: their ids, keys, an option's name.
func (f *Feed) readsRows(name string) bool {
	return len(f.o.RowValues[name]) > 0 || f.o.Keys[name] != "" || name == f.o.Options || name == f.o.Users || name == f.o.Usermeta || f.table(name) >= 0
}

// wholeImages tells whether e's row images hold every column of its
// table, as binlog_row_image=FULL logs them.
func wholeImages(e *replication.RowsEvent) bool {
	for _, bm := range [][]byte{e.ColumnBitmap1, e.ColumnBitmap2} {
		if bm == nil {
			continue
		}
		for i := range int(e.ColumnCount) {
			if i/8 >= len(bm) || bm[i/8]&(1<<(i%8)) == 0 {
				return false
			}
		}
	}
	return true
}

// loudRows are the before and after images of an update's rows (rows, in
// pairs) that changed a column but those named quiet.
func loudRows(cols []string, rows [][]any, quiet []string) [][]any {
	var out [][]any
	for i := 0; i+1 < len(rows); i += 2 {
		before, after := rows[i], rows[i+1]
		for c := range max(len(before), len(after)) {
			if c < len(cols) && slices.Contains(quiet, cols[c]) {
				continue
			}
			if c >= len(before) || c >= len(after) || !reflect.DeepEqual(before[c], after[c]) {
				out = append(out, before, after)
				break
			}
		}
	}
	return out
}

// collectOptions notes the items of the followed option rows a rows event
// of site's options table changed. col is a row image's text column.
func (f *Feed) collectOptions(tx *pending, siteID int64, rows [][]any, et replication.EventType, col func([]any, string) string) {
	for ri, r := range f.o.OptionRows {
		optName := r.Name(siteID)
		if optName == "" {
			continue
		}
		for i := 0; i < len(rows); i += step(et) {
			if col(rows[i], "option_name") != optName {
				continue
			}
			before, after := "", col(rows[i], "option_value")
			if isUpdate(et) && i+1 < len(rows) {
				before, after = after, col(rows[i+1], "option_value")
			} else if deleted(et) {
				before, after = after, ""
			}
			p := &f.site(tx, siteID).options[ri]
			p.object = optName
			p.items = append(p.items, r.Diff(before, after)...)
		}
	}
}

// tableItems are the items of a rows event of t's table: one a row
// written (its value as the history keeps it may not have changed: a
// write of its dates alone), and, for an update that changed a row's
// key, the old key's removal and the new one's creation. image is a row
// image's text columns by name.
func tableItems(t Table, rows [][]any, et replication.EventType, image func([]any) map[string]string) []wpsidecar.Item {
	var out []wpsidecar.Item
	add := func(before, after map[string]string) {
		key := after[t.Key]
		if before != nil {
			key = before[t.Key]
		}
		if key != "" {
			out = append(out, t.item(key, before, after))
		}
	}
	for i := 0; i < len(rows); i += step(et) {
		row := image(rows[i])
		switch {
		case isUpdate(et) && i+1 < len(rows):
			next := image(rows[i+1])
			if row[t.Key] != next[t.Key] {
				add(row, nil)
				add(nil, next)
			} else {
				add(row, next)
			}
		case deleted(et):
			add(row, nil)
		default:
			add(nil, row)
		}
	}
	return out
}

// isUpdate and deleted tell a rows event's kind. MariaDB's log_bin_compress
// writes rows events of types of their own; MySQL's
// binlog_row_value_options=PARTIAL_JSON logs every update as a partial one
// (full images of the followed tables, which have no JSON column).
func isUpdate(t replication.EventType) bool {
	switch t {
	case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
		replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.PARTIAL_UPDATE_ROWS_EVENT:
		return true
	}
	return false
}

func deleted(t replication.EventType) bool {
	switch t {
	case replication.DELETE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2,
		replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		return true
	}
	return false
}

// step is how many images a row has in an event: an update's before and
// after, one otherwise.
func step(t replication.EventType) int {
	if isUpdate(t) {
		return 2
	}
	return 1
}

// queued is a committed transaction read from the log and not reported
// yet.
type queued struct {
	tx   pending
	pos  gomysql.Position
	when uint32
	// ordered: it ended with an XID event, committed by the engine in the
	// log's order (its rows seen unlocked vouch for what came before it);
	// a statement of a table without transactions or a DDL statement did
	// not.
	ordered bool
	// by is when the wait for it ends: it is reported then, shown or not.
	by time.Time
	// shown: the primary shows it.
	shown bool
	// unseen: reported when its wait was over, the primary not showing
	// it yet: reported again once it does (recheckLate).
	unseen bool
	// caughtUp is a heartbeat that came after it (unix nanoseconds; 0
	// none): the feed is current as of then once it is reported.
	caughtUp int64
}

// commit queues a committed transaction, to be reported once the primary
// shows it (confirm), and makes its end (pos, and gset where the server
// has GTIDs) where the feed resumes.
func (f *Feed) commit(tx *pending, pos gomysql.Position, gset gomysql.GTIDSet, when uint32, ordered bool) {
	f.pos = pos
	if gset != nil {
		f.gtid = gset.Clone()
	}
	defer func() { *tx = pending{} }()
	if f.o.Subscriber == nil || tx.touched.empty() && len(tx.sites) == 0 {
		if len(f.queue) == 0 {
			f.applied.advance(pos) // nothing to report, nothing waiting
		}
		return
	}
	f.queue = append(f.queue, queued{tx: *tx, pos: pos, when: when, ordered: ordered, by: time.Now().Add(f.o.CommitWait)})
	if len(f.queue) == 1 {
		f.probeAt, f.pause = time.Time{}, time.Millisecond // look at once
	}
}

// report tells the subscriber what a transaction did — what it wrote
// (Touched), then one Commit per namespace of each site it changed.
func (f *Feed) report(q queued) {
	tx := q.tx
	if !tx.touched.empty() {
		f.o.Subscriber.Touched(tx.touched)
	}
	// The transaction's GTID names it on every server of the replication;
	// without GTIDs, its place in this server's log.
	origin := tx.gtid
	if origin == "" {
		origin = q.pos.Name + ":" + strconv.FormatUint(uint64(q.pos.Pos), 10)
	}
	author := wpsidecar.Author{Login: wpsidecar.LoginPHP, Via: wpsidecar.ViaBinlog}
	if tx.ours {
		author = wpsidecar.Author{Via: wpsidecar.ViaBinlog}
	}
	at := time.Unix(int64(q.when), 0).UTC()
	for _, id := range slices.Sorted(maps.Keys(tx.sites)) {
		site := tx.sites[id]
		var commits []wpsidecar.Commit
		for i, t := range site.tables {
			commits = append(commits, wpsidecar.Commit{Site: id, Namespace: f.o.Tables[i].Namespace, Object: t.object, Items: t.items})
		}
		for i, o := range site.options {
			commits = append(commits, wpsidecar.Commit{Site: id, Namespace: f.o.OptionRows[i].Namespace, Object: o.object, Items: o.items})
		}
		for _, c := range commits {
			if len(c.Items) == 0 {
				continue
			}
			c.Origin, c.Author, c.When = origin, author, at
			ev := f.o.Log.Info().Str("namespace", string(c.Namespace)).Strs("keys", keys(c)).Str("via", ModeBinlog)
			if id > 0 {
				ev = ev.Int64("blog_id", id)
			}
			ev.Msg("stored data changed")
			f.o.Subscriber.Commit(c)
		}
	}
	if q.caughtUp != 0 {
		f.caughtUp.Store(q.caughtUp)
	}
}

// sitesKeys are the primary keys of a network's tables of sites, in
// FeedOptions.Sites' order ({base}blogs, {base}site).
var sitesKeys = [2]string{"blog_id", "id"}

// rowNum is the integer column name of a row image (0 when there is none).
func rowNum(cols []string, row []any, name string) int64 {
	if i := slices.Index(cols, name); i >= 0 && i < len(row) {
		switch v := row[i].(type) {
		case int64:
			return v
		case uint64:
			return int64(v)
		case int32:
			return int64(v)
		case uint32:
			return int64(v)
		case int16:
			return int64(v)
		case uint16:
			return int64(v)
		case int8:
			return int64(v)
		case uint8:
			return int64(v)
		}
	}
	return 0
}

// rowString is a row's text column as it is; "" for another type or no
// such column.
func rowString(cols []string, row []any, name string) string {
	if i := slices.Index(cols, name); i >= 0 && i < len(row) {
		switch v := row[i].(type) {
		case string:
			return v
		case []byte:
			return string(v)
		}
	}
	return ""
}

// rowText is a row's column as text: a text column as it is, an integer
// in decimal; "" for NULL, another type or no such column.
func rowText(cols []string, row []any, name string) string {
	if s := rowString(cols, row, name); s != "" {
		return s
	}
	if n := rowNum(cols, row, name); n != 0 {
		return strconv.FormatInt(n, 10)
	}
	return ""
}

// noteWritten keeps a row the transaction wrote in table, by its primary
// key, for commit to wait on (one per table).
func (f *Feed) noteWritten(tx *pending, table, pk string, id int64) {
	if id == 0 || slices.ContainsFunc(tx.written, func(w writtenRow) bool { return w.table == table }) {
		return
	}
	tx.written = append(tx.written, writtenRow{table, pk, id})
}

// primaryKey is the primary key column of a followed table (site-1
// name); "" for none.
func (f *Feed) primaryKey(name string) string {
	if i := f.table(name); i >= 0 {
		return f.o.Tables[i].ID
	}
	switch name {
	case f.o.Options:
		return "option_id"
	case f.o.Users:
		return "ID"
	case f.o.Usermeta:
		return "umeta_id"
	}
	return ""
}

// confirm looks whether the primary shows the queued transactions —
// in the engine, a transaction commits after it is in the log — and
// reports, in order, those it shows, so that what a subscriber reads
// again, or a reader of the memo reads once it is forgotten, is the new
// row. Nothing after a transaction is reported before it; but a row of
// it locked by a later transaction (which could only lock it once this
// one had committed) holds up neither the reading of the log nor, where
// the server commits in the log's order, the transactions after it: one
// of them shown is every one before it shown. A transaction still not
// shown after CommitWait is reported anyway.
func (f *Feed) confirm(ctx context.Context) {
	if len(f.late) > 0 {
		f.recheckLate(ctx)
	}
	// From the newest: where the server commits in order, a read of the
	// newest that shows it settles the whole queue (a burst of commits
	// read between two looks costs one read, not one each), and only the
	// newest and the oldest are read (a hot row that each transaction
	// locks while the next holds it costs two reads a look, not one per
	// transaction queued).
	looked := false
	for i := len(f.queue) - 1; i >= 0; i-- {
		q := &f.queue[i]
		switch {
		case q.shown:
			continue
		case f.o.Primary == nil || ctx.Err() != nil: // nothing to wait on, or for
			q.shown = true
			continue
		case f.ordered && q.ordered && looked && i > 0:
			q.shown = !time.Now().Before(q.by) // its wait over: reported unread
			q.unseen = q.shown
			continue
		}
		seen, done := f.visible(ctx, q)
		looked = looked || q.ordered
		if !done {
			continue
		}
		q.shown = true
		// Only a row seen unlocked vouches for what came before it; a
		// transaction reported for want of a read (its wait over, no row
		// to read, a read that failed) vouches for nothing.
		if seen && q.ordered && f.ordered {
			for j := range i {
				f.queue[j].shown = true
			}
			break
		}
	}
	n := 0
	for n < len(f.queue) && f.queue[n].shown {
		f.report(f.queue[n])
		if f.queue[n].unseen && len(f.queue[n].tx.written) > 0 && f.o.Primary != nil {
			f.noteLate(f.queue[n])
		}
		n++
	}
	switch {
	case n == len(f.queue):
		f.applied.advance(f.pos) // and what came after them, with nothing to report
	case n > 0:
		f.applied.advance(f.queue[n-1].pos)
	}
	f.queue = slices.Delete(f.queue, 0, n)
	f.probeAt = time.Now().Add(f.pause)
	f.pause = min(2*f.pause, 20*time.Millisecond)
}

// visible tells whether the primary shows q — seen: one of its rows read
// unlocked (InnoDB releases all of a transaction's locks at once) — and
// whether to report it now (done): seen, or nothing to wait on or for
// (no row to read, ctx ended, its wait over, reads refused for good). A
// row that cannot be read (its table dropped since) is not read again.
func (f *Feed) visible(ctx context.Context, q *queued) (seen, done bool) {
	locked := "" // a table whose row was locked
	for _, r := range slices.Clone(q.tx.written) {
		if f.o.Primary == nil || ctx.Err() != nil {
			return false, true
		}
		rctx, cancel := context.WithDeadline(ctx, q.by)
		ok, err := f.o.Primary.Committed(rctx, r.table, r.column, r.id)
		over := rctx.Err() != nil
		cancel()
		switch {
		case ok:
			return true, true
		case err == nil || over:
			locked = r.table
		case errors.Is(err, store.ErrCannotLock):
			// Refused for good (the grants): asking again for every
			// transaction would only repeat it.
			f.o.Log.Error().Err(err).Str("table", r.table).Msg("binlog change feed: cannot tell when the primary shows a transaction; reporting transactions as the log has them from now on")
			f.o.Primary = nil
			return false, true
		default:
			f.o.Log.Warn().Err(err).Str("table", r.table).Msg("binlog change feed: could not tell when the primary shows a transaction")
			q.tx.written = slices.DeleteFunc(q.tx.written, func(w writtenRow) bool { return w == r })
		}
	}
	switch {
	case locked == "" || ctx.Err() != nil:
		return false, true
	case time.Now().Before(q.by):
		return false, false
	}
	f.o.Log.Warn().Str("table", locked).Dur("waited", f.o.CommitWait).Msg("binlog change feed: a transaction's row is still locked on the primary; reporting it anyway, and again once the primary shows it")
	q.unseen = true
	return false, true
}

// lateLimit bounds how long a transaction reported before the primary
// showed it is looked at, and maxLate how many are: past either,
// everything kept is dropped, once.
const (
	lateLimit = time.Minute
	maxLate   = 256
)

// noteLate keeps q, reported before the primary showed it, to report
// again once it does: one a row (a later one of the same row stands for
// it), at most maxLate.
func (f *Feed) noteLate(q queued) {
	r := q.tx.written[0]
	f.late = slices.DeleteFunc(f.late, func(l queued) bool { return l.tx.written[0] == r })
	if len(f.late) >= maxLate {
		f.o.Log.Warn().Int("late", len(f.late)).Msg("binlog change feed: too many transactions reported before the primary showed them; everything kept is forgotten")
		f.o.Subscriber.Touched(Touched{DDL: true})
		clear(f.late)
		f.late = f.late[:0]
	}
	f.late = append(f.late, q)
}

// recheckLate reports again each transaction reported before the primary
// showed it, once the primary does: what was read meanwhile (the old
// rows) and kept is dropped again. One still not shown after lateLimit
// has everything kept dropped.
func (f *Feed) recheckLate(ctx context.Context) {
	keep := f.late[:0]
	for _, q := range f.late {
		r := q.tx.written[0]
		ok, err := false, error(nil)
		if f.o.Primary != nil {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			ok, err = f.o.Primary.Committed(cctx, r.table, r.column, r.id)
			cancel()
		}
		switch {
		case ok:
			f.o.Log.Info().Str("table", r.table).Msg("binlog change feed: a transaction reported before the primary showed it is shown now; what was kept meanwhile is forgotten again")
			f.o.Subscriber.Touched(q.tx.touched)
		case f.o.Primary != nil && err == nil && time.Since(q.by) < lateLimit:
			keep = append(keep, q)
		default:
			f.o.Log.Warn().Err(err).Str("table", r.table).Msg("binlog change feed: a transaction reported before the primary showed it still is not shown; everything kept is forgotten")
			f.o.Subscriber.Touched(Touched{DDL: true})
		}
	}
	clear(f.late[len(keep):])
	f.late = keep
}

// settle reports what is still queued once follow stops reading: as
// confirm does while ctx lasts (CommitWait bounds it), at once after.
func (f *Feed) settle(ctx context.Context) {
	for {
		f.confirm(ctx)
		if len(f.queue) == 0 {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(f.pause):
		}
	}
}

func gtidString(g gomysql.GTIDSet) string {
	if g == nil {
		return ""
	}
	return g.String()
}

// splitHostPort splits a driver address; no port means MySQL's 3306.
func splitHostPort(addr string) (string, uint16) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return strings.Trim(addr, "[]"), 3306
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return host, 3306
	}
	return host, uint16(p)
}

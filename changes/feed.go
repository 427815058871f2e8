package changes

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
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

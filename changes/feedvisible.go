package changes

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/store"
)

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
	if f.o.Subscriber == nil || touchedNothing(tx.touched) && len(tx.sites) == 0 {
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
	if !touchedNothing(tx.touched) {
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
			commits = append(commits, wpsidecar.Commit{BlogID: id, Namespace: f.o.Tables[i].Namespace, Object: t.object, Items: t.items})
		}
		for i, o := range site.options {
			commits = append(commits, wpsidecar.Commit{BlogID: id, Namespace: f.o.OptionRows[i].Namespace, Object: o.object, Items: o.items})
		}
		for _, c := range commits {
			if len(c.Items) == 0 {
				continue
			}
			c.Origin, c.Author, c.When = origin, author, at
			ev := f.o.Log.Info().Str("namespace", string(c.Namespace)).Strs("keys", c.DistinctKeys()).Str("via", ModeBinlog)
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
		f.o.Subscriber.Touched(wpsidecar.Touched{DDL: true})
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
			f.o.Subscriber.Touched(wpsidecar.Touched{DDL: true})
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

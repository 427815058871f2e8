package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/history"
)

// The history keeps, per site, every change to the namespaces' data (the
// HistoryUnits'), whoever made it. Its table,
// {prefix}wpsidecar_history, is created on first use. Every entry is
// written by one function (record), whichever way the change came: the
// sidecar's own writes go through it inside the write's transaction (the
// entry commits with the write, or neither does), and others' changes, as
// the binlog feed saw them, through Record (changes' history subscriber),
// by their name in the log. One recorder keeps one row format, one rule of
// what is an entry and one way of naming a change however many instances
// see it; store is its home because the own writes' entries must share
// their transaction, which only store holds.

// HistoryUnit is a namespace whose history is kept, as the store sees
// it: its unit, whose HistoryTag its entries' origins carry, and its
// Reverter. cmd hands them (Options.HistoryUnits), so that the history
// names no namespace and a new one adds its own.
type HistoryUnit struct {
	Unit     wpsidecar.Unit
	Reverter Reverter
}

// Reverter writes a namespace's history entries back. It is SQL, so each
// namespace's lives in store beside that namespace's writes.
type Reverter interface {
	// Revert writes e's "before" back through db (the entry's site),
	// through the namespace's own writes, recorded in turn by rv.By:
	// wpsidecar.ErrChanged, with nothing written, when the value now is
	// not e's "after" and rv.Force is not set; wpsidecar.ErrUnrevertable
	// when e cannot be written back.
	Revert(ctx context.Context, db *DB, e history.Entry, rv Revert) error
}

// historyUnits are the HistoryUnits by namespace.
type historyUnits map[wpsidecar.Namespace]HistoryUnit

// newHistoryUnits checks the units given: each complete, and no namespace
// or origin tag twice (two namespaces' entries of one transaction would
// have one origin, and the table would keep only the first).
func newHistoryUnits(list []HistoryUnit) (historyUnits, error) {
	out := historyUnits{}
	tags := map[string]wpsidecar.Namespace{}
	for _, u := range list {
		if u.Unit == nil {
			return nil, errors.New("store: a history unit without its Unit")
		}
		ns, tag := u.Unit.Namespace(), u.Unit.HistoryTag()
		if u.Reverter == nil {
			return nil, fmt.Errorf("store: history unit %q has no Reverter", ns)
		}
		if _, dup := out[ns]; dup {
			return nil, fmt.Errorf("store: history unit %q given twice", ns)
		}
		if tag == "" {
			return nil, fmt.Errorf("store: history unit %q has no origin tag", ns)
		}
		if other, dup := tags[tag]; dup {
			return nil, fmt.Errorf("store: history units %q and %q have one origin tag, %q", other, ns, tag)
		}
		out[ns], tags[tag] = u, ns
	}
	return out, nil
}

func equalPtr(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// History is one site's history table.
type History struct {
	db    *DB
	table string
}

// History is the site's history, or nil when the sidecar keeps none.
func (db *DB) History() *History {
	if !db.keepHistory {
		return nil
	}
	return &History{db: db, table: db.Table("wpsidecar_history")}
}

// Table is the history table's name.
func (h *History) Table() string { return h.table }

// ensure creates the table the first time it is needed.
func (h *History) ensure(ctx context.Context, q querier) error {
	if _, ok := h.db.historyReady.Load(h.table); ok {
		return nil
	}
	_, err := q.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS `"+h.table+"` ("+
		"id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, namespace VARCHAR(20) NOT NULL, object VARCHAR(191) NOT NULL, "+
		"item_key BLOB NOT NULL, before_value LONGBLOB NULL, after_value LONGBLOB NULL, "+
		"user_id BIGINT UNSIGNED NOT NULL DEFAULT 0, user_login VARCHAR(191) NOT NULL DEFAULT '', via VARCHAR(20) NOT NULL, "+
		"request_id VARCHAR(128) NOT NULL DEFAULT '', origin VARCHAR(191) NULL, changed_gmt DATETIME NOT NULL, "+
		"PRIMARY KEY (id), UNIQUE KEY origin (origin), KEY item_key (item_key(191)), KEY changed_gmt (changed_gmt)"+
		") DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_520_ci")
	if err != nil {
		return fmt.Errorf("store: create %s: %w", h.table, classify(err))
	}
	h.db.historyReady.Store(h.table, true)
	return nil
}

const historyColumns = "id, namespace, object, item_key, before_value, after_value, user_id, user_login, via, request_id, changed_gmt"

// record adds c's items as entries through q: a writer's transaction
// (the table is created beforehand, outside it: DDL would commit it), or
// the pool. c.Object is what they belong to: the theme options row, the
// field groups' table, another namespace's own. An item whose value did
// not change (a write of a group's dates alone) is no entry. A change named in the log (c.Origin)
// is recorded once however many instances record it: each entry's origin
// is the change's, its namespace's letter (its unit's HistoryTag) and the
// entry's place. A namespace without a HistoryUnit is refused.
func (h *History) record(ctx context.Context, q querier, c wpsidecar.Commit) error {
	if h == nil {
		return nil
	}
	when := c.When
	if when.IsZero() {
		when = time.Now()
	}
	at := when.UTC().Format(time.DateTime)
	u, ok := h.db.historyUnits[c.Namespace]
	if !ok {
		// Its entries' origins would name no one namespace's change.
		return fmt.Errorf("store: history: namespace %q is not among the store's HistoryUnits", c.Namespace)
	}
	tag := u.Unit.HistoryTag()
	// The place counts the entries kept, not the items: a write of a
	// group's dates alone is no entry and no place, so an origin names
	// the same entry as an instance of an earlier version (which was
	// handed only the changed items) does, and the table keeps it once
	// during a rolling upgrade.
	n := 0
	for _, it := range c.Items {
		if equalPtr(it.Before, it.After) {
			continue
		}
		var origin any
		if c.Origin != "" {
			origin = c.Origin + "/" + tag + "#" + strconv.Itoa(n)
		}
		n++
		// Another instance may have recorded it: that is no error, any
		// other is.
		_, err := q.ExecContext(ctx, "INSERT INTO `"+h.table+"` (namespace, object, item_key, before_value, after_value, user_id, user_login, via, request_id, origin, changed_gmt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE id = id",
			string(c.Namespace), c.Object, []byte(it.Key), nullable(it.Before), nullable(it.After), c.Author.UserID, c.Author.Login, c.Author.Via, c.Author.RequestID, origin, at)
		if err != nil {
			return fmt.Errorf("store: history: %w", classify(err))
		}
	}
	return nil
}

func nullable(s *string) any {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

// Record adds what c changed, as a change detector saw it, to the
// history: a change another writer committed, named by c.Origin. Every
// instance may record it; the table keeps it once.
func (h *History) Record(ctx context.Context, c wpsidecar.Commit) error {
	if err := h.ensure(ctx, h.db.sql); err != nil {
		return err
	}
	return h.record(ctx, h.db.sql, c)
}

// List returns a page of entries, newest first, and how many match in all.
// A missing table is an empty history.
func (h *History) List(ctx context.Context, f history.Filter) ([]history.Entry, int, error) {
	var where []string
	var args []any
	if f.Namespace != "" {
		where, args = append(where, "namespace = ?"), append(args, f.Namespace)
	}
	if f.Key != "" {
		where, args = append(where, "item_key = ?"), append(args, []byte(f.Key))
	}
	if !f.Since.IsZero() {
		where, args = append(where, "changed_gmt >= ?"), append(args, f.Since.UTC().Format(time.DateTime))
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int
	err := h.db.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM `"+h.table+"`"+cond, args...).Scan(&total)
	if missingTable(err) {
		return []history.Entry{}, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("store: history: %w", classify(err))
	}
	page, per := max(f.Page, 1), max(f.PerPage, 1)
	if (page-1)*per >= total {
		return []history.Entry{}, total, nil
	}
	rows, err := h.db.sql.QueryContext(ctx, "SELECT "+historyColumns+" FROM `"+h.table+"`"+cond+" ORDER BY id DESC LIMIT ? OFFSET ?",
		append(args, per, (page-1)*per)...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: history: %w", classify(err))
	}
	defer rows.Close()
	out := []history.Entry{}
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("store: history: %w", classify(err))
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: history: %w", classify(err))
	}
	return out, total, nil
}

// missingTable: MySQL's "no such table".
func missingTable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1146
}

func scanEntry(s interface{ Scan(...any) error }) (history.Entry, error) {
	var e history.Entry
	var before, after []byte
	err := s.Scan(&e.ID, &e.Namespace, &e.Object, &e.Key, &before, &after, &e.UserID, &e.Login, &e.Via, &e.RequestID, &e.DateGMT)
	if before != nil {
		b := string(before)
		e.Before = &b
	}
	if after != nil {
		a := string(after)
		e.After = &a
	}
	return e, err
}

// Get returns one entry; wpsidecar.ErrNotFound when there is none.
func (h *History) Get(ctx context.Context, id int64) (history.Entry, error) {
	e, err := scanEntry(h.db.sql.QueryRowContext(ctx, "SELECT "+historyColumns+" FROM `"+h.table+"` WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) || missingTable(err) {
		return history.Entry{}, wpsidecar.ErrNotFound
	}
	if err != nil {
		return history.Entry{}, fmt.Errorf("store: history: %w", classify(err))
	}
	return e, nil
}

// Prune deletes entries older than maxAge and all but the newest maxCount
// (a zero bound is no bound), and tells how many went.
func (h *History) Prune(ctx context.Context, maxAge time.Duration, maxCount int) (int64, error) {
	var gone int64
	if maxAge > 0 {
		n, err := h.deleteBatches(ctx, "changed_gmt < ?", time.Now().UTC().Add(-maxAge).Format(time.DateTime))
		if missingTable(err) {
			return 0, nil
		}
		gone += n
		if err != nil {
			return gone, err
		}
	}
	if maxCount > 0 {
		var edge int64
		err := h.db.sql.QueryRowContext(ctx, "SELECT id FROM `"+h.table+"` ORDER BY id DESC LIMIT 1 OFFSET ?", maxCount).Scan(&edge)
		switch {
		case errors.Is(err, sql.ErrNoRows) || missingTable(err):
		case err != nil:
			return gone, fmt.Errorf("store: prune history: %w", classify(err))
		default:
			n, err := h.deleteBatches(ctx, "id <= ?", edge)
			gone += n
			if err != nil {
				return gone, err
			}
		}
	}
	return gone, nil
}

// deleteBatches deletes the rows where cond holds a thousand at a time, so
// that no statement holds the table's locks for long.
func (h *History) deleteBatches(ctx context.Context, cond string, arg any) (int64, error) {
	var gone int64
	for {
		res, err := h.db.sql.ExecContext(ctx, "DELETE FROM `"+h.table+"` WHERE "+cond+" LIMIT 1000", arg)
		if err != nil {
			return gone, fmt.Errorf("store: prune history: %w", classify(err))
		}
		n, _ := res.RowsAffected()
		gone += n
		if n < 1000 {
			return gone, nil
		}
	}
}

// Revert is how a revert writes: by whom, the site's local time for a
// group's dates, the site's db_version for the autoload of the options row
// it writes (ModifyOption), and force to write even when the value changed
// since the entry.
type Revert struct {
	By        wpsidecar.Author
	Now       string
	DBVersion int64
	Force     bool
}

// Revert writes entry id's "before" back, through its namespace's
// Reverter: the same writes as every other (recorded in turn).
// wpsidecar.ErrChanged, with nothing written, when the current value is
// not the entry's "after" and rv.Force is not set; ErrUnrevertable for a
// namespace without a HistoryUnit.
func (h *History) Revert(ctx context.Context, id int64, rv Revert) error {
	e, err := h.Get(ctx, id)
	if err != nil {
		return err
	}
	rv.By.Via = wpsidecar.ViaRevert
	u, ok := h.db.historyUnits[wpsidecar.Namespace(e.Namespace)]
	if !ok {
		return fmt.Errorf("store: history entry %d has namespace %q: %w", id, e.Namespace, wpsidecar.ErrUnrevertable)
	}
	return u.Reverter.Revert(ctx, h.db, e, rv)
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/history"
)

// FieldGroups is the field-group table.
type FieldGroups struct {
	db    *DB
	table string
}

// FieldGroups returns the table named table (validated).
func (db *DB) FieldGroups(table string) (*FieldGroups, error) {
	if !identRe.MatchString(table) {
		return nil, fmt.Errorf("store: invalid field-group table name %q", table)
	}
	return &FieldGroups{db: db, table: table}, nil
}

// Table is the table's name.
func (f *FieldGroups) Table() string { return f.table }

// EnsureTable creates the table when it is missing and reports whether it
// did; an existing table is never altered.
func (f *FieldGroups) EnsureTable(ctx context.Context) (bool, error) {
	var n int
	err := f.db.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", f.table).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: %w", classify(err))
	}
	if n > 0 {
		return false, nil
	}
	_, err = f.db.sql.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS `"+f.table+"` ("+
		"id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, group_key VARCHAR(191) NOT NULL, title TEXT NOT NULL, "+
		"config LONGTEXT NOT NULL, status VARCHAR(20) NOT NULL DEFAULT 'active', created_at DATETIME NOT NULL, "+
		"updated_at DATETIME NOT NULL, PRIMARY KEY (id), UNIQUE KEY group_key (group_key), KEY status (status)"+
		") DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_520_ci")
	if err != nil {
		return false, fmt.Errorf("store: create %s: %w", f.table, classify(err))
	}
	return true, nil
}

// DATETIME columns come as "YYYY-MM-DD HH:MM:SS" text (no parseTime), the contract's form.
const groupColumns = "group_key, title, config, status, created_at, updated_at"

func scanGroup(s interface{ Scan(...any) error }) (fieldgroup.Group, error) {
	var g fieldgroup.Group
	err := s.Scan(&g.Key, &g.Title, &g.Config, &g.Status, &g.CreatedAt, &g.UpdatedAt)
	return g, err
}

// GroupList is every group in creation order, as one read of the table
// found them, and that read's version: a number no other read of a list
// has (within the process). The memo hands out the same GroupList,
// version and all, for as long as it keeps it, and a read that replaces
// it gets a new version; so two lists of the same version are the same
// list, and an answer made from one may be given for the other
// (fieldmgr's rendered list). Version 0 is no read's: never the same as
// another. Groups is never modified.
type GroupList struct {
	Groups  []fieldgroup.Group
	Version uint64
}

// List returns every group in creation order.
func (f *FieldGroups) List(ctx context.Context) ([]fieldgroup.Group, error) {
	l, err := f.Listed(ctx)
	return l.Groups, err
}

// Listed is List with its version (GroupList).
func (f *FieldGroups) Listed(ctx context.Context) (GroupList, error) {
	var out GroupList
	if err := f.db.readAlone(ctx, f.ListPiggyback(&out)); err != nil {
		return GroupList{}, fmt.Errorf("store: field groups: %w", err)
	}
	return out, nil
}

func scanGroups(rows *sql.Rows) ([]fieldgroup.Group, error) {
	out := []fieldgroup.Group{}
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// Get returns the group whose key is exactly key (case-sensitive, although
// the column's collation is not).
func (f *FieldGroups) Get(ctx context.Context, key string) (fieldgroup.Group, error) {
	var g fieldgroup.Group
	var found bool
	if err := f.db.readAlone(ctx, f.GetPiggyback(key, &g, &found)); err != nil {
		return fieldgroup.Group{}, fmt.Errorf("store: field group: %w", err)
	}
	if !found {
		return fieldgroup.Group{}, wpsidecar.ErrNotFound
	}
	return g, nil
}

// Create inserts a new active group; now is the site's local time.
func (f *FieldGroups) Create(ctx context.Context, key, title, config, now string, by wpsidecar.Author) error {
	return f.change(ctx, "create field group", key, by, func(q querier, _ fieldgroup.Group, found bool) error {
		if found {
			return wpsidecar.ErrDuplicate
		}
		return exec(ctx, q, "INSERT INTO `"+f.table+"` (group_key, title, config, status, created_at, updated_at) VALUES (?, ?, ?, 'active', ?, ?)",
			key, title, config, now, now)
	})
}

// Update sets the title and/or config (nil leaves a value as it is) and
// moves updated_at. check, when not nil, decides on the row as read under
// the lock (its error is returned as is, nothing written).
func (f *FieldGroups) Update(ctx context.Context, key string, title, config *string, now string, check func(fieldgroup.Group) error, by wpsidecar.Author) error {
	set := []string{"updated_at = ?"}
	args := []any{now}
	if title != nil {
		set = append(set, "title = ?")
		args = append(args, *title)
	}
	if config != nil {
		set = append(set, "config = ?")
		args = append(args, *config)
	}
	args = append(args, key, key)
	return f.change(ctx, "update field group", key, by, existing(check, func(q querier, _ fieldgroup.Group) error {
		return exec(ctx, q, "UPDATE `"+f.table+"` SET "+strings.Join(set, ", ")+" WHERE group_key = ? AND BINARY group_key = ?", args...)
	}))
}

// Delete removes the group for good; check as for Update.
func (f *FieldGroups) Delete(ctx context.Context, key string, check func(fieldgroup.Group) error, by wpsidecar.Author) error {
	return f.change(ctx, "delete field group", key, by, existing(check, func(q querier, _ fieldgroup.Group) error {
		return exec(ctx, q, "DELETE FROM `"+f.table+"` WHERE group_key = ? AND BINARY group_key = ?", key, key)
	}))
}

// Toggle flips the status and returns the new one; concurrent toggles are
// serialised by the row lock, so each sees the status its own flip made.
// check as for Update.
func (f *FieldGroups) Toggle(ctx context.Context, key, now string, check func(fieldgroup.Group) error, by wpsidecar.Author) (next string, err error) {
	err = f.change(ctx, "toggle field group", key, by, existing(check, func(q querier, g fieldgroup.Group) error {
		next = fieldgroup.StatusInactive
		if g.Status != fieldgroup.StatusActive {
			next = fieldgroup.StatusActive
		}
		return exec(ctx, q, "UPDATE `"+f.table+"` SET status = ?, updated_at = ? WHERE group_key = ? AND BINARY group_key = ?", next, now, key, key)
	}))
	return next, err
}

// Put makes the group what v says — created (with now as both dates),
// changed (updated_at now) or left alone when it already is — after check
// approved the row as read under the lock (found false when missing).
func (f *FieldGroups) Put(ctx context.Context, key string, v fieldgroup.Value, now string, check func(g fieldgroup.Group, found bool) error, by wpsidecar.Author) error {
	return f.change(ctx, "put field group", key, by, func(q querier, g fieldgroup.Group, found bool) error {
		if err := check(g, found); err != nil {
			return err
		}
		switch {
		case !found:
			return exec(ctx, q, "INSERT INTO `"+f.table+"` (group_key, title, config, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
				key, v.Title, v.Config, v.Status, now, now)
		case g.Title != v.Title || g.Config != v.Config || g.Status != v.Status:
			return exec(ctx, q, "UPDATE `"+f.table+"` SET title = ?, config = ?, status = ?, updated_at = ? WHERE group_key = ? AND BINARY group_key = ?",
				v.Title, v.Config, v.Status, now, key, key)
		}
		return nil
	})
}

// sqlFailed is a statement's failure, as against a write's decision.
type sqlFailed struct{ error }

func (e sqlFailed) Unwrap() error { return e.error }

func exec(ctx context.Context, q querier, query string, args ...any) error {
	if _, err := q.ExecContext(ctx, query, args...); err != nil {
		return sqlFailed{err}
	}
	return nil
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// existing is a change of a group that must exist, after check (when not
// nil) approved it.
func existing(check func(fieldgroup.Group) error, write func(querier, fieldgroup.Group) error) func(querier, fieldgroup.Group, bool) error {
	return func(q querier, g fieldgroup.Group, found bool) error {
		if !found {
			return wpsidecar.ErrNotFound
		}
		if check != nil {
			if err := check(g); err != nil {
				return err
			}
		}
		return write(q, g)
	}
}

// change is every write of a group: in one transaction the row is read
// under a lock, write decides and writes (an error of its own is returned
// as is, nothing written), and what changed is recorded in the history.
// It runs in READ COMMITTED so that reading a missing row takes no gap
// lock: of two creators, the second waits on the first's insert and fails
// with a duplicate key.
func (f *FieldGroups) change(ctx context.Context, what, key string, by wpsidecar.Author, write func(q querier, g fieldgroup.Group, found bool) error) error {
	defer f.forget()
	hist := f.db.History()
	return f.db.onPrimary(ctx, func(conn *sql.Conn) error {
		if hist != nil {
			if err := hist.ensure(ctx, conn); err != nil {
				return err
			}
		}
		tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			return fmt.Errorf("store: %s: %w", what, classify(err))
		}
		defer tx.Rollback()
		before, found, err := f.lockedGet(ctx, tx, key)
		if err != nil {
			return err
		}
		if err := write(tx, before, found); err != nil {
			var failed sqlFailed
			var me *mysql.MySQLError
			switch {
			case errors.As(err, &me) && me.Number == 1062:
				return wpsidecar.ErrDuplicate
			case errors.As(err, &failed):
				return fmt.Errorf("store: %s: %w", what, classify(failed.error))
			}
			return err
		}
		after, exists, err := f.lockedGet(ctx, tx, key)
		if err != nil {
			return err
		}
		if c, changed := fieldgroup.Diff(key, before, found, after, exists); changed {
			if err := hist.record(ctx, tx, wpsidecar.Commit{Namespace: wpsidecar.FieldGroups, Object: f.table, Items: []wpsidecar.Item{c}, Author: by}); err != nil {
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("store: %s: %w", what, classify(err))
		}
		return nil
	})
}

// lockedGet reads the group under a row lock held until tx ends.
func (f *FieldGroups) lockedGet(ctx context.Context, tx *sql.Tx, key string) (fieldgroup.Group, bool, error) {
	g, err := scanGroup(tx.QueryRowContext(ctx, "SELECT "+groupColumns+" FROM `"+f.table+"` WHERE group_key = ? AND BINARY group_key = ? FOR UPDATE", key, key))
	if errors.Is(err, sql.ErrNoRows) {
		return fieldgroup.Group{}, false, nil
	}
	if err != nil {
		return fieldgroup.Group{}, false, fmt.Errorf("store: field group: %w", classify(err))
	}
	return g, true, nil
}

// forget drops the memo's groups after a write (whatever its outcome: a
// failed commit may still have committed).
func (f *FieldGroups) forget() { f.db.memo.Forget(Changed{Tables: []string{f.table}}) }

// ListPiggyback is Listed as a ride-along read (see Piggyback): the
// groups and their version land in *dst.
func (f *FieldGroups) ListPiggyback(dst *GroupList) *Piggyback {
	return &Piggyback{kind: kindTable, key: "list\x00" + f.table,
		query: "SELECT " + groupColumns + " FROM `" + f.table + "` ORDER BY id",
		read: func(rows *sql.Rows) (any, error) {
			groups, err := scanGroups(rows)
			if err != nil {
				return nil, err
			}
			return GroupList{Groups: groups, Version: f.db.listReads.Add(1)}, nil
		},
		take: func(v any) { *dst = v.(GroupList) }}
}

// groupRow is one group, or not found.
type groupRow struct {
	g     fieldgroup.Group
	found bool
}

// GetPiggyback is Get as a ride-along read: the group lands in *dst, or
// *found stays false.
func (f *FieldGroups) GetPiggyback(key string, dst *fieldgroup.Group, found *bool) *Piggyback {
	return &Piggyback{kind: kindTable, key: "group\x00" + f.table + "\x00" + key,
		query: "SELECT " + groupColumns + " FROM `" + f.table + "` WHERE group_key = ? AND BINARY group_key = ?", args: []any{key, key},
		read: func(rows *sql.Rows) (any, error) {
			var r groupRow
			for rows.Next() {
				g, err := scanGroup(rows)
				if err != nil {
					return nil, err
				}
				r = groupRow{g, true}
			}
			return r, rows.Err()
		},
		take: func(v any) { r := v.(groupRow); *dst, *found = r.g, r.found }}
}

// Versions maps every group's key to a digest of its stored row: cheap to
// read every few seconds, and it changes exactly when the row does. A
// missing table is no groups. SHA2 is the digest both servers have: MySQL
// 9 removed MD5() and SHA1().
func (f *FieldGroups) Versions(ctx context.Context) (map[string]string, error) {
	rows, err := f.db.sql.QueryContext(ctx, "SELECT group_key, SHA2(CONCAT_WS(CHAR(31), title, config, status, created_at, updated_at), 256) FROM `"+f.table+"`")
	if missingTable(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: field group versions: %w", classify(err))
	}
	return pairs(rows, "field group versions")
}

// Rows reads the groups of keys as stored now, from the primary as
// Versions does (a poller reads them when their versions changed); a key
// with no row is absent, and so is every key when the table is missing.
func (f *FieldGroups) Rows(ctx context.Context, keys []string) (map[string]fieldgroup.Group, error) {
	out := map[string]fieldgroup.Group{}
	if len(keys) == 0 {
		return out, nil
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	rows, err := f.db.sql.QueryContext(ctx, "SELECT "+groupColumns+" FROM `"+f.table+"` WHERE group_key IN (?"+strings.Repeat(",?", len(keys)-1)+")", args...)
	if missingTable(err) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: field groups: %w", classify(err))
	}
	groups, err := scanGroups(rows)
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("store: field groups: %w", classify(err))
	}
	for _, g := range groups {
		out[g.Key] = g
	}
	return out, nil
}

// FieldGroupsReverter writes a field group's history entry back (e.Object
// is its table): the group as it was, with rv.Now its date, or no group
// when the entry created it.
type FieldGroupsReverter struct{}

// Revert writes e's "before" back; see Reverter.
func (FieldGroupsReverter) Revert(ctx context.Context, db *DB, e history.Entry, rv Revert) error {
	groups, err := db.FieldGroups(e.Object)
	if err != nil {
		return fmt.Errorf("store: history entry %d: %w", e.ID, wpsidecar.ErrUnrevertable)
	}
	check := func(g fieldgroup.Group, found bool) error {
		var cur *string
		if found {
			s := g.Value().JSON()
			cur = &s
		}
		if !rv.Force && !equalPtr(cur, e.After) {
			return wpsidecar.ErrChanged
		}
		return nil
	}
	if e.Before == nil {
		return groups.change(ctx, "revert field group", e.Key, rv.By, func(q querier, g fieldgroup.Group, found bool) error {
			if err := check(g, found); err != nil || !found {
				return err
			}
			return exec(ctx, q, "DELETE FROM `"+groups.table+"` WHERE group_key = ? AND BINARY group_key = ?", e.Key, e.Key)
		})
	}
	v, err := fieldgroup.ParseValue(*e.Before)
	if err != nil {
		return fmt.Errorf("store: history entry %d: %w", e.ID, wpsidecar.ErrUnrevertable)
	}
	return groups.Put(ctx, e.Key, v, rv.Now, check, rv.By)
}

// Package fieldgrouptable is the field groups' SQL: their table, its reads
// and writes, each write recorded in the history, and writing a history
// entry back. It belongs to the fieldmgr namespace and writes through
// store's pool, memo and history, so that store knows no namespace's rows.
package fieldgrouptable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/history"
	"github.com/wpsidecar/wpsidecar/store"
)

// Groups is the field-group table.
type Groups struct {
	db    *store.DB
	table string
}

// Open returns the table named table (validated) of db.
func Open(db *store.DB, table string) (*Groups, error) {
	if !store.ValidTable(table) {
		return nil, fmt.Errorf("store: invalid field-group table name %q", table)
	}
	return &Groups{db: db, table: table}, nil
}

// Table is the table's name.
func (f *Groups) Table() string { return f.table }

// EnsureTable creates the table when it is missing and reports whether it
// did; an existing table is never altered.
func (f *Groups) EnsureTable(ctx context.Context) (bool, error) {
	var n int
	err := f.db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", f.table).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: %w", store.Classify(err))
	}
	if n > 0 {
		return false, nil
	}
	_, err = f.db.SQL().ExecContext(ctx, "CREATE TABLE IF NOT EXISTS `"+f.table+"` ("+
		"id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, group_key VARCHAR(191) NOT NULL, title TEXT NOT NULL, "+
		"config LONGTEXT NOT NULL, status VARCHAR(20) NOT NULL DEFAULT 'active', created_at DATETIME NOT NULL, "+
		"updated_at DATETIME NOT NULL, PRIMARY KEY (id), UNIQUE KEY group_key (group_key), KEY status (status)"+
		") DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_520_ci")
	if err != nil {
		return false, fmt.Errorf("store: create %s: %w", f.table, store.Classify(err))
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
func (f *Groups) List(ctx context.Context) ([]fieldgroup.Group, error) {
	l, err := f.Listed(ctx)
	return l.Groups, err
}

// Listed is List with its version (GroupList).
func (f *Groups) Listed(ctx context.Context) (GroupList, error) {
	var out GroupList
	if err := f.db.ReadAlone(ctx, f.ListPiggyback(&out)); err != nil {
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
func (f *Groups) Get(ctx context.Context, key string) (fieldgroup.Group, error) {
	var g fieldgroup.Group
	var found bool
	if err := f.db.ReadAlone(ctx, f.GetPiggyback(key, &g, &found)); err != nil {
		return fieldgroup.Group{}, fmt.Errorf("store: field group: %w", err)
	}
	if !found {
		return fieldgroup.Group{}, wpsidecar.ErrNotFound
	}
	return g, nil
}

// Create inserts a new active group; now is the site's local time.
func (f *Groups) Create(ctx context.Context, key, title, config, now string, by wpsidecar.Author) error {
	return f.change(ctx, "create field group", key, by, func(q store.Querier, _ fieldgroup.Group, found bool) error {
		if found {
			return wpsidecar.ErrDuplicate
		}
		return store.Exec(ctx, q, "INSERT INTO `"+f.table+"` (group_key, title, config, status, created_at, updated_at) VALUES (?, ?, ?, 'active', ?, ?)",
			key, title, config, now, now)
	})
}

// Update sets the title and/or config (nil leaves a value as it is) and
// moves updated_at. check, when not nil, decides on the row as read under
// the lock (its error is returned as is, nothing written).
func (f *Groups) Update(ctx context.Context, key string, title, config *string, now string, check func(fieldgroup.Group) error, by wpsidecar.Author) error {
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
	return f.change(ctx, "update field group", key, by, existing(check, func(q store.Querier, _ fieldgroup.Group) error {
		return store.Exec(ctx, q, "UPDATE `"+f.table+"` SET "+strings.Join(set, ", ")+" WHERE group_key = ? AND BINARY group_key = ?", args...)
	}))
}

// Delete removes the group for good; check as for Update.
func (f *Groups) Delete(ctx context.Context, key string, check func(fieldgroup.Group) error, by wpsidecar.Author) error {
	return f.change(ctx, "delete field group", key, by, existing(check, func(q store.Querier, _ fieldgroup.Group) error {
		return store.Exec(ctx, q, "DELETE FROM `"+f.table+"` WHERE group_key = ? AND BINARY group_key = ?", key, key)
	}))
}

// Toggle flips the status and returns the new one; concurrent toggles are
// serialised by the row lock, so each sees the status its own flip made.
// check as for Update.
func (f *Groups) Toggle(ctx context.Context, key, now string, check func(fieldgroup.Group) error, by wpsidecar.Author) (next string, err error) {
	err = f.change(ctx, "toggle field group", key, by, existing(check, func(q store.Querier, g fieldgroup.Group) error {
		next = fieldgroup.StatusInactive
		if g.Status != fieldgroup.StatusActive {
			next = fieldgroup.StatusActive
		}
		return store.Exec(ctx, q, "UPDATE `"+f.table+"` SET status = ?, updated_at = ? WHERE group_key = ? AND BINARY group_key = ?", next, now, key, key)
	}))
	return next, err
}

// Put makes the group what v says — created (with now as both dates),
// changed (updated_at now) or left alone when it already is — after check
// approved the row as read under the lock (found false when missing).
func (f *Groups) Put(ctx context.Context, key string, v fieldgroup.Value, now string, check func(g fieldgroup.Group, found bool) error, by wpsidecar.Author) error {
	return f.change(ctx, "put field group", key, by, func(q store.Querier, g fieldgroup.Group, found bool) error {
		if err := check(g, found); err != nil {
			return err
		}
		switch {
		case !found:
			return store.Exec(ctx, q, "INSERT INTO `"+f.table+"` (group_key, title, config, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
				key, v.Title, v.Config, v.Status, now, now)
		case g.Title != v.Title || g.Config != v.Config || g.Status != v.Status:
			return store.Exec(ctx, q, "UPDATE `"+f.table+"` SET title = ?, config = ?, status = ?, updated_at = ? WHERE group_key = ? AND BINARY group_key = ?",
				v.Title, v.Config, v.Status, now, key, key)
		}
		return nil
	})
}

// existing is a change of a group that must exist, after check (when not
// nil) approved it.
func existing(check func(fieldgroup.Group) error, write func(store.Querier, fieldgroup.Group) error) func(store.Querier, fieldgroup.Group, bool) error {
	return func(q store.Querier, g fieldgroup.Group, found bool) error {
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

// change is every write of a group (store.ChangeTable): write decides
// on the row as read under a lock (found false when missing) and writes;
// what changed is recorded in the history.
func (f *Groups) change(ctx context.Context, what, key string, by wpsidecar.Author, write func(q store.Querier, g fieldgroup.Group, found bool) error) error {
	return f.db.ChangeTable(ctx, f.table, what, func(tx *sql.Tx) (*wpsidecar.Commit, error) {
		before, found, err := f.lockedGet(ctx, tx, key)
		if err != nil {
			return nil, err
		}
		if err := write(tx, before, found); err != nil {
			return nil, err
		}
		after, exists, err := f.lockedGet(ctx, tx, key)
		if err != nil {
			return nil, err
		}
		c, changed := fieldgroup.Diff(key, before, found, after, exists)
		if !changed {
			return nil, nil
		}
		return &wpsidecar.Commit{Namespace: wpsidecar.FieldGroups, Object: f.table, Items: []wpsidecar.Item{c}, Author: by}, nil
	})
}

// lockedGet reads the group under a row lock held until tx ends.
func (f *Groups) lockedGet(ctx context.Context, tx *sql.Tx, key string) (fieldgroup.Group, bool, error) {
	g, err := scanGroup(tx.QueryRowContext(ctx, "SELECT "+groupColumns+" FROM `"+f.table+"` WHERE group_key = ? AND BINARY group_key = ? FOR UPDATE", key, key))
	if errors.Is(err, sql.ErrNoRows) {
		return fieldgroup.Group{}, false, nil
	}
	if err != nil {
		return fieldgroup.Group{}, false, fmt.Errorf("store: field group: %w", store.Classify(err))
	}
	return g, true, nil
}

// ListPiggyback is Listed as a ride-along read (see Piggyback): the
// groups and their version land in *dst.
func (f *Groups) ListPiggyback(dst *GroupList) *store.Piggyback {
	return store.TableRead("list\x00"+f.table, "SELECT "+groupColumns+" FROM `"+f.table+"` ORDER BY id", nil,
		func(rows *sql.Rows) (any, error) {
			groups, err := scanGroups(rows)
			if err != nil {
				return nil, err
			}
			return GroupList{Groups: groups, Version: f.db.NextListVersion()}, nil
		},
		func(v any) { *dst = v.(GroupList) })
}

// groupRow is one group, or not found.
type groupRow struct {
	g     fieldgroup.Group
	found bool
}

// Missing: a read that found no group, which the memo does not keep (a
// group created later must be seen).
func (r groupRow) Missing() bool { return !r.found }

// GetPiggyback is Get as a ride-along read: the group lands in *dst, or
// *found stays false.
func (f *Groups) GetPiggyback(key string, dst *fieldgroup.Group, found *bool) *store.Piggyback {
	return store.TableRead("group\x00"+f.table+"\x00"+key, "SELECT "+groupColumns+" FROM `"+f.table+"` WHERE group_key = ? AND BINARY group_key = ?", []any{key, key},
		func(rows *sql.Rows) (any, error) {
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
		func(v any) { r := v.(groupRow); *dst, *found = r.g, r.found })
}

// Versions maps every group's key to a digest of its stored row: cheap to
// read every few seconds, and it changes exactly when the row does. A
// missing table is no groups. SHA2 is the digest both servers have: MySQL
// 9 removed MD5() and SHA1().
func (f *Groups) Versions(ctx context.Context) (map[string]string, error) {
	rows, err := f.db.SQL().QueryContext(ctx, "SELECT group_key, SHA2(CONCAT_WS(CHAR(31), title, config, status, created_at, updated_at), 256) FROM `"+f.table+"`")
	if store.MissingTable(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: field group versions: %w", store.Classify(err))
	}
	return store.Pairs(rows, "field group versions")
}

// Rows reads the groups of keys as stored now, from the primary as
// Versions does (a poller reads them when their versions changed); a key
// with no row is absent, and so is every key when the table is missing.
func (f *Groups) Rows(ctx context.Context, keys []string) (map[string]fieldgroup.Group, error) {
	out := map[string]fieldgroup.Group{}
	if len(keys) == 0 {
		return out, nil
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	rows, err := f.db.SQL().QueryContext(ctx, "SELECT "+groupColumns+" FROM `"+f.table+"` WHERE group_key IN (?"+strings.Repeat(",?", len(keys)-1)+")", args...)
	if store.MissingTable(err) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: field groups: %w", store.Classify(err))
	}
	groups, err := scanGroups(rows)
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("store: field groups: %w", store.Classify(err))
	}
	for _, g := range groups {
		out[g.Key] = g
	}
	return out, nil
}

// Reverter writes a field group's history entry back (e.Object
// is its table): the group as it was, with rv.Now its date, or no group
// when the entry created it.
type Reverter struct{}

// Revert writes e's "before" back; see Reverter.
func (Reverter) Revert(ctx context.Context, db *store.DB, e history.Entry, rv store.Revert) error {
	groups, err := Open(db, e.Object)
	if err != nil {
		return fmt.Errorf("store: history entry %d: %w", e.ID, wpsidecar.ErrUnrevertable)
	}
	check := func(g fieldgroup.Group, found bool) error {
		var cur *string
		if found {
			s := g.Value().JSON()
			cur = &s
		}
		return rv.Allows(cur, e)
	}
	if e.Before == nil {
		return groups.change(ctx, "revert field group", e.Key, rv.By, func(q store.Querier, g fieldgroup.Group, found bool) error {
			if err := check(g, found); err != nil || !found {
				return err
			}
			return store.Exec(ctx, q, "DELETE FROM `"+groups.table+"` WHERE group_key = ? AND BINARY group_key = ?", e.Key, e.Key)
		})
	}
	v, err := fieldgroup.ParseValue(*e.Before)
	if err != nil {
		return fmt.Errorf("store: history entry %d: %w", e.ID, wpsidecar.ErrUnrevertable)
	}
	return groups.Put(ctx, e.Key, v, rv.Now, check, rv.By)
}

// Values are the groups of keys, by key, as the history keeps them
// (fieldgroup.Value's JSON): what a poller compares, as
// changes.TableRows.
func (f *Groups) Values(ctx context.Context, keys []string) (map[string]string, error) {
	rows, err := f.Rows(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for k, g := range rows {
		out[k] = g.Value().JSON()
	}
	return out, nil
}

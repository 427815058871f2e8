package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/history"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// WordPress's options.autoload rules changed in 6.6, which left
// db_version at 6.5's 57155: a site at 57155 may run either, and is taken
// for 6.6 (the releases since have higher numbers: 6.7 58975, 6.8 60421).
const dbVersion66 = 57155

// maxAutoloadedOptionSize is the default of wp_max_autoloaded_option_size:
// since 6.6 a value whose serialized form is longer is not autoloaded
// unless asked for.
const maxAutoloadedOptionSize = 150000

// UpdateOptionAutoload is the autoload an options row has after the site's
// own update_option($name, $value) — called without an autoload, as every
// write of the sidecar is — writes a new value into it: existing is the
// row's autoload (found false: there is no row; update_option then adds
// one) and size the length in bytes of the serialized value written
// (maybe_serialize, strlen). dbVersion is the site's db_version.
//
// Before 6.6 a new row gets "yes" and an existing row keeps its own. From
// 6.6 (wp_determine_option_autoload_value with the core filter
// wp_filter_default_autoload_value_via_option_size) a new row gets "auto",
// or "auto-off" when size is over 150000; an existing row whose autoload
// was set automatically ("auto", "auto-on", "auto-off") is re-evaluated the
// same way, and any other ("yes", "no", "on", "off") keeps its own.
//
// Whatever the version, update_option writes nothing at all when the value
// is unchanged, the autoload included: ModifyOption does not ask then.
func UpdateOptionAutoload(dbVersion int64, existing string, found bool, size int) string {
	if dbVersion < dbVersion66 {
		if found {
			return existing
		}
		return "yes"
	}
	auto := "auto"
	if size > maxAutoloadedOptionSize {
		auto = "auto-off"
	}
	if found && existing != "auto" && existing != "auto-on" && existing != "auto-off" {
		return existing
	}
	return auto
}

// optionRow is an option's raw value as stored, or not found.
type optionRow struct {
	value string
	found bool
}

// OptionPiggyback is a ride-along read (see Piggyback) of one option's raw
// value, as stored: *found stays false when the row is missing.
func (db *DB) OptionPiggyback(name string, dst *string, found *bool) *Piggyback {
	return &Piggyback{kind: kindOption, key: db.Table("options") + "\x00" + optionKey(name),
		query: "SELECT option_value FROM " + db.Table("options") + " WHERE option_name = ? LIMIT 1", args: []any{name},
		read: func(rows *sql.Rows) (any, error) {
			var r optionRow
			for rows.Next() {
				if err := rows.Scan(&r.value); err != nil {
					return nil, err
				}
				r.found = true
			}
			return r, rows.Err()
		},
		take: func(v any) { r := v.(optionRow); *dst, *found = r.value, r.found }}
}

// RawOption reads one option's value as stored, without get_option's
// filters; wpsidecar.ErrNotFound when the row is missing.
func (db *DB) RawOption(ctx context.Context, name string) (string, error) {
	var v string
	var found bool
	if err := db.readAlone(ctx, db.OptionPiggyback(name, &v, &found)); err != nil {
		return "", fmt.Errorf("store: option %q: %w", name, err)
	}
	if !found {
		return "", wpsidecar.ErrNotFound
	}
	return v, nil
}

// ModifyOption changes one option row in one transaction: the row is read
// under a lock (SELECT … FOR UPDATE), modify gets its value (found false
// when the row is missing) and returns the new one, which is written before
// the lock is let go, so concurrent callers never lose each other's
// changes. The row's autoload is what the site's own update_option would
// leave (UpdateOptionAutoload, by dbVersion, the site's db_version); as
// there, a value that comes back unchanged writes nothing, and a row whose
// value PHP reads as false (serialized false, or a serialized value that
// does not unserialize) is written as update_option does such a row,
// through add_option: with the autoload of a new row. When modify returns
// an error nothing is written and the error is returned as is. The
// transaction runs in READ COMMITTED so that reading a missing row takes no
// gap lock: of two creators, the second waits on the first's insert, fails
// with a duplicate key and is retried, finding the row the first made
// (retries pause a short random while). When rec is not nil the row is a
// namespace's and the items its Diff finds changed are recorded in the
// history, in the write's transaction.
func (db *DB) ModifyOption(ctx context.Context, name string, dbVersion int64, rec *Recorded, modify func(value string, found bool) (string, error)) error {
	var err error
	for attempt := 1; attempt <= 20; attempt++ {
		err = db.modifyOption(ctx, name, dbVersion, rec, modify)
		if !retryable(err) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("store: option %q: %w", name, ctx.Err())
		case <-time.After(time.Duration(rand.Int64N(int64(attempt) * int64(time.Millisecond)))):
		}
	}
	return err
}

// Recorded is what a write of an option row that holds a namespace
// (ModifyOption) records in the history: the caller, which knows the
// namespace, names it and gives its rules' diff of two of the row's values
// as stored ("" where there was no row), so that the store knows none.
type Recorded struct {
	Namespace wpsidecar.Namespace
	Diff      func(before, after string) []wpsidecar.Item
	By        wpsidecar.Author
}

func (db *DB) modifyOption(ctx context.Context, name string, dbVersion int64, rec *Recorded, modify func(string, bool) (string, error)) error {
	return db.onPrimary(ctx, func(conn *sql.Conn) error { return db.modifyOptionOn(ctx, conn, name, dbVersion, rec, modify) })
}

func (db *DB) modifyOptionOn(ctx context.Context, conn *sql.Conn, name string, dbVersion int64, rec *Recorded, modify func(string, bool) (string, error)) error {
	var hist *History
	if rec != nil {
		if hist = db.History(); hist != nil {
			if err := hist.ensure(ctx, conn); err != nil {
				return err
			}
		}
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return fmt.Errorf("store: option %q: %w", name, classify(err))
	}
	defer tx.Rollback()
	table := db.Table("options")
	var (
		id                int64
		current, autoload string
	)
	err = tx.QueryRowContext(ctx, "SELECT option_id, option_value, autoload FROM "+table+" WHERE option_name = ? LIMIT 1 FOR UPDATE", name).Scan(&id, &current, &autoload)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: option %q: %w", name, classify(err))
	}
	next, err := modify(current, found)
	if err != nil {
		return err
	}
	if found && next == current {
		// Unchanged: nothing to write, as update_option does.
		return nil
	}
	autoload = UpdateOptionAutoload(dbVersion, autoload, found && !readsAsFalse(current), len(next))
	if found {
		_, err = tx.ExecContext(ctx, "UPDATE "+table+" SET option_value = ?, autoload = ? WHERE option_id = ?", next, autoload, id)
	} else {
		_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (option_name, option_value, autoload) VALUES (?, ?, ?)", name, next, autoload)
	}
	if err != nil {
		return fmt.Errorf("store: option %q: %w", name, classify(err))
	}
	if hist != nil {
		if err := hist.record(ctx, tx, wpsidecar.Commit{Namespace: rec.Namespace, Object: name, Items: rec.Diff(current, next), Author: rec.By}); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: option %q: %w", name, classify(err))
	}
	db.memo.Forget(Changed{Options: []string{name}})
	if db.cache != nil {
		db.cache.OptionChanged(ctx, db.blog, name)
	}
	return nil
}

// readsAsFalse tells whether get_option gives false for a row holding raw
// (maybe_unserialize's false: serialized false, or serialized data PHP
// cannot unserialize): update_option takes such a row for a missing one.
func readsAsFalse(raw string) bool {
	v, err := phpserial.MaybeUnserialize(raw)
	return err != nil || (v.Kind == phpserial.Bool && !v.Bool)
}

// retryable: a deadlock, or a row another transaction created between our
// read and our insert.
func retryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1062)
}

// OptionArrayReverter writes a history entry back into the options row
// e.Object, through ModifyOption (with rv.DBVersion), for a namespace kept
// as one serialized array in an option row, an item an entry of it by its
// key (the theme options'): the entry's value as it was, or no entry when
// the history's entry added it. Namespace and Diff record the revert as
// any write of the row.
type OptionArrayReverter struct {
	Namespace wpsidecar.Namespace
	Diff      func(before, after string) []wpsidecar.Item
}

// errNothing: a forced revert finds nothing to do.
var errNothing = errors.New("nothing to revert")

// Revert writes e's "before" back; see Reverter.
func (r OptionArrayReverter) Revert(ctx context.Context, db *DB, e history.Entry, rv Revert) error {
	rec := &Recorded{Namespace: r.Namespace, Diff: r.Diff, By: rv.By}
	err := db.ModifyOption(ctx, e.Object, rv.DBVersion, rec, func(raw string, found bool) (string, error) {
		set := phpserial.Value{Kind: phpserial.Array}
		if found {
			v, err := phpserial.MaybeUnserialize(raw)
			if err != nil || (v.Kind != phpserial.Array && v.Kind != phpserial.Object) {
				return "", fmt.Errorf("store: option %q is not an array: %w", e.Object, wpsidecar.ErrUnrevertable)
			}
			set = v
		} else if e.Before == nil {
			return "", errNothing // forced: the row is gone, the id with it
		}
		at := slices.IndexFunc(set.Entries, func(x phpserial.Entry) bool { return x.Key.String() == e.Key })
		var cur *string
		if at >= 0 {
			s := phpserial.Serialize(set.Entries[at].Value)
			cur = &s
		}
		if err := rv.Allows(cur, e); err != nil {
			return "", err
		}
		switch {
		case e.Before == nil && at >= 0:
			set.Entries = slices.Delete(set.Entries, at, at+1)
		case e.Before != nil:
			v, err := phpserial.Unserialize(*e.Before)
			if err != nil {
				return "", fmt.Errorf("store: history entry %d: %w", e.ID, wpsidecar.ErrUnrevertable)
			}
			if at >= 0 {
				set.Entries[at].Value = v
			} else {
				set.Entries = append(set.Entries, phpserial.Entry{Key: phpserial.StrKey(e.Key), Value: v})
			}
		}
		return phpserial.Serialize(set), nil
	})
	if errors.Is(err, errNothing) {
		return nil
	}
	return err
}

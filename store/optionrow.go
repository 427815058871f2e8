package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-sql-driver/mysql"
)

// OptionAutoload is the autoload value the site's own update_option would
// give a row it creates: "yes" before WordPress 6.6 (db_version 57155),
// "auto" since (docs/api.md §3).
func OptionAutoload(dbVersion int64) string {
	if dbVersion < 57155 {
		return "yes"
	}
	return "auto"
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
// filters; ErrNotFound when the row is missing.
func (db *DB) RawOption(ctx context.Context, name string) (string, error) {
	var v string
	var found bool
	if err := db.readAlone(ctx, db.OptionPiggyback(name, &v, &found)); err != nil {
		return "", fmt.Errorf("store: option %q: %w", name, err)
	}
	if !found {
		return "", ErrNotFound
	}
	return v, nil
}

// ModifyOption changes one option row in one transaction: the row is read
// under a lock (SELECT … FOR UPDATE), modify gets its value (found false
// when the row is missing) and returns the new one, which is written before
// the lock is let go, so concurrent callers never lose each other's
// changes. A row that exists keeps its autoload; a missing one is created
// with autoload. When modify returns an error nothing is written and the
// error is returned as is. The transaction runs in READ COMMITTED so that
// reading a missing row takes no gap lock: of two creators, the second
// waits on the first's insert, fails with a duplicate key and is retried,
// finding the row the first made (retries pause a short random while).
// When by is not nil the row is the theme options set and its ids' changes
// are recorded in the history, by that author.
func (db *DB) ModifyOption(ctx context.Context, name, autoload string, by *Author, modify func(value string, found bool) (string, error)) error {
	var err error
	for attempt := 1; attempt <= 20; attempt++ {
		err = db.modifyOption(ctx, name, autoload, by, modify)
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

func (db *DB) modifyOption(ctx context.Context, name, autoload string, by *Author, modify func(string, bool) (string, error)) error {
	return db.onPrimary(ctx, func(conn *sql.Conn) error { return db.modifyOptionOn(ctx, conn, name, autoload, by, modify) })
}

func (db *DB) modifyOptionOn(ctx context.Context, conn *sql.Conn, name, autoload string, by *Author, modify func(string, bool) (string, error)) error {
	var hist *History
	if by != nil {
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
		id      int64
		current string
	)
	err = tx.QueryRowContext(ctx, "SELECT option_id, option_value FROM "+table+" WHERE option_name = ? LIMIT 1 FOR UPDATE", name).Scan(&id, &current)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: option %q: %w", name, classify(err))
	}
	next, err := modify(current, found)
	if err != nil {
		return err
	}
	switch {
	case found && next == current:
		// Unchanged: nothing to write, as update_option does.
		return nil
	case found:
		_, err = tx.ExecContext(ctx, "UPDATE "+table+" SET option_value = ? WHERE option_id = ?", next, id)
	default:
		_, err = tx.ExecContext(ctx, "INSERT INTO "+table+" (option_name, option_value, autoload) VALUES (?, ?, ?)", name, next, autoload)
	}
	if err != nil {
		return fmt.Errorf("store: option %q: %w", name, classify(err))
	}
	if hist != nil {
		if err := hist.record(ctx, tx, HistoryThemeopts, name, *by, DiffOptions(current, next)); err != nil {
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

// retryable: a deadlock, or a row another transaction created between our
// read and our insert.
func retryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1062)
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/history"
)

// What a namespace kept in a table of its own needs of the store: its
// SQL lives in a package of its own under store (store/fieldgrouptable for the
// field groups), owned by the namespace, so that store itself knows no
// namespace's rows; these are the pool, the memo, the history and the
// error rules such a package writes through.

// ValidTable reports whether name may be put in a statement as a table's
// name: the sidecar puts names in statements only after this check.
func ValidTable(name string) bool { return identRe.MatchString(name) }

// Classify is the store's reading of a statement's failure: a lost or
// refused connection wraps ErrUnavailable (the HTTP layer answers 503),
// other failures stay as they are.
func Classify(err error) error { return classify(err) }

// MissingTable reports a statement's failure on a table that does not
// exist (a namespace's table not made yet reads as empty).
func MissingTable(err error) bool { return missingTable(err) }

// Pairs reads two-column rows (name, value) into a map, the first row of
// a name winning; what names the read in errors. The rows are closed.
func Pairs(rows *sql.Rows, what string) (map[string]string, error) { return pairs(rows, what) }

// Querier is what a table's writes run statements on: a transaction.
type Querier = querier

// Exec runs a statement of a write; its failure is the statement's, not
// the write's decision (ChangeTable tells them apart).
func Exec(ctx context.Context, q Querier, query string, args ...any) error {
	if _, err := q.ExecContext(ctx, query, args...); err != nil {
		return sqlFailed{err}
	}
	return nil
}

// sqlFailed is a statement's failure, as against a write's decision.
type sqlFailed struct{ error }

func (e sqlFailed) Unwrap() error { return e.error }

// ChangeTable is every write of a row of a namespace's own table: in one
// transaction on the primary, write reads what it changes under a lock,
// decides and writes, and returns what changed (nil when nothing did),
// which is recorded in the history in the same transaction. It runs in
// READ COMMITTED so that reading a missing row takes no gap lock: of two
// creators, the second waits on the first's insert and fails with a
// duplicate key (wpsidecar.ErrDuplicate). An error of write's own is
// returned as is, nothing written; a statement's failure (Exec) as the
// store's error, what naming the write. The memo forgets the table's
// reads afterwards, whatever the outcome: a failed commit may still have
// committed.
func (db *DB) ChangeTable(ctx context.Context, table, what string, write func(tx *sql.Tx) (*wpsidecar.Commit, error)) error {
	defer db.memo.Forget(Changed{Tables: []string{table}})
	hist := db.History()
	return db.onPrimary(ctx, func(conn *sql.Conn) error {
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
		c, err := write(tx)
		if err != nil {
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
		if c != nil {
			if err := hist.record(ctx, tx, *c); err != nil {
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("store: %s: %w", what, classify(err))
		}
		return nil
	})
}

// TableRead is a read of a namespace's own table as a ride-along read
// (see Piggyback), remembered by the memo under key (what was read, the
// table's name in it) until the feed reports the table written: read
// makes the result from the rows (never modified after; one with a
// Missing method that says true, a row not found, is not remembered: a
// row made later must be seen), take hands it to the requester.
func TableRead(key, query string, args []any, read func(*sql.Rows) (any, error), take func(any)) *Piggyback {
	return &Piggyback{kind: kindTable, key: key, query: query, args: args, read: read, take: take}
}

// ReadAlone runs pb as a query of its own, or answers it from the memo.
func (db *DB) ReadAlone(ctx context.Context, pb *Piggyback) error { return db.readAlone(ctx, pb) }

// NextListVersion numbers a read of a namespace's list: no two reads
// share a number, across every site's view (0 is no read's).
func (db *DB) NextListVersion() uint64 { return db.listReads.Add(1) }

// Allows is a revert's check of the value as it is now (nil: none)
// against e's "after": wpsidecar.ErrChanged when they differ, unless
// forced.
func (rv Revert) Allows(now *string, e history.Entry) error {
	if !rv.Force && !equalPtr(now, e.After) {
		return wpsidecar.ErrChanged
	}
	return nil
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

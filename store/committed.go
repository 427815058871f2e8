package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"
)

// AwaitCommitted returns once the transaction that wrote row id of table
// (column its primary key) is committed in the engine, as readers of this
// server see it, or when ctx ends (its error then).
//
// A server writes a transaction to its binary log, and sends it to the
// log's readers, before its storage engine commits it: for a moment —
// hundreds of milliseconds on a loaded server — a change feed knows of a
// change that a read of the primary does not see yet, and whatever it
// reads again then is the old row. InnoDB keeps a transaction's row locks
// until that commit is done and the transaction visible to new reads, so
// a locking read of one of its rows that does not wait (NOWAIT) fails
// until then. The read is repeated, briefly apart, until it succeeds; a
// row deleted since is no row to lock, and a table of an engine without
// row locks answers at once (its writes are visible as they are made).
func (db *DB) AwaitCommitted(ctx context.Context, table, column string, id int64) error {
	if !identRe.MatchString(table) || !identRe.MatchString(column) {
		return errors.New("store: invalid table or column name")
	}
	var lock string
	switch db.flavorOf(ctx) {
	case gomysql.MariaDBFlavor:
		lock = " LOCK IN SHARE MODE NOWAIT" // no FOR SHARE
	case gomysql.MySQLFlavor:
		lock = " FOR SHARE NOWAIT" // no NOWAIT after LOCK IN SHARE MODE
	default:
		return errors.New("store: the server's flavor is not known yet")
	}
	q := "SELECT 1 FROM `" + table + "` WHERE `" + column + "` = " + strconv.FormatInt(id, 10) + lock
	pause := time.Millisecond
	for {
		rows, err := db.sql.QueryContext(ctx, q)
		if err == nil {
			rows.Close()
			err = rows.Err()
		}
		if cannotLock(err) {
			return fmt.Errorf("%w: %w", ErrCannotLock, err)
		}
		if !rowLocked(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// ErrCannotLock: the locking read is refused for good — the user may not
// (MySQL before 8.0.22 wants UPDATE, DELETE or LOCK TABLES besides
// SELECT), or the server does not take the statement.
var ErrCannotLock = errors.New("store: a locking read of the row is refused")

// cannotLock: an error no repetition will change (access denied, syntax).
func cannotLock(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case 1044, 1142, 1143, 1227, 1064:
		return true
	}
	return false
}

// rowLocked: a NOWAIT locking read found the row locked (MySQL's
// ER_LOCK_NOWAIT; MariaDB reports a lock wait timeout).
func rowLocked(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 3572 || me.Number == 1205)
}

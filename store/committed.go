package store

import (
	"context"
	"errors"
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
	lock := " LOCK IN SHARE MODE NOWAIT" // MariaDB: no FOR SHARE
	if db.flavorOf(ctx) == gomysql.MySQLFlavor {
		lock = " FOR SHARE NOWAIT" // MySQL: no NOWAIT after LOCK IN SHARE MODE
	}
	q := "SELECT 1 FROM `" + table + "` WHERE `" + column + "` = " + strconv.FormatInt(id, 10) + lock
	pause := time.Millisecond
	for {
		rows, err := db.sql.QueryContext(ctx, q)
		if err == nil {
			rows.Close()
			err = rows.Err()
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

// rowLocked: a NOWAIT locking read found the row locked (MySQL's
// ER_LOCK_NOWAIT; MariaDB reports a lock wait timeout).
func rowLocked(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 3572 || me.Number == 1205)
}

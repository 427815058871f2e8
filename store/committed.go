package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"
)

// Committed tells whether the transaction that wrote row id of table
// (column its primary key) is committed in the engine, as readers of this
// server see it: one locking read that does not wait (NOWAIT), which
// reads the row (true) or finds it locked (false).
//
// A server writes a transaction to its binary log, and sends it to the
// log's readers, before its storage engine commits it: for a moment —
// hundreds of milliseconds on a loaded server — a change feed knows of a
// change that a read of the primary does not see yet, and whatever it
// reads again then is the old row. InnoDB keeps a transaction's row locks
// until that commit is done and the transaction visible to new reads, so
// the read finds the row locked until then — or later, when a later
// transaction has locked it since. A row deleted since is no row to lock,
// and a table of an engine without row locks reads at once (its writes
// are visible as they are made).
func (db *DB) Committed(ctx context.Context, table, column string, id int64) (bool, error) {
	if !identRe.MatchString(table) || !identRe.MatchString(column) {
		return false, errors.New("store: invalid table or column name")
	}
	var lock string
	switch db.flavorOf(ctx) {
	case gomysql.MariaDBFlavor:
		lock = " LOCK IN SHARE MODE NOWAIT" // no FOR SHARE
	case gomysql.MySQLFlavor:
		lock = " FOR SHARE NOWAIT" // no NOWAIT after LOCK IN SHARE MODE
	default:
		return false, errors.New("store: the server's flavor is not known yet")
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT 1 FROM `"+table+"` WHERE `"+column+"` = "+strconv.FormatInt(id, 10)+lock)
	if err == nil {
		rows.Close()
		err = rows.Err()
	}
	switch {
	case cannotLock(err):
		return false, fmt.Errorf("%w: %w", ErrCannotLock, err)
	case rowLocked(err):
		return false, nil
	}
	return err == nil, err
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

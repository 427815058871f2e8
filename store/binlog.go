package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"
)

// BinlogServer is the server a change feed follows, over the feed's own
// connection (--binlog-dsn may name another user): what the server says of
// its binary log, where the log stands, and the followed tables' columns
// (row events carry values, not names).
type BinlogServer struct{ db *sql.DB }

// OpenBinlogServer connects nothing yet.
func OpenBinlogServer(c *mysql.Config) (*BinlogServer, error) {
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	return &BinlogServer{db: sql.OpenDB(conn)}, nil
}

// Close releases the connections.
func (s *BinlogServer) Close() error { return s.db.Close() }

// BinlogSettings are the server's binary log settings and its flavor.
type BinlogSettings struct {
	LogBin, Format, RowImage string
	// RowMetadata is binlog_row_metadata (MariaDB 10.5 on, MySQL 8.0 on;
	// "" where the server has none): FULL names every row's columns in
	// the log itself.
	RowMetadata string
	Flavor      string // gomysql.MariaDBFlavor or MySQLFlavor
	// Encrypted: the feed's connection went over TLS (with TLS preferred,
	// whether the server offers it).
	Encrypted bool
	// OrderedCommits: the engine makes transactions visible in the log's
	// order — MariaDB always (its engines' commit_ordered), MySQL with
	// binlog_order_commits (the default) — so that a transaction seen
	// committed shows every one before it committed too.
	OrderedCommits bool
}

// Settings reads the binary log's settings.
func (s *BinlogServer) Settings(ctx context.Context) (BinlogSettings, error) {
	var b BinlogSettings
	var version string
	err := s.db.QueryRowContext(ctx, "SELECT @@log_bin, @@binlog_format, @@binlog_row_image, VERSION()").Scan(&b.LogBin, &b.Format, &b.RowImage, &version)
	if err != nil {
		return b, err
	}
	b.Flavor = Flavor(version)
	if s.db.QueryRowContext(ctx, "SELECT @@binlog_row_metadata").Scan(&b.RowMetadata) != nil {
		b.RowMetadata = ""
	}
	b.OrderedCommits = true
	if b.Flavor == gomysql.MySQLFlavor {
		// A server without the variable is taken as unordered: each
		// transaction then waits on its own rows, as the feed always did.
		if s.db.QueryRowContext(ctx, "SELECT @@binlog_order_commits").Scan(&b.OrderedCommits) != nil {
			b.OrderedCommits = false
		}
	}
	var name, cipher string
	err = s.db.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher)
	b.Encrypted = cipher != ""
	return b, err
}

// ErrNoBinlog: the server shows no binary log position.
var ErrNoBinlog = fmt.Errorf("SHOW MASTER STATUS is empty: the binary log is off")

// Position is where the server's log stands: its file and position, and
// its GTID set where it keeps one (nil otherwise).
func (s *BinlogServer) Position(ctx context.Context, flavor string) (gomysql.Position, gomysql.GTIDSet, error) {
	at, err := s.LogEnd(ctx, flavor)
	if err != nil {
		return at, nil, err
	}
	set, err := gtidPosition(ctx, s.db, flavor, true)
	if err != nil || set.String() == "" {
		return at, nil, nil // no GTIDs (MySQL without gtid_mode): the file and position
	}
	// The replication library resumes by sets it can read: not MySQL's
	// tagged ones, which leave the file and position.
	gtid, err := gomysql.ParseGTIDSet(flavor, set.String())
	if err != nil {
		return at, nil, nil
	}
	return at, gtid, nil
}

// LogEnd is where the server's log ends now, its file and position: every
// transaction committed before it was asked is before it. One statement
// (SHOW MASTER STATUS, SHOW BINARY LOG STATUS on MySQL 8.4 on), which
// REPLICATION CLIENT (BINLOG MONITOR) allows.
func (s *BinlogServer) LogEnd(ctx context.Context, flavor string) (gomysql.Position, error) {
	rows, err := s.db.QueryContext(ctx, "SHOW MASTER STATUS")
	if err != nil && flavor == gomysql.MySQLFlavor {
		rows, err = s.db.QueryContext(ctx, "SHOW BINARY LOG STATUS") // MySQL 8.4 on
	}
	if err != nil {
		s.refused(err)
		return gomysql.Position{}, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() || len(cols) < 2 {
		return gomysql.Position{}, ErrNoBinlog
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return gomysql.Position{}, err
	}
	pos, err := strconv.ParseUint(vals[1].String, 10, 32)
	if err != nil {
		return gomysql.Position{}, fmt.Errorf("SHOW MASTER STATUS: position %q: %w", vals[1].String, err)
	}
	return gomysql.Position{Name: vals[0].String, Pos: uint32(pos)}, rows.Close()
}

// refused lets the pool's idle connections go after a refusal for want of
// a privilege: a server reads an account's global privileges when it
// connects, so a connection made while a grant was revoked would go on
// being refused after it is given back.
func (s *BinlogServer) refused(err error) {
	var me *mysql.MySQLError
	if errors.As(err, &me) && (me.Number == 1227 || me.Number == 1045 || me.Number == 1142) {
		s.Reconnect()
	}
}

// Reconnect lets the pool's idle connections go: the next statement
// connects anew, to whichever server the address names now.
func (s *BinlogServer) Reconnect() {
	s.db.SetMaxIdleConns(0)
	s.db.SetMaxIdleConns(2)
}

// Columns reads the column names of tables in schema, in order, by table,
// as the feed's user may see them: a table it has no privilege on is
// missing (information_schema shows it none).
func (s *BinlogServer) Columns(ctx context.Context, schema string, tables ...string) (map[string][]string, error) {
	return columns(ctx, s.db, schema, tables)
}

// Columns reads the column names of tables in schema, in order, by table,
// over the site's own connection (which may read its tables).
func (db *DB) Columns(ctx context.Context, schema string, tables ...string) (map[string][]string, error) {
	return columns(ctx, db.sql, schema, tables)
}

func columns(ctx context.Context, db *sql.DB, schema string, tables []string) (map[string][]string, error) {
	if len(tables) == 0 {
		return map[string][]string{}, nil
	}
	args := []any{schema}
	for _, t := range tables {
		args = append(args, t)
	}
	rows, err := db.QueryContext(ctx, "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN (?"+
		strings.Repeat(", ?", len(tables)-1)+") ORDER BY TABLE_NAME, ORDINAL_POSITION", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := map[string][]string{}
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			return nil, err
		}
		cols[t] = append(cols[t], c)
	}
	return cols, rows.Err()
}

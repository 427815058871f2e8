package store

import (
	"context"
	"database/sql"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/wpsidecar/wpsidecar"
)

// Read-your-writes across instances: a write notes its commit's GTID in
// the request's scope (wpsidecar.Scope.Noted) where the scope asks for it
// (NoteWrites: package rest's readYourWrites), the answer hands it to the
// client, and a later read that brings it back (ReadAfter, recorded in
// the scope) is answered by a replica only once that replica has applied
// it.

// onPrimary runs write on a connection of the primary of its own and,
// when it succeeds, notes the commit it made where ctx's scope asks for it.
func (db *DB) onPrimary(ctx context.Context, write func(*sql.Conn) error) error {
	done, err := db.turn(ctx)
	if err != nil {
		return err
	}
	defer done()
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return classify(err)
	}
	defer conn.Close()
	if err := write(conn); err != nil {
		return err
	}
	db.note(ctx, conn)
	return nil
}

// note records the commit conn just made in ctx's scope, when the scope
// asks for it (wpsidecar.Scope.NotesWrites): only then is it looked up.
func (db *DB) note(ctx context.Context, conn *sql.Conn) {
	scope := wpsidecar.ScopeOf(ctx)
	if !scope.NotesWrites() {
		return
	}
	q := "SELECT @@GLOBAL.gtid_executed" // MySQL: a superset of this commit, as good to wait for
	if db.flavorOf(ctx) == gomysql.MariaDBFlavor {
		q = "SELECT @@SESSION.last_gtid"
	}
	var g sql.NullString
	if err := conn.QueryRowContext(ctx, q).Scan(&g); err != nil || !g.Valid {
		return
	}
	scope.Noted(g.String)
}

// flavorOf is the primary's flavor, read once; "" while it cannot be read.
func (db *DB) flavorOf(ctx context.Context) string {
	if f, _ := db.flavorSeen.Load().(string); f != "" {
		return f
	}
	var v string
	if err := db.sql.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return ""
	}
	f := Flavor(v)
	db.flavorSeen.Store(f)
	return f
}

// ReadAfter is the commit gtid names (a client brought it back from a
// write's answer), for the request's scope to read after
// (wpsidecar.Scope.ReadAfter): a replica is read only once it has applied
// it, else the primary. nil — nothing to wait for — without replicas, and
// for a value that is not a GTID set of the primary's flavor.
func (db *DB) ReadAfter(ctx context.Context, gtid string) wpsidecar.GTIDSet {
	if gtid == "" || len(gtid) > 1024 || len(db.replicas) == 0 {
		return nil
	}
	set, err := parseGTIDSet(db.flavorOf(ctx), gtid)
	if err != nil || set == nil {
		return nil
	}
	return set
}

// readAfterOf is the commit ctx's scope reads after, as ReadAfter parsed
// it; nil when none.
func readAfterOf(ctx context.Context) *gtidSet {
	set, _ := wpsidecar.ScopeOf(ctx).ReadsAfter().(*gtidSet)
	return set
}

// readAfterWait bounds how long a read waits for a replica to apply the
// client's write before it reads the primary instead.
const readAfterWait = 200 * time.Millisecond

// readAfter is a replica that has applied ctx's GTID (waiting a little
// for the first healthy one), or nil: read the primary.
func (db *DB) readAfter(ctx context.Context, want *gtidSet) *sql.DB {
	if p, _ := db.primaryPos.Load().(*gtidSet); p == nil || !p.Contain(want) {
		return nil // newer than the last look at the primary, or not its own: the primary has it
	}
	var wait *replica
	for _, r := range db.replicas {
		if !r.healthy.Load() {
			continue
		}
		if pos, _ := r.pos.Load().(*gtidSet); pos != nil && pos.Contain(want) {
			return r.sql
		}
		if wait == nil {
			wait = r
		}
	}
	if wait == nil {
		return nil
	}
	q := "SELECT WAIT_FOR_EXECUTED_GTID_SET(?, ?) = 0"
	if db.flavorOf(ctx) == gomysql.MariaDBFlavor {
		q = "SELECT MASTER_GTID_WAIT(?, ?) = 0"
	}
	cctx, cancel := context.WithTimeout(ctx, readAfterWait+time.Second)
	defer cancel()
	var ok bool
	if err := wait.sql.QueryRowContext(cctx, q, want.String(), readAfterWait.Seconds()).Scan(&ok); err != nil || !ok {
		return nil
	}
	return wait.sql
}

package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Leadership elects one leader among the instances that share a site's
// database: the holder of a named lock (GET_LOCK) on a connection of its
// own. The server lets go of the lock when that connection ends, so an
// instance that dies or loses the server hands leadership over by itself.
type Leadership struct {
	db    *DB
	name  string
	every time.Duration
	log   zerolog.Logger

	leading atomic.Bool
}

// Leadership is the election of the site this database and table prefix
// hold (one lock name per site); every is how long a candidate waits on
// the lock at a time and how often the leader checks it still holds it.
func (db *DB) Leadership(every time.Duration, log zerolog.Logger) *Leadership {
	sum := sha256.Sum256([]byte(db.dbName + "\x00" + db.base))
	// Lock names are at most 64 characters; the hash keeps them short and
	// says nothing of the site.
	return &Leadership{db: db, name: "wpsidecar:leader:" + hex.EncodeToString(sum[:16]), every: every, log: log}
}

// Name is the lock's name.
func (l *Leadership) Name() string { return l.name }

// Leading tells whether this instance leads now.
func (l *Leadership) Leading() bool { return l.leading.Load() }

// Run campaigns until ctx ends, telling changed(true, held) when this
// instance starts leading — held is when it last found the lock held by
// another (zero: never), so that the new leader knows since when nobody
// may have sent — and changed(false, …) when it stops (the lock lost or
// not confirmed, the connection gone, or ctx ended).
func (l *Leadership) Run(ctx context.Context, changed func(leading bool, held time.Time)) {
	var held time.Time
	for ctx.Err() == nil {
		l.term(ctx, changed, &held)
		select {
		case <-ctx.Done():
		case <-time.After(l.every):
		}
	}
}

// term is one connection's campaign: wait for the lock, lead while it is
// confirmed held.
func (l *Leadership) term(ctx context.Context, changed func(bool, time.Time), held *time.Time) {
	conn, err := l.db.sql.Conn(ctx)
	if err != nil {
		l.log.Warn().Err(err).Msg("leader election: no connection to the database; trying again")
		return
	}
	defer func() {
		// Closed, not pooled: a connection that may hold the lock must not
		// serve queries while the lock stays with it.
		conn.Raw(func(any) error { return driver.ErrBadConn })
		conn.Close()
	}()
	// Should this instance vanish from the network while leading, the
	// server closes the connection (and lets go of the lock) once it has
	// waited this long for a next statement or a write.
	idle := int(2*l.every/time.Second) + 2
	if _, err := conn.ExecContext(ctx, "SET SESSION wait_timeout = ?, net_write_timeout = ?", idle, idle); err != nil {
		if ctx.Err() == nil {
			l.log.Warn().Err(err).Msg("leader election: the connection could not be set up; trying again")
		}
		return
	}
	wait := max(1, int(l.every/time.Second))
	for {
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", l.name, wait).Scan(&got); err != nil {
			if ctx.Err() == nil {
				l.log.Warn().Err(err).Msg("leader election: the lock could not be asked for; trying again")
			}
			return
		}
		if got.Int64 == 1 {
			break
		}
		*held = time.Now() // another held it for the whole wait
	}
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		return
	}
	l.leading.Store(true)
	l.log.Info().Str("lock", l.name).Msg("leading: this instance sends webhooks and purges")
	changed(true, *held)
	defer func() {
		l.leading.Store(false)
		changed(false, time.Time{})
		if ctx.Err() != nil {
			// Shutting down. The server notices a client gone only once
			// its sleep ends: ending the session hands the lock over now.
			kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			// MySQL cannot prepare KILL (error 6413): the id is the
			// server's own number, written into the statement.
			l.db.sql.ExecContext(kctx, "KILL "+strconv.FormatInt(id, 10))
			cancel()
			l.log.Info().Msg("leading no more: shutting down")
		}
	}()
	// The check sleeps on the server between looks: the connection is
	// always in use, so a leader whose connection is killed or dropped
	// learns it at once, not at its next look; one that stops hearing the
	// server gives up after twice the period.
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*l.every+time.Second)
		var mine sql.NullBool
		err := conn.QueryRowContext(cctx, "SELECT SLEEP(?) = 0 AND IS_USED_LOCK(?) = CONNECTION_ID()", l.every.Seconds(), l.name).Scan(&mine)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil || !mine.Bool {
			l.log.Warn().Err(err).Msg("leading no more: the lock is not confirmed held; another instance may lead")
			return
		}
	}
}

package store

import (
	"context"
	"database/sql"
	"math"
	"strings"
	"sync/atomic"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// replica is a read replica and what the watch last found of it.
type replica struct {
	addr    string
	sql     *sql.DB
	healthy atomic.Bool
	lag     atomic.Int64 // nanoseconds; -1: not known
	pos     atomic.Value // *gtidSet: what it had applied at the last look
}

// reader is where a GET reads: a replica that lags at most max-replica-lag
// (in turn), else the primary; with a GTID to read after (ReadAfter), a
// replica that has applied it, else the primary. A read that the change feed's memo keeps
// goes to the primary: the feed follows the primary, and a replica's
// older row kept after the feed forgot it would stay stale.
func (db *DB) reader(ctx context.Context, memo bool) *sql.DB { return db.pick(ctx, memo, true) }

// pick is reader; without readAfter, a GTID to read after is not waited
// for (counted: a request that has not proven who it is).
func (db *DB) pick(ctx context.Context, memo, readAfter bool) *sql.DB {
	if memo || len(db.replicas) == 0 {
		return db.sql
	}
	if want := readAfterOf(ctx); want != nil && !readAfter {
		db.readAfterRefused.Add(1)
	} else if want != nil {
		if r := db.readAfter(ctx, want); r != nil {
			return r
		}
		return db.sql
	}
	n := uint32(len(db.replicas))
	start := db.next.Add(1)
	for i := uint32(0); i < n; i++ {
		if r := db.replicas[(start+i)%n]; r.healthy.Load() {
			return r.sql
		}
	}
	return db.sql
}

// ReplicaState is what the watch last found of a replica.
type ReplicaState struct {
	Addr    string
	Healthy bool
	Lag     time.Duration // -1: not known (unreachable, or not yet measured)
}

// Replicas are the replicas' states, in configuration order.
func (db *DB) Replicas() []ReplicaState {
	out := make([]ReplicaState, len(db.replicas))
	for i, r := range db.replicas {
		out[i] = ReplicaState{Addr: r.addr, Healthy: r.healthy.Load(), Lag: time.Duration(r.lag.Load())}
	}
	return out
}

// sample is the primary's GTID position at a moment.
type sample struct {
	at  time.Time
	pos *gtidSet
}

// WatchReplicas measures each replica's lag every interval until ctx ends:
// the primary's GTID position is sampled, and a replica's lag is how long
// ago the newest sample it has applied was taken (none applied: at least
// as old as the oldest kept). A replica is healthy while reachable, seen
// to have applied a sample, and lagging at most MaxReplicaLag; reads go
// only to healthy ones.
func (db *DB) WatchReplicas(ctx context.Context, every time.Duration) {
	if len(db.replicas) == 0 {
		return
	}
	for _, r := range db.replicas {
		r.lag.Store(-1)
	}
	var samples []sample
	keep := int(math.Ceil(float64(4*db.maxLag)/float64(every))) + 2
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if flavor := db.flavorOf(ctx); flavor != "" {
			if pos, err := gtidPosition(ctx, db.sql, flavor, true); err == nil {
				db.primaryPos.Store(pos)
				samples = append(samples, sample{time.Now(), pos})
				if len(samples) > keep {
					samples = samples[1:]
				}
			} else {
				db.log.Warn().Err(err).Msg("replica lag: the primary's GTID position could not be read")
			}
			for _, r := range db.replicas {
				db.measure(ctx, r, flavor, samples)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// measure sets r's lag and health from its applied position.
func (db *DB) measure(ctx context.Context, r *replica, flavor string, samples []sample) {
	lag := time.Duration(-1)
	pos, err := gtidPosition(ctx, r.sql, flavor, false)
	if err == nil {
		r.pos.Store(pos)
	}
	// A replica is believed only once it is seen to have applied a sample
	// of the primary: one that has none of them lags at least as long as
	// the oldest was taken, which just after a start says nothing.
	applied := false
	if err == nil && len(samples) > 0 {
		lag = time.Since(samples[0].at) // at least: it has none of them
		for i := len(samples) - 1; i >= 0; i-- {
			if pos.Contain(samples[i].pos) {
				applied = true
				lag = time.Since(samples[i].at)
				if i == len(samples)-1 {
					lag = 0 // it has the newest: as current as can be told
				}
				break
			}
		}
	}
	healthy := applied && lag <= db.maxLag
	if was := r.healthy.Swap(healthy); was != healthy {
		ev := db.log.Info()
		if !healthy {
			ev = db.log.Warn()
		}
		ev.Str("replica", r.addr).Dur("lag", lag).Bool("reads", healthy).Msg("replica state changed")
	}
	r.lag.Store(int64(lag))
}

// Flavor is the server's flavor by its VERSION() (MariaDB says so in it):
// their GTIDs, replication commands and variables differ.
func Flavor(version string) string {
	if strings.Contains(strings.ToLower(version), "mariadb") {
		return gomysql.MariaDBFlavor
	}
	return gomysql.MySQLFlavor
}

// gtidPosition is what a server has written (the primary) or applied (a
// replica) as a GTID set.
func gtidPosition(ctx context.Context, q *sql.DB, flavor string, primary bool) (*gtidSet, error) {
	query := "SELECT @@GLOBAL.gtid_executed"
	if flavor == gomysql.MariaDBFlavor {
		query = "SELECT @@GLOBAL.gtid_slave_pos"
		if primary {
			query = "SELECT @@GLOBAL.gtid_binlog_pos"
		}
	}
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var s string
	if err := q.QueryRowContext(cctx, query).Scan(&s); err != nil {
		return nil, err
	}
	return parseGTIDSet(flavor, s)
}

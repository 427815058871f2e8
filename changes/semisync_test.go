package changes_test

import (
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
)

// semiSync are the statements of a flavor that make a primary wait, after
// it has synced a transaction to its log (so a change feed reads it) and
// before its engine commits it, for a replica's acknowledgement (at most
// two seconds), and a replica that acknowledges, and its status variable.
var semiSync = map[string]struct{ primary, replica []string }{
	"mariadb": {
		primary: []string{"SET GLOBAL rpl_semi_sync_master_wait_point = 'AFTER_SYNC'", "SET GLOBAL rpl_semi_sync_master_timeout = 2000", "SET GLOBAL rpl_semi_sync_master_enabled = ON"},
		replica: []string{"SET GLOBAL rpl_semi_sync_slave_enabled = ON", "STOP SLAVE IO_THREAD", "START SLAVE IO_THREAD"},
	},
	"mysql": {
		primary: []string{"INSTALL PLUGIN rpl_semi_sync_source SONAME 'semisync_source.so'", "SET GLOBAL rpl_semi_sync_source_wait_point = 'AFTER_SYNC'",
			"SET GLOBAL rpl_semi_sync_source_timeout = 2000", "SET GLOBAL rpl_semi_sync_source_enabled = ON"},
		replica: []string{"INSTALL PLUGIN rpl_semi_sync_replica SONAME 'semisync_replica.so'", "SET GLOBAL rpl_semi_sync_replica_enabled = ON", "STOP REPLICA IO_THREAD", "START REPLICA IO_THREAD"},
	},
}

// TestFeed_SemiSyncHeldBack: with a semi-sync replica held back, a
// transaction sits in the primary's log (the feed has read it) while
// its engine has not committed it, for two seconds: a read then gets the
// old row. A write of a post is reported only once the primary shows it;
// when that wait (CommitWait) runs out first, the transaction is
// reported anyway and again once the primary shows it, so that what was
// read and kept meanwhile is dropped (issue 54, item 3: a post was
// reported at once, and an answer PHP built from the old row was kept).
func TestFeed_SemiSyncHeldBack(t *testing.T) {
	flavor := testdb.ServerFlavor()
	primary := testdb.StartBinlogServer(t)
	replica := testdb.StartReplica(t, primary)
	tdb := testdb.NewOn(t, primary.Config())
	rdb, err := sql.Open("mysql", replica.Config().FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	run := func(db *sql.DB, qs []string) {
		t.Helper()
		for _, q := range qs {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	ss := semiSync[flavor]
	run(tdb.SQL, ss.primary)
	run(rdb, ss.replica)
	status := func() string {
		var name, v string
		tdb.SQL.QueryRow("SHOW STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_status', 'Rpl_semi_sync_source_status')").Scan(&name, &v)
		return v
	}
	testwait.For(t, "the primary waiting for its semi-sync replica", func() bool { return status() == "ON" })
	ioThread := map[string][2]string{"mariadb": {"STOP SLAVE IO_THREAD", "START SLAVE IO_THREAD"}, "mysql": {"STOP REPLICA IO_THREAD", "START REPLICA IO_THREAD"}}[flavor]

	var mu sync.Mutex
	var reports []time.Time // of the post's writes
	o := changes.FeedOptions{Conn: primary.Config(), ServerID: 4264, Schema: tdb.Name, Options: "wp_options", Heartbeat: 100 * time.Millisecond,
		CommitWait: 300 * time.Millisecond, Log: zerolog.Nop(), Primary: tdb.Store(t),
		Subscriber: subscriber{touched: func(tc wpsidecar.Touched) {
			if slices.Contains(tc.Written[0], "wp_posts") {
				mu.Lock()
				reports = append(reports, time.Now())
				mu.Unlock()
			}
		}}}
	restcacheFollow(&o)
	runFeed(t, o)

	for trial := range 3 {
		run(rdb, []string{ioThread[0]}) // held back: no acknowledgement comes
		mu.Lock()
		reports = nil
		mu.Unlock()
		began := time.Now()
		if _, err := tdb.SQL.Exec("INSERT INTO wp_posts (post_content, post_title, post_excerpt, to_ping, pinged, post_content_filtered) VALUES ('', ?, '', '', '', '')", fmt.Sprint("held ", trial)); err != nil {
			t.Fatal(err)
		}
		committed := time.Now()
		if waited := committed.Sub(began); waited < time.Second {
			t.Fatalf("trial %d: the insert returned in %s: the primary did not wait for its replica (semi-sync %s)", trial, waited, status())
		}
		testwait.For(t, "the post's write reported once the primary shows it", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(reports) > 0 && !reports[len(reports)-1].Before(committed.Add(-50*time.Millisecond))
		})
		mu.Lock()
		first := reports[0].Sub(began)
		n := len(reports)
		mu.Unlock()
		t.Logf("trial %d: the insert waited %s; the post reported %d times, first %s after it began", trial, committed.Sub(began).Round(time.Millisecond), n, first.Round(time.Millisecond))
		run(rdb, []string{ioThread[1]})
		testwait.For(t, "the replica caught up, semi-sync on again", func() bool { return status() == "ON" })
	}
}

// restcacheFollow is what --cache-rest has the feed report (restcache's
// Follow, which this package cannot import): the rows of wp_posts, once
// the primary shows them.
func restcacheFollow(o *changes.FeedOptions) {
	o.EveryTable = true
	o.RowValues = map[string][]string{"wp_posts": {"ID"}}
	o.Keys = map[string]string{"wp_posts": "ID"}
}

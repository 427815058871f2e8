package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestReplicas: with a replica that keeps up, GETs read it; replication
// stopped and the primary written, the replica lags and reads move to the
// primary; replication started again, they move back once it caught up.
// A row only the replica has tells which server answered.
func TestReplicas(t *testing.T) {
	primary := testdb.StartBinlogServer(t)
	replica := testdb.StartReplica(t, primary)
	tdb := testdb.NewOn(t, primary.Config())
	rc := replica.Config()
	rc.DBName = tdb.Name
	rdb, err := sql.Open("mysql", rc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	// The replica has all the primary wrote; the row only it has takes an
	// id no replicated row will.
	var want int
	if err := tdb.SQL.QueryRow("SELECT COUNT(*) FROM wp_options").Scan(&want); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the site on the replica", func() bool {
		var n int
		rdb.QueryRow("SELECT COUNT(*) FROM wp_options").Scan(&n)
		return n == want
	})
	if _, err := rdb.Exec("INSERT INTO wp_options (option_id, option_name, option_value, autoload) VALUES (1000000, 'replica_only', 'r', 'no')"); err != nil {
		t.Fatal(err)
	}

	o := tdb.StoreOptions()
	o.Replicas = []*mysql.Config{{Net: "tcp", Addr: rc.Addr}}
	o.MaxReplicaLag = 300 * time.Millisecond
	db, err := store.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { db.WatchReplicas(ctx, 50*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	fromReplica := func() bool {
		_, err := db.RawOption(context.Background(), "replica_only")
		if err != nil && !errors.Is(err, wpsidecar.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	testwait.For(t, "reads from the replica", fromReplica)
	if st := db.Replicas(); len(st) != 1 || !st[0].Healthy || st[0].Lag < 0 || st[0].Lag > o.MaxReplicaLag {
		t.Errorf("state %+v", st)
	}
	if primary.Flavor() == "mysql" {
		// A tagged transaction (MySQL 8.3 on: uuid:tag:n in the GTID
		// sets) leaves the positions readable and the replica in use.
		conn, err := tdb.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"SET gtid_next = 'AUTOMATIC:wptag'", "INSERT INTO wp_options (option_name, option_value) VALUES ('tagged', 't')", "SET gtid_next = 'AUTOMATIC'"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		conn.Close()
		testwait.For(t, "the replica in use after a tagged transaction", func() bool {
			v, err := db.RawOption(context.Background(), "tagged")
			return err == nil && v == "t" && db.Replicas()[0].Healthy && fromReplica()
		})
	}

	// A GTID to read after, from a request not yet proven (no route's
	// read rides with its lookup): its user lookup reads as any other,
	// neither waiting on a replica nor sent to the primary (security round
	// 2, item 7). A user only the replica has tells where it read.
	if _, err := rdb.Exec("INSERT INTO wp_users (ID, user_login, user_pass, user_nicename, user_email, user_registered, display_name) VALUES (1000000, 'replica_user', 'x', 'r', 'r@example.test', NOW(), 'r')"); err != nil {
		t.Fatal(err)
	}
	// Newer than the primary has: only the primary could answer.
	newer := "0-1-999999999"
	if primary.Flavor() == "mysql" {
		newer = serverUUID(t, tdb.SQL) + ":999999999"
	}
	forged, scope := wpsidecar.WithScope(context.Background())
	scope.ReadAfter(db.ReadAfter(forged, newer))
	for range 3 {
		if _, err := db.UserForAuth(forged, "replica_user", false, nil); err != nil {
			t.Fatalf("an unproven lookup with a GTID: %v (it should read the replica as any other)", err)
		}
	}
	var v string
	var found bool
	ride := db.OptionPiggyback("blogname", &v, &found)
	if _, err := db.UserForAuth(forged, "replica_user", false, ride); !errors.Is(err, wpsidecar.ErrNotFound) {
		t.Errorf("a proven lookup with a GTID the replica lacks read the replica: %v", err)
	}

	if _, err := rdb.Exec("STOP REPLICA"); err != nil {
		t.Fatal(err)
	}
	tdb.SetOption(t, "blogname", "changed on the primary")
	stopped := time.Now()
	testwait.For(t, "reads from the primary", func() bool { return !fromReplica() })
	t.Logf("replication stopped: reads left the replica after %s (max lag %s)", time.Since(stopped).Round(time.Millisecond), o.MaxReplicaLag)
	if v, err := db.RawOption(context.Background(), "blogname"); err != nil || v != "changed on the primary" {
		t.Errorf("read while the replica lags: %q %v", v, err)
	}
	if st := db.Replicas(); st[0].Healthy {
		t.Errorf("a lagging replica is healthy: %+v", st)
	}
	// A sidecar started now does not believe the lagging replica either:
	// it has applied none of the primary's samples (its first one is taken
	// after the write).
	fresh, err := store.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	fctx, fcancel := context.WithCancel(context.Background())
	fdone := make(chan struct{})
	go func() { fresh.WatchReplicas(fctx, 50*time.Millisecond); close(fdone) }()
	defer func() { fcancel(); <-fdone }()
	testwait.For(t, "the fresh watch measured the replica", func() bool { return fresh.Replicas()[0].Lag >= 0 })
	for range 5 {
		if st := fresh.Replicas(); st[0].Healthy {
			t.Fatalf("a replica behind the primary is believed on start: %+v", st)
		}
		if v, err := fresh.RawOption(context.Background(), "blogname"); err != nil || v != "changed on the primary" {
			t.Fatalf("a read on start: %q %v", v, err)
		}
	}

	if _, err := rdb.Exec("START REPLICA"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "reads back on the replica", fromReplica)
}

// serverUUID is a MySQL server's own GTID source.
func serverUUID(t *testing.T, db *sql.DB) string {
	t.Helper()
	var u string
	if err := db.QueryRow("SELECT @@server_uuid").Scan(&u); err != nil {
		t.Fatal(err)
	}
	return u
}

package changes_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testlog"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
)

// TestAuto_PurgedThenResumed: change-feed auto's feed finds its position
// purged (it was stopped, as a paused process would be) and falls back
// to polling, saying so; while the server cannot feed it (its user lost
// REPLICATION CLIENT) it polls, and says which grant is missing; a
// change made then is reported once, by the poller; the grant given
// back, memory is forgotten, the feed follows again from the server's
// position and reports the next change, once.
func TestAuto_PurgedThenResumed(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	exec := func(q ...string) {
		t.Helper()
		for _, s := range q {
			if _, err := tdb.SQL.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	// Global privileges are read as a connection opens.
	exec("CREATE USER 'feed'@'%' IDENTIFIED BY 'feed-pw'", "GRANT SELECT ON "+tdb.Name+".* TO 'feed'@'%'",
		"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'feed'@'%'")
	tdb.SetOption(t, "themeopts_options", `a:2:{s:1:"a";i:1;s:1:"b";i:2;}`)
	setOpt := func(a, b int) {
		t.Helper()
		tdb.SetOption(t, "themeopts_options", `a:2:{s:1:"a";i:`+itoa(int64(a))+`;s:1:"b";i:`+itoa(int64(b))+`;}`)
	}

	rec := &feedRecorder{}
	var logs testlog.Buffer
	log := zerolog.New(&logs)
	conn := mysql.NewConfig()
	conn.Net, conn.Addr, conn.User, conn.Passwd = "tcp", srv.Config().Addr, "feed", "feed-pw"
	optName := func(int64) string { return "themeopts_options" }
	feed, err := changes.NewFeed(changes.FeedOptions{Conn: conn, ServerID: 4250, Schema: tdb.Name, Options: "wp_options",
		OptionRows: themeOpts(optName), Subscriber: rec, Heartbeat: 100 * time.Millisecond, Log: log, Primary: tdb.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	ctx, cancel := context.WithCancel(context.Background())
	if err := feed.Check(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { feed.Run(ctx, func(context.Context) {}); close(done) }()
	setOpt(5, 2)
	testwait.For(t, "the feed's first change", func() bool { return slices.Equal(rec.got(), []string{"themeopts:a"}) })

	// Stopped; its binlog purged meanwhile.
	cancel()
	<-done
	testwait.For(t, "the dump thread to end", func() bool {
		var n int
		tdb.SQL.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'").Scan(&n)
		return n == 0
	})
	setOpt(5, 3) // lost to the feed, and before the poller's first look
	exec("FLUSH BINARY LOGS")
	var last string
	testwait.For(t, "the old binlog to be purged", func() bool {
		rows, err := tdb.SQL.Query("SHOW BINARY LOGS")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns() // MySQL has a third, Encrypted
		n := 0
		for rows.Next() {
			vals := make([]any, len(cols))
			vals[0] = &last
			for i := 1; i < len(vals); i++ {
				vals[i] = new(any)
			}
			rows.Scan(vals...)
			n++
		}
		rows.Close()
		if n == 1 {
			return true
		}
		tdb.SQL.Exec("PURGE BINARY LOGS TO '" + last + "'") // MariaDB keeps a binlog until its checkpoint passed it
		return false
	})
	exec("REVOKE REPLICATION CLIENT ON *.* FROM 'feed'@'%'")
	tdb.KillConnections(t, "feed")

	var mu sync.Mutex
	var modes []string
	mode := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(modes) == 0 {
			return ""
		}
		return modes[len(modes)-1]
	}
	var forgot atomic.Int32
	poller := changes.NewPoller(nil, tdb.Store(t), nil, themeOpts(optName), rec, log)
	a := changes.Auto{Feed: feed, Poller: poller,
		Forget: func() { forgot.Add(1) },
		Mode: func(m string, why error) {
			mu.Lock()
			defer mu.Unlock()
			if why != nil {
				m += ": " + why.Error()
			}
			modes = append(modes, m)
		},
		Recheck: 50 * time.Millisecond, Interval: 20 * time.Millisecond, Timeout: 5 * time.Second, Log: log}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	done = make(chan struct{})
	go func() { a.Run(ctx, nil); close(done) }()

	grant := "(GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'feed'@'%', the host as SELECT CURRENT_USER() names it)"
	testwait.For(t, "the grant named", func() bool { return strings.Contains(mode(), grant) })
	mu.Lock()
	if len(modes) < 3 || modes[0] != changes.ModeBinlog || !strings.HasPrefix(modes[1], "poll: binlog change feed unusable: ") ||
		!strings.HasSuffix(modes[1], " (the server no longer has the position the feed was at: its binary logs were purged)") ||
		!strings.HasPrefix(modes[len(modes)-1], "poll: binlog change feed unusable: SHOW MASTER STATUS: ") {
		t.Errorf("modes %q", modes)
	}
	mu.Unlock()
	if !errors.Is(feed.Err(), changes.ErrFeedUnusable) || feed.Current(time.Hour) {
		t.Errorf("err %v, current %v", feed.Err(), feed.Current(time.Hour))
	}
	setOpt(5, 6)
	testwait.For(t, "the poller's change", func() bool { return slices.Equal(rec.got(), []string{"themeopts:a", "themeopts:b"}) })

	exec("GRANT REPLICATION CLIENT ON *.* TO 'feed'@'%'")
	tdb.KillConnections(t, "feed")
	testwait.For(t, "the feed to follow again", func() bool { return feed.Current(time.Second) })
	if m := mode(); m != changes.ModeBinlog || forgot.Load() != 1 || !strings.Contains(logs.String(), "the server can feed the sidecar again") {
		t.Errorf("mode %q, forgot %d; log:\n%s", m, forgot.Load(), logs.String())
	}
	setOpt(7, 6)
	want := []string{"themeopts:a", "themeopts:b", "themeopts:a"}
	testwait.For(t, "the feed's change", func() bool { return len(rec.got()) >= len(want) })
	if got := rec.got(); !slices.Equal(got, want) || !strings.Contains(logs.String(), `"via":"binlog"`) {
		t.Errorf("changes %q, want %q", got, want)
	}
	cancel()
	<-done
}

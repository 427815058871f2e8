package changes_test

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/go-sql-driver/mysql"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testlog"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/store"
)

// feedRecorder keeps what a feed reports: each commit as its namespace
// and keys.
type feedRecorder struct {
	mu       sync.Mutex
	changes  []string
	fellBack chan struct{}
}

func (r *feedRecorder) Touched(wpsidecar.Touched) {}

func (r *feedRecorder) Commit(c wpsidecar.Commit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, string(c.Namespace)+":"+strings.Join(slices.Compact(slices.Sorted(slices.Values(c.Keys()))), ","))
}

func (r *feedRecorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.changes...)
}

// TestFeed follows a real MariaDB's binary log: each table's events, one
// change per namespace per transaction, nothing for a rollback or an
// unrelated DDL, a site setting refreshing the snapshot (on the
// refresher's goroutine, not the feed's), a dropped
// connection resumed from the last commit, and purged binlogs falling back
// to polling.
func TestFeed(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	tdb.SQL.Exec("CREATE TABLE wp_fieldmgr_groups (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, group_key VARCHAR(191) NOT NULL UNIQUE, title TEXT NOT NULL, config LONGTEXT NOT NULL, status VARCHAR(20) NOT NULL DEFAULT 'active', created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL)")
	tdb.SetOption(t, "themeopts_options", `a:2:{s:1:"a";i:1;s:1:"b";i:2;}`)

	rec := &feedRecorder{fellBack: make(chan struct{})}
	var logs testlog.Buffer
	conn := srv.Config()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	settings := store.NewSettingsWatcher(tdb.Store(t), time.Hour, store.SiteURLs{})
	if err := settings.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	refresh := &changes.Refresher{Settings: func(int64) *store.SettingsWatcher { return settings }, Log: zerolog.New(&logs)}
	refreshed := make(chan struct{})
	go func() { refresh.Run(ctx); close(refreshed) }()
	defer func() { cancel(); <-refreshed }()
	feed, err := changes.NewFeed(changes.FeedOptions{Conn: conn, ServerID: 4242, Schema: tdb.Name, Options: "wp_options", Tables: []changes.Table{fieldGroups("wp_fieldmgr_groups")},
		OptionRows: themeOpts(func(int64) string { return "themeopts_options" }), Subscriber: changes.Subscribers{rec, refresh},
		Heartbeat: 200 * time.Millisecond, Log: zerolog.New(&logs), Primary: tdb.Store(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := feed.Check(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		feed.Run(ctx, func(context.Context) { close(rec.fellBack) })
		close(done)
	}()
	exec := func(q ...string) {
		t.Helper()
		for _, s := range q {
			if _, err := tdb.SQL.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	expect := func(what string, want ...string) {
		t.Helper()
		testwait.For(t, what, func() bool { return len(rec.got()) >= len(want) })
		if got := rec.got(); !slices.Equal(got, want) {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
	}

	exec(`UPDATE wp_options SET option_value = 'a:3:{s:1:"a";i:1;s:1:"b";i:3;s:1:"c";i:4;}' WHERE option_name = 'themeopts_options'`)
	expect("an option saved", "themeopts:b,c")
	exec("INSERT INTO wp_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES ('g1', 'T', '{}', NOW(), NOW())")
	expect("a group created", "themeopts:b,c", "fieldmgr:g1")
	// A multi-row transaction: one change naming each group once.
	exec("BEGIN", "INSERT INTO wp_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES ('g2', 'T', '{}', NOW(), NOW())",
		"UPDATE wp_fieldmgr_groups SET title = 'U' WHERE group_key IN ('g1', 'g2')", "COMMIT")
	expect("a transaction", "themeopts:b,c", "fieldmgr:g1", "fieldmgr:g1,g2")
	// A rollback, an unrelated DDL and an unrelated option: nothing.
	exec("BEGIN", "DELETE FROM wp_fieldmgr_groups", "ROLLBACK", "CREATE TABLE unrelated (id INT)",
		"UPDATE wp_options SET option_value = 'x' WHERE option_name = 'blogname'")
	exec("DELETE FROM wp_fieldmgr_groups WHERE group_key = 'g2'")
	expect("a delete after the noise", "themeopts:b,c", "fieldmgr:g1", "fieldmgr:g1,g2", "fieldmgr:g2")
	// A rolled-back transaction's rows in a non-transactional table did
	// change (a row-based log has them as a group of their own): reported.
	g3 := "INSERT INTO wp_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES ('g3', 'T', '{}', NOW(), NOW())"
	if srv.Flavor() == "mysql" {
		// MySQL with GTIDs refuses a transaction that writes both kinds
		// of table (enforce_gtid_consistency): its log never has one.
		exec(g3)
	} else {
		exec("ALTER TABLE wp_fieldmgr_groups ENGINE=Aria", "CREATE TABLE txn (id INT) ENGINE=InnoDB")
		one, err := tdb.SQL.Conn(ctx) // the transaction on one connection
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"BEGIN", "INSERT INTO txn VALUES (1)",
			g3, "ROLLBACK"} {
			if _, err := one.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		one.Close()
	}
	expect("non-transactional rows of a rolled-back transaction", "themeopts:b,c", "fieldmgr:g1", "fieldmgr:g1,g2", "fieldmgr:g2", "fieldmgr:g3")
	if srv.Flavor() != "mysql" {
		// Back to InnoDB once the rows are reported: this server logs no
		// column names, so the feed reads them when the rows come, and an
		// ALTER under way then may hide the table from it (the rows are
		// then not interpreted, as docs/caching.md says; the Compose files
		// and the demo log the names). A CI run under load once lost g3 so.
		exec("ALTER TABLE wp_fieldmgr_groups ENGINE=InnoDB")
	}
	// A site setting.
	exec("UPDATE wp_options SET option_value = '/%year%/' WHERE option_name = 'permalink_structure'")
	testwait.For(t, "the settings refresh", func() bool {
		st, err := settings.Current()
		return err == nil && st.PermalinkStructure == "/%year%/" && refresh.Idle()
	})

	// The feed's connection is killed; a change made meanwhile arrives once
	// it is back, from the last commit.
	var id int64
	if err := tdb.SQL.QueryRow("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' LIMIT 1").Scan(&id); err != nil {
		t.Fatalf("no binlog dump thread: %v", err)
	}
	exec("KILL CONNECTION " + itoa(id))
	exec(`UPDATE wp_options SET option_value = 'a:1:{s:1:"a";i:9;}' WHERE option_name = 'themeopts_options'`)
	expect("a change made while disconnected", "themeopts:b,c", "fieldmgr:g1", "fieldmgr:g1,g2", "fieldmgr:g2", "fieldmgr:g3", "themeopts:a,b,c")
	if feed.Mode() != changes.ModeBinlog || time.Since(feed.LastSeen()) > 5*time.Second {
		t.Errorf("mode %s, last seen %s", feed.Mode(), feed.LastSeen())
	}

	// Purged binlogs while the feed was away (stopped, as a paused process
	// would be): it cannot resume and falls back to polling, saying why.
	cancel()
	<-done
	testwait.For(t, "the dump thread to end", func() bool {
		var n int
		tdb.SQL.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'").Scan(&n)
		return n == 0
	})
	exec(`UPDATE wp_options SET option_value = 'a:1:{s:1:"a";i:10;}' WHERE option_name = 'themeopts_options'`, "FLUSH BINARY LOGS")
	var last string
	rows, _ := tdb.SQL.Query("SHOW BINARY LOGS")
	cols, _ := rows.Columns() // MySQL has a third, Encrypted
	for rows.Next() {
		vals := make([]any, len(cols))
		vals[0] = &last
		for i := 1; i < len(vals); i++ {
			vals[i] = new(any)
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
	}
	rows.Close()
	// MariaDB keeps a binlog until its binlog checkpoint has passed it.
	testwait.For(t, "the old binlog to be purged", func() bool {
		exec("PURGE BINARY LOGS TO '" + last + "'")
		var n int
		r, _ := tdb.SQL.Query("SHOW BINARY LOGS")
		for r.Next() {
			n++
		}
		r.Close()
		return n == 1
	})

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	done = make(chan struct{})
	go func() {
		feed.Run(ctx, func(context.Context) { close(rec.fellBack) })
		close(done)
	}()
	select {
	case <-rec.fellBack:
	case <-time.After(15 * time.Second):
		t.Fatalf("no fall-back after purged binlogs; log:\n%s", logs.String())
	}
	if feed.Mode() != changes.ModePoll || !strings.Contains(logs.String(), "falling back to polling") {
		t.Errorf("mode %s; log:\n%s", feed.Mode(), logs.String())
	}
	<-done
	feed.Close()
}

// TestFeed_Unusable: a server without a binary log is named with what to
// change.
func TestFeed_Unusable(t *testing.T) {
	srv := testdb.StartServer(t)
	feed, err := changes.NewFeed(changes.FeedOptions{Conn: srv.Config(), ServerID: 4243, Schema: "x", Options: "wp_options", Tables: []changes.Table{fieldGroups("g")}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	err = feed.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "the binary log is off (start the server with log_bin and a server_id: in my.cnf's [mysqld], log_bin=binlog, server_id=1, binlog_format=ROW and binlog_row_image=FULL, then restart it)") {
		t.Errorf("err = %v", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestFeed_Touched: what each committed transaction wrote is reported in
// commit order, by user id for users and usermeta rows (a user created,
// a session destroyed, a role changed, a user deleted with their meta),
// by name for options (deleted and created again) and by key for groups;
// a site added to a network is a write of the network's tables;
// Current tells a live feed from one that stopped hearing the server.
func TestFeed_Touched(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	tdb.SQL.Exec("CREATE TABLE wp_fieldmgr_groups (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, group_key VARCHAR(191) NOT NULL UNIQUE, title TEXT NOT NULL, config LONGTEXT NOT NULL, status VARCHAR(20) NOT NULL DEFAULT 'active', created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL)")
	tdb.AddNetworkTables(t)
	var mu sync.Mutex
	var got []string
	networkReads := 0
	touched := touchedFunc(func(tc wpsidecar.Touched) {
		mu.Lock()
		defer mu.Unlock()
		if tc.Network {
			networkReads++
			return
		}
		got = append(got, fmt.Sprintf("users%v options%v groups%v ddl=%v", tc.UserIDs, tc.Options[0], tc.Tables["wp_fieldmgr_groups"], tc.DDL))
	})
	feed, err := changes.NewFeed(changes.FeedOptions{Conn: srv.Config(), ServerID: 4243, Schema: tdb.Name, Options: "wp_options", Tables: []changes.Table{fieldGroups("wp_fieldmgr_groups")},
		Users: "wp_users", Usermeta: "wp_usermeta", Sites: []string{"wp_blogs", "wp_site"}, Subscriber: touched,
		Heartbeat: 100 * time.Millisecond, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := feed.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if feed.Current(time.Hour) {
		t.Error("current before hearing the server")
	}
	done := make(chan struct{})
	go func() { feed.Run(ctx, func(context.Context) {}); close(done) }()
	testwait.For(t, "a heartbeat", func() bool { return feed.Current(300 * time.Millisecond) })

	id := tdb.AddUser(t, "alice", "alice@example.com", "x", [2]string{"session_tokens", "a:0:{}"}, [2]string{"wp_capabilities", `a:1:{s:13:"administrator";b:1;}`})
	for _, q := range []string{
		"DELETE FROM wp_usermeta WHERE meta_key = 'session_tokens'",
		`UPDATE wp_usermeta SET meta_value = 'a:1:{s:6:"editor";b:1;}' WHERE meta_key = 'wp_capabilities'`,
		"BEGIN", "DELETE FROM wp_usermeta WHERE user_id = " + itoa(id), "DELETE FROM wp_users WHERE ID = " + itoa(id), "COMMIT",
		"DELETE FROM wp_options WHERE option_name = 'blogname'",
		"INSERT INTO wp_options (option_name, option_value, autoload) VALUES ('blogname', 'B', 'yes')",
		"INSERT INTO wp_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES ('g1', 'T', '{}', NOW(), NOW())",
		"TRUNCATE wp_fieldmgr_groups",
		// The table made again, its columns in another order: read anew.
		"DROP TABLE wp_fieldmgr_groups",
		"CREATE TABLE wp_fieldmgr_groups (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, title TEXT NOT NULL, config LONGTEXT NOT NULL, status VARCHAR(20) NOT NULL DEFAULT 'active', created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL, group_key VARCHAR(191) NOT NULL UNIQUE)",
		"INSERT INTO wp_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES ('g2', 'T', '{}', NOW(), NOW())",
		"INSERT INTO wp_blogs (site_id, domain, path) VALUES (1, 'example.test', '/shop/')",
	} {
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	u := fmt.Sprintf("users[%d] options[] groups[] ddl=false", id)
	// The user and its two meta rows (three transactions), the session,
	// the role, the deletion; the option twice; the group; a DDL statement
	// (no rows logged: what it did is unknown), twice more, and a group of
	// the table made again.
	o := "users[] options[blogname] groups[] ddl=false"
	ddl := "users[] options[] groups[] ddl=true"
	want := []string{u, u, u, u, u, u, o, o, "users[] options[] groups[g1] ddl=false", ddl, ddl, ddl, "users[] options[] groups[g2] ddl=false"}
	testwait.For(t, "every transaction", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= len(want) })
	testwait.For(t, "the network's tables written", func() bool { mu.Lock(); defer mu.Unlock(); return networkReads == 1 })
	mu.Lock()
	if !slices.Equal(got, want) {
		t.Errorf("touched:\n%q\nwant\n%q", got, want)
	}
	mu.Unlock()

	cancel()
	<-done
	stopped := time.Now()
	// Run has returned: nothing hears the server any more, so the feed's
	// last catch-up came before it stopped, and it is current for no
	// staleness shorter than the time since.
	if feed.Current(time.Since(stopped)) || feed.LastSeen().After(stopped) {
		t.Errorf("current after the feed stopped (last heard %s, stopped %s)", feed.LastSeen().Format(time.StampMicro), stopped.Format(time.StampMicro))
	}
}

// TestFeed_NetworkSites: on a network the feed follows every site's
// tables ({base}N_options, {base}N_fieldmgr_groups): each commit names its
// site, a site's theme options row is the one its configuration names,
// and the options written are named with their site.
func TestFeed_NetworkSites(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	const groups = "(id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, group_key VARCHAR(191) NOT NULL UNIQUE, title TEXT NOT NULL, config LONGTEXT NOT NULL, status VARCHAR(20) NOT NULL DEFAULT 'active', created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL)"
	for _, q := range []string{"CREATE TABLE wp_fieldmgr_groups " + groups, "CREATE TABLE wp_3_fieldmgr_groups " + groups,
		"CREATE TABLE wp_2_options LIKE wp_options", "CREATE TABLE wp_30_options LIKE wp_options"} {
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var got []string
	var logs testlog.Buffer
	record := func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() }
	runFeed(t, changes.FeedOptions{Conn: srv.Config(), ServerID: 4243, Schema: tdb.Name, Options: "wp_options", Tables: []changes.Table{fieldGroups("wp_fieldmgr_groups")},
		BasePrefix: "wp_",
		OptionRows: themeOpts(func(site int64) string {
			if site == 30 {
				return "site30_options"
			}
			return "themeopts_options"
		}),
		Subscriber: subscriber{
			touched: func(tc wpsidecar.Touched) {
				for site, names := range tc.Options {
					if slices.Contains(names, "home") {
						record(fmt.Sprintf("settings of %d", site))
					}
				}
			},
			commit: func(c wpsidecar.Commit) {
				record(fmt.Sprintf("%d %s:%s", c.BlogID, c.Namespace, strings.Join(c.Keys(), ",")))
			},
		},
		Heartbeat: 200 * time.Millisecond, Log: zerolog.New(&logs), Primary: tdb.Store(t)})
	for _, q := range []string{
		`INSERT INTO wp_2_options (option_name, option_value) VALUES ('themeopts_options', 'a:1:{s:1:"a";i:1;}')`,
		`INSERT INTO wp_30_options (option_name, option_value) VALUES ('themeopts_options', 'a:1:{s:1:"x";i:1;}'), ('site30_options', 'a:1:{s:1:"b";i:1;}')`,
		"INSERT INTO wp_3_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES ('g3', 'T', '{}', NOW(), NOW())",
		"INSERT INTO wp_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES ('g1', 'T', '{}', NOW(), NOW())",
		"UPDATE wp_2_options SET option_value = 'http://two.test' WHERE option_name = 'home'",
		"INSERT INTO wp_2_options (option_name, option_value) VALUES ('home', 'http://two.test')",
	} {
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	want := []string{"2 themeopts:a", "30 themeopts:b", "3 fieldmgr:g3", "1 fieldmgr:g1", "settings of 2"}
	testwait.For(t, "every site's changes", func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(got) < len(want) && logs.String() != "" {
			t.Logf("so far %q\n%s", got, logs.String())
		}
		return len(got) >= len(want)
	})
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestFeed_CurrentOnBusyServer: the feed is current when it has applied
// where the server's log ended a moment ago, whatever the traffic in the
// log: a server writing a hundred rows a second to another schema sends
// no heartbeat (it is never idle), and the feed vouched for nothing then
// (issue 54, item 1: off at 10 writes a second). A feed held behind (its
// subscriber busy) is not current however fresh the events it reads;
// once it catches up, it is again.
func TestFeed_CurrentOnBusyServer(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	var hold atomic.Bool
	release := make(chan struct{})
	feed, _ := runFeed(t, changes.FeedOptions{Conn: srv.Config(), ServerID: 4343, Schema: tdb.Name, Options: "wp_options",
		Heartbeat: 300 * time.Millisecond, Log: zerolog.Nop(),
		Subscriber: subscriber{touched: func(wpsidecar.Touched) {
			if hold.Load() {
				<-release
			}
		}}})
	const bound = 900 * time.Millisecond
	testwait.For(t, "the feed current", func() bool { return feed.Current(bound) })

	other := "wpsidecar_other_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	for _, q := range []string{"CREATE DATABASE " + other, "CREATE TABLE " + other + ".t (id INT AUTO_INCREMENT PRIMARY KEY, v TEXT)"} {
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	defer tdb.SQL.Exec("DROP DATABASE " + other)
	// A hundred writes a second for three seconds, sampled between them.
	current, samples := 0, 0
	for range 300 {
		if _, err := tdb.SQL.Exec("INSERT INTO " + other + ".t (v) VALUES ('x')"); err != nil {
			t.Fatal(err)
		}
		samples++
		if feed.Current(bound) {
			current++
		}
		time.Sleep(10 * time.Millisecond) // the pace of the writes, not a wait for a condition
	}
	t.Logf("current in %d of %d samples amid %d writes", current, samples, samples)
	if current < samples*9/10 {
		t.Errorf("the feed was current in %d of %d samples while the server wrote to another schema", current, samples)
	}

	// Held behind: a transaction it cannot report.
	hold.Store(true)
	if _, err := tdb.SQL.Exec("INSERT INTO wp_options (option_name, option_value, autoload) VALUES ('held', 'x', 'no')"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "a feed held behind no longer current", func() bool {
		tdb.SQL.Exec("INSERT INTO " + other + ".t (v) VALUES ('x')")
		return !feed.Current(bound)
	})
	if feed.Sync(context.Background(), 200*time.Millisecond) {
		t.Error("Sync said a feed held behind had applied the log's end")
	}
	hold.Store(false)
	close(release)
	testwait.For(t, "the feed current again once it catches up", func() bool { return feed.Current(bound) })
}

// TestFeed_Sync: a write made outside the feed, then at once a Sync,
// finds the write reported: Sync returns only once the feed has applied
// what the server had logged when it was called. Many Syncs at once
// share looks at the log's end.
func TestFeed_Sync(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	var seen atomic.Int64
	feed, _ := runFeed(t, changes.FeedOptions{Conn: srv.Config(), ServerID: 4344, Schema: tdb.Name, Options: "wp_options",
		Heartbeat: time.Second, Log: zerolog.Nop(),
		Subscriber: subscriber{touched: func(tc wpsidecar.Touched) {
			for _, names := range tc.Options {
				if slices.Contains(names, "synced") {
					seen.Add(1)
				}
			}
		}}})
	ctx := context.Background()
	testwait.For(t, "the feed following", func() bool { return feed.Sync(ctx, time.Second) })
	if _, err := tdb.SQL.Exec("INSERT INTO wp_options (option_name, option_value, autoload) VALUES ('synced', '0', 'no')"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 50; i++ {
		if _, err := tdb.SQL.Exec("UPDATE wp_options SET option_value = ? WHERE option_name = 'synced'", i); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var failed atomic.Int64
		for range 8 {
			wg.Go(func() {
				if !feed.Sync(ctx, 5*time.Second) {
					failed.Add(1)
				}
			})
		}
		wg.Wait()
		if n := seen.Load(); failed.Load() > 0 || n != int64(i+1) {
			t.Fatalf("write %d: %d of 8 Syncs failed; the feed had reported %d writes when they returned, want %d", i, failed.Load(), n, i+1)
		}
	}
}

// TestFeed_History: the feed's commits carry, for the history, each
// transaction others committed, item by item with before and after, named
// by its origin and signed by PHP: a group created, renamed, deleted
// (several rows in one statement too), the theme options row's ids added,
// changed and removed; what the history records of them (Recorder) leaves
// out a write of updated_at alone (its value unchanged) and a transaction
// that also wrote the history table (the sidecar's own, not PHP's).
// So it does from a log whose transactions are compressed (MySQL's
// binlog_transaction_compression, MariaDB's log_bin_compress), and over
// TLS from a server that takes nothing else; each transaction is named by
// its GTID, a tagged one (MySQL 8.3 on) with its tag.
func TestFeed_History(t *testing.T) {
	compress := map[string][]string{"mysql": {"--binlog-transaction-compression=ON"},
		"mariadb": {"--log-bin-compress=ON", "--log-bin-compress-min-len=10"}}[testdb.ServerFlavor()]
	certs := testdb.MakeCerts(t, "127.0.0.1")
	for _, c := range []struct {
		name string
		o    testdb.ServerOptions
		tls  store.TLS
	}{
		{name: "plain", o: testdb.ServerOptions{Binlog: true}},
		{name: "compressed", o: testdb.ServerOptions{Binlog: true, Args: compress}},
		{name: "tls", o: testdb.ServerOptions{Binlog: true, Files: certs.Server, Args: append(append([]string{}, testdb.TLSArgs...), "--require-secure-transport=ON")},
			tls: store.TLS{Mode: store.TLSVerifyIdentity, CA: certs.CA}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := testdb.StartServerWith(t, c.o)
			conn := srv.Config()
			if err := c.tls.Apply(conn); err != nil {
				t.Fatal(err)
			}
			feedHistory(t, srv.Flavor(), conn)
		})
	}
}

func feedHistory(t *testing.T, flavor string, conn *mysql.Config) {
	tdb := testdb.NewOn(t, conn)
	groups, _ := fieldgrouptable.Open(tdb.Store(t), "wp_fieldmgr_groups")
	if _, err := groups.EnsureTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	// What the feed looks for of the history table is its name.
	tdb.SQL.Exec("CREATE TABLE wp_wpsidecar_history (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, item_key BLOB)")
	var mu sync.Mutex
	var got, origins []string
	show := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	feed, stop := runFeed(t, changes.FeedOptions{Conn: conn, ServerID: 4244, Schema: tdb.Name, Options: "wp_options", Tables: []changes.Table{fieldGroups("wp_fieldmgr_groups")},
		OptionRows: themeOpts(func(int64) string { return "opts" }), HistoryTable: "wp_wpsidecar_history",
		Subscriber: changes.OnCommit(func(c wpsidecar.Commit) {
			mu.Lock()
			defer mu.Unlock()
			if d := time.Since(c.When); d < -time.Minute || d > time.Minute {
				t.Errorf("the commit's time: %v", c.When)
			}
			if c.Author.Via != wpsidecar.ViaBinlog || c.Author.Login != wpsidecar.LoginPHP {
				return // the sidecar's own
			}
			var items []string
			for _, it := range c.Items {
				if show(it.Before) == show(it.After) {
					continue // no entry
				}
				name := "g"
				if c.Namespace == wpsidecar.ThemeOptions {
					name = c.Object
				}
				items = append(items, name+" "+it.Key+" "+show(it.Before)+" → "+show(it.After))
			}
			if len(items) > 0 {
				got = append(got, strings.Join(items, "; "))
				origins = append(origins, c.Origin)
			}
		}),
		Heartbeat: 100 * time.Millisecond, Log: zerolog.Nop()})
	ctx := context.Background()
	testwait.For(t, "a heartbeat", func() bool { return feed.Current(300 * time.Millisecond) })

	// One session: the transaction and the tag are a session's.
	sess, err := tdb.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	tag := []string{"SELECT 1"}
	if flavor == "mysql" {
		tag = []string{"SET gtid_next = 'AUTOMATIC:wptag'"}
	}
	for _, q := range [][]string{
		{"INSERT INTO wp_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES ('g1', 'T', '{}', NOW(), NOW()), ('g2', 'U', '{}', NOW(), NOW())"},
		tag, {"UPDATE wp_fieldmgr_groups SET title = 'T2' WHERE group_key = 'g1'"}, {"SET gtid_next = 'AUTOMATIC'"},
		{"UPDATE wp_fieldmgr_groups SET updated_at = '2030-01-01 00:00:00'"},
		{"BEGIN", "UPDATE wp_fieldmgr_groups SET title = 'ours' WHERE group_key = 'g2'", "INSERT INTO wp_wpsidecar_history (item_key) VALUES ('g2')", "COMMIT"},
		{`INSERT INTO wp_options (option_name, option_value, autoload) VALUES ('opts', 'a:2:{s:1:"a";i:1;s:1:"b";d:1;}', 'yes')`},
		{`UPDATE wp_options SET option_value = 'a:2:{s:1:"a";i:2;s:1:"c";b:1;}' WHERE option_name = 'opts'`},
		{"DELETE FROM wp_fieldmgr_groups"},
		// Last: what came before it has all been handed over once it is.
		{"INSERT INTO wp_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES ('end', 'E', '{}', NOW(), NOW())"},
	} {
		for _, q := range q {
			if q == "SET gtid_next = 'AUTOMATIC'" && flavor != "mysql" {
				continue
			}
			if _, err := sess.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	g := func(title string) string { return `{"title":"` + title + `","status":"active","config":"{}"}` }
	want := []string{
		"g g1 - → " + g("T") + "; g g2 - → " + g("U"),
		"g g1 " + g("T") + " → " + g("T2"),
		"opts a - → i:1;; opts b - → d:1;",
		"opts a i:1; → i:2;; opts c - → b:1;; opts b d:1; → -",
		"g g1 " + g("T2") + " → -; g g2 " + g("ours") + " → -",
		"g end - → " + `{"title":"E","status":"active","config":"{}"}`,
	}
	testwait.For(t, "the last transaction", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0 && strings.HasPrefix(got[len(got)-1], "g end")
	})
	mu.Lock()
	if !slices.Equal(got, want) {
		t.Errorf("history:\n%q\nwant\n%q", got, want)
	}
	// Each transaction by its GTID: MariaDB's domain-server-sequence,
	// MySQL's uuid:number, the tagged one's uuid:tag:number.
	gtid := map[string]*regexp.Regexp{"mariadb": regexp.MustCompile(`^\d+-\d+-\d+$`), "mysql": regexp.MustCompile(`^[0-9a-f-]{36}:\d+$`)}[flavor]
	for i, o := range origins {
		re := gtid
		if i == 1 && flavor == "mysql" {
			re = regexp.MustCompile(`^[0-9a-f-]{36}:wptag:\d+$`)
		}
		if !re.MatchString(o) {
			t.Errorf("transaction %d's origin %q is not its GTID (%s)", i, o, re)
		}
	}
	if len(origins) > 1 && origins[0] == origins[1] {
		t.Errorf("two transactions named alike: %q", origins)
	}
	mu.Unlock()
	stop()
}

// subscriber is a test's subscriber of both kinds of event.
type subscriber struct {
	touched func(wpsidecar.Touched)
	commit  func(wpsidecar.Commit)
}

func (s subscriber) Touched(t wpsidecar.Touched) {
	if s.touched != nil {
		s.touched(t)
	}
}

func (s subscriber) Commit(c wpsidecar.Commit) {
	if s.commit != nil {
		s.commit(c)
	}
}

func touchedFunc(f func(wpsidecar.Touched)) subscriber { return subscriber{touched: f} }

// TestFeed_ReportsVisible: a server sends a transaction to the log's
// readers before its engine has committed it; the feed tells its
// subscriber of it only once a read of the primary sees it, for an option
// row and for a namespace's own table alike. Writers commit updates back
// to back; at the k-th report, a read finds at least the k-th value (a
// settings refresh or a memo read then finds the new row, never the old
// one).
func TestFeed_ReportsVisible(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	tdb.SetOption(t, "counter", "0")
	for _, q := range []string{"CREATE TABLE wp_menus" + menusDDL, "INSERT INTO wp_menus (menu_key, title, items, updated_at) VALUES ('main', '0', '', NOW())"} {
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range []struct {
		name        string
		read, write string
		wrote       func(wpsidecar.Touched) bool
	}{
		{"an option row", "SELECT option_value FROM wp_options WHERE option_name = 'counter'",
			"UPDATE wp_options SET option_value = ? WHERE option_name = 'counter'",
			func(tc wpsidecar.Touched) bool { return slices.Contains(tc.Options[0], "counter") }},
		{"a namespace's table", "SELECT title FROM wp_menus WHERE menu_key = 'main'",
			"UPDATE wp_menus SET title = ? WHERE menu_key = 'main'",
			func(tc wpsidecar.Touched) bool { return len(tc.Tables["wp_menus"]) > 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			const n = 300
			var stale []string
			reports := make(chan struct{}, n)
			seen := 0
			var logs testlog.Buffer
			_, stop := runFeed(t, changes.FeedOptions{Conn: srv.Config(), ServerID: uint32(4246 + i), Schema: tdb.Name, Options: "wp_options",
				Tables: []changes.Table{menus("wp_menus", tdb.SQL)},
				Subscriber: subscriber{touched: func(tc wpsidecar.Touched) {
					if !c.wrote(tc) {
						return
					}
					seen++
					var v int
					if err := tdb.SQL.QueryRow(c.read).Scan(&v); err != nil || v < seen {
						stale = append(stale, fmt.Sprintf("report %d read %d (%v)", seen, v, err))
					}
					reports <- struct{}{}
				}},
				Heartbeat: 200 * time.Millisecond, Log: zerolog.New(&logs), Primary: tdb.Store(t)})
			for i := 1; i <= n; i++ {
				if _, err := tdb.SQL.Exec(c.write, strconv.Itoa(i)); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < n; i++ {
				select {
				case <-reports:
				case <-time.After(30 * time.Second):
					t.Fatalf("%d reports of %d", i, n)
				}
			}
			stop() // the subscriber is called on Run's goroutine: stale is its
			if len(stale) > 0 {
				t.Errorf("%d of %d reports came before the primary showed the change: %q", len(stale), n, stale[:min(len(stale), 5)])
			}
			if strings.Contains(logs.String(), "cannot tell when the primary shows") {
				t.Errorf("the feed could not wait on the row:\n%s", logs.String())
			}
		})
	}
}

// TestFeed_RowLockedByLater: a transaction whose row a later, still open
// transaction has locked since (issue 46, item 4) holds up neither the
// reading of the log nor the transactions after it: one of them shown on
// the primary is every one before it shown (the server commits in the
// log's order), and the feed reports both in order while the lock is
// held. Meanwhile the feed, which has read what it has not reported, is
// not current, though it hears the server's heartbeats. Alone, the
// transaction is reported once the wait is over, with a warning, and
// again once its row can be read.
func TestFeed_RowLockedByLater(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	for i, c := range []struct {
		name  string
		wait  time.Duration // CommitWait
		later bool          // a later transaction writes another row
		want  []string
		warn  bool
	}{
		// The wait outlasts the test's: waiting it out fails the test.
		{"a later transaction shows it", time.Minute, true, []string{"a", "b"}, false},
		{"alone", 50 * time.Millisecond, false, []string{"a"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tdb := testdb.NewOn(t, srv.Config())
			tdb.SetOption(t, "a", "0")
			tdb.SetOption(t, "b", "0")
			var mu sync.Mutex
			var got []string
			reported := func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(got) }
			var logs testlog.Buffer
			feed, err := changes.NewFeed(changes.FeedOptions{Conn: srv.Config(), ServerID: uint32(4250 + i), Schema: tdb.Name, Options: "wp_options",
				Subscriber: touchedFunc(func(tc wpsidecar.Touched) { mu.Lock(); got = append(got, tc.Options[0]...); mu.Unlock() }),
				Heartbeat:  50 * time.Millisecond, Log: zerolog.New(&logs), Primary: tdb.Store(t), CommitWait: c.wait})
			if err != nil {
				t.Fatal(err)
			}
			defer feed.Close()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			defer func() { cancel(); <-done }()
			if err := feed.Check(ctx); err != nil {
				t.Fatal(err)
			}
			// Before the feed reads the log: T1 commits a, T2 locks a and
			// stays open.
			if _, err := tdb.SQL.Exec("UPDATE wp_options SET option_value = '1' WHERE option_name = 'a'"); err != nil {
				t.Fatal(err)
			}
			t2, err := tdb.SQL.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer t2.Close()
			for _, q := range []string{"BEGIN", "UPDATE wp_options SET option_value = '2' WHERE option_name = 'a'"} {
				if _, err := t2.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			started := time.Now()
			go func() { feed.Run(ctx, func(context.Context) {}); close(done) }()
			if c.later {
				// Heard well after T1 was sent: a heartbeat, read while T1
				// waits; yet the feed is not current, T1 not reported.
				// (A heartbeat the server sent before T1, as MySQL does on
				// connecting, vouches for what came before it, and only
				// within a staleness bound: 100 ms are long past.)
				testwait.For(t, "a heartbeat after T1", func() bool { return feed.LastSeen().After(started.Add(300 * time.Millisecond)) })
				if current := feed.Current(100 * time.Millisecond); current || len(reported()) > 0 {
					t.Fatalf("current %v, reported %q while T1 waits", current, reported())
				}
				if _, err := tdb.SQL.Exec("UPDATE wp_options SET option_value = '1' WHERE option_name = 'b'"); err != nil {
					t.Fatal(err)
				}
			}
			testwait.For(t, "the transactions reported", func() bool { return len(reported()) >= len(c.want) })
			if got := reported(); !slices.Equal(got, c.want) {
				t.Fatalf("reported %q, want %q", got, c.want)
			}
			testwait.For(t, "the feed current while T2 holds the row", func() bool { return feed.Current(time.Second) })
			if _, err := t2.ExecContext(ctx, "COMMIT"); err != nil {
				t.Fatal(err)
			}
			want := append(slices.Clone(c.want), "a")
			if c.warn {
				// T1, reported before its row could be read, is reported
				// again once it can: what was read of it meanwhile (the
				// row T2 held) is dropped again. Then T2.
				want = append(want, "a")
			}
			testwait.For(t, "T2 reported", func() bool { return len(reported()) >= len(want) })
			if got := reported(); !slices.Equal(got, want) {
				t.Errorf("reported %q, want %q", got, want)
			}
			if warned := strings.Contains(logs.String(), "still locked on the primary; reporting it anyway"); warned != c.warn {
				t.Errorf("warned %v, want %v; log:\n%s", warned, c.warn, logs.String())
			}
		})
	}
}

// BenchmarkFeed_RowLockedByLater is how long a transaction committed
// after one whose row a later, still open transaction locked takes to be
// reported: T1 writes a; T2, waiting on T1, locks a as T1 commits; the
// time is from T3's write of b until b is reported.
func BenchmarkFeed_RowLockedByLater(b *testing.B) {
	srv := testdb.StartBinlogServer(b)
	tdb := testdb.NewOn(b, srv.Config())
	tdb.SetOption(b, "a", "-")
	tdb.SetOption(b, "b", "-")
	reported := make(chan struct{}, 1)
	runFeed(b, changes.FeedOptions{Conn: srv.Config(), ServerID: 4252, Schema: tdb.Name, Options: "wp_options",
		Subscriber: touchedFunc(func(tc wpsidecar.Touched) {
			if slices.Contains(tc.Options[0], "b") {
				reported <- struct{}{}
			}
		}),
		Heartbeat: 100 * time.Millisecond, Log: zerolog.Nop(), Primary: tdb.Store(b)})
	ctx := context.Background()
	// T2 locks the row as the feed reads it, by its primary key: locked
	// by the option's name, the row itself would be free for an instant.
	var a string
	if err := tdb.SQL.QueryRow("SELECT option_id FROM wp_options WHERE option_name = 'a'").Scan(&a); err != nil {
		b.Fatal(err)
	}
	conns := make([]*sql.Conn, 2)
	for i := range conns {
		c, err := tdb.SQL.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	exec := func(c *sql.Conn, q string) {
		if _, err := c.ExecContext(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		t1, t2 := conns[0], conns[1]
		exec(t1, "BEGIN")
		exec(t1, "UPDATE wp_options SET option_value = '"+strconv.Itoa(i)+"' WHERE option_id = "+a)
		exec(t2, "BEGIN")
		locked := make(chan error)
		go func() {
			_, err := t2.ExecContext(ctx, "SELECT option_value FROM wp_options WHERE option_id = "+a+" FOR UPDATE")
			locked <- err
		}()
		waitLockWait(b, tdb.SQL)
		exec(t1, "COMMIT")
		if err := <-locked; err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := tdb.SQL.Exec("UPDATE wp_options SET option_value = ? WHERE option_name = 'b'", strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
		select {
		case <-reported:
		case <-time.After(time.Minute):
			b.Fatal("T3 not reported")
		}
		b.StopTimer()
		exec(t2, "ROLLBACK")
	}
}

// waitLockWait returns once a session waits for a row lock.
func waitLockWait(b *testing.B, db *sql.DB) {
	testwait.For(b, "a session waiting for a row lock", func() bool {
		var name string
		var n int
		if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_current_waits'").Scan(&name, &n); err != nil {
			b.Fatal(err)
		}
		return n > 0
	})
}

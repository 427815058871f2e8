package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
)

// autoSite is a site on srv with an administrator and theme options of
// three fields, and the sidecar's arguments for it (change-feed left to
// its default, auto).
func autoSite(t *testing.T, srv *testdb.Server, upstream string) (*testdb.DB, []string, []string) {
	tdb := testdb.NewOn(t, srv.Config())
	testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: "abcdefghijklmnopqrstuvwx"})
	cfgFile := filepath.Join(t.TempDir(), "themeopts.json")
	os.WriteFile(cfgFile, []byte(`{"opt_name":"o","sections":[{"id":"s","fields":[{"id":"a","type":"text"},{"id":"b","type":"text"}]}]}`), 0o644)
	args := []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--upstream", upstream, "--themeopts-config", cfgFile, "--environment-type", "local"}
	env := []string{"WORDPRESS_DB_HOST=127.0.0.1:" + strconv.Itoa(srv.Port), "WORDPRESS_DB_USER=root", "WORDPRESS_DB_NAME=" + tdb.Name, "WORDPRESS_TABLE_PREFIX=" + testdb.Prefix}
	return tdb, args, env
}

// readyz is /readyz's answer, decoded.
func readyz(t *testing.T, s *started) (int, map[string]string) {
	t.Helper()
	code, body := get(t, s.admin+"/readyz")
	var st map[string]string
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("readyz %d %q: %v", code, body, err)
	}
	return code, st
}

// waitReadyz waits until /readyz answers 200 with exactly want.
func waitReadyz(t *testing.T, s *started, want map[string]string) {
	t.Helper()
	testwait.For(t, fmt.Sprintf("readyz 200 %v", want), func() bool {
		code, st := readyz(t, s)
		return code == 200 && maps.Equal(st, want)
	})
}

// readOptions is the theme options as the administrator reads them.
func readOptions(t *testing.T, s *started) string {
	t.Helper()
	code, body, _ := testsite.Send(t, http.MethodGet, s.public+"/wp-json/themeopts/v1/options", "", "admin", "abcdefghijklmnopqrstuvwx")
	if code != 200 {
		t.Fatalf("GET options: %d %s", code, body)
	}
	return body
}

// answersFromMemory is how many GETs s answered without the database.
func answersFromMemory(t *testing.T, s *started) float64 {
	t.Helper()
	_, m := get(t, s.admin+"/metrics")
	var fromMemory float64
	for _, name := range []string{`wpsidecar_serve_from_feed_reads_total{source="memory"}`, `wpsidecar_prepared_answers_total{result="given"}`} {
		var n float64
		if i := strings.Index(m, "\n"+name+" "); i < 0 {
			t.Fatalf("no %s:\n%s", name, m)
		} else if _, err := fmt.Sscan(m[i+len(name)+2:], &n); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fromMemory += n
	}
	return fromMemory
}

// TestRun_AutoChangeFeed: by default (change-feed auto), on a server with
// a row binary log the sidecar follows it and answers GETs from memory
// (--serve-from-feed=false: it follows, and reads every time); on a
// server without one it polls, reads the database for every GET, and
// says why, with what to change, in its log, /readyz and --check-config.
func TestRun_AutoChangeFeed(t *testing.T) {
	php := httptest.NewServer(http.NotFoundHandler())
	defer php.Close()
	srv := testdb.StartBinlogServer(t)
	tdb, args, env := autoSite(t, srv, php.URL)
	s := start(t, args, env)
	waitReadyz(t, s, map[string]string{"change_feed": "binlog", "database": "ok", "leader": "yes", "serve_from_feed": "memory", "upstream": "ok"})
	waitLog(t, s, "binlog change feed on")
	waitLog(t, s, "serve-from-feed on")
	waitLog(t, s, `"change_feed":"auto"`, `"feed":"binlog"`, "change detection on")
	tdb.SetOption(t, "o", `a:1:{s:1:"a";s:1:"x";}`)
	// Once the feed has caught up and nothing is being read again, a GET
	// is answered from memory: a read of the memo, or the answer given
	// again. On a busy machine the first reads may still go to the
	// database (the feed not yet current), so this waits for one that does not.
	testwait.For(t, "a GET answered from memory", func() bool {
		if got := readOptions(t, s); got != `{"a":"x"}` {
			return false
		}
		return answersFromMemory(t, s) >= 1
	})
	s.stop()

	off := start(t, append(args, "--serve-from-feed=false"), env)
	waitReadyz(t, off, map[string]string{"change_feed": "binlog", "database": "ok", "leader": "yes", "upstream": "ok"})
	off.stop()

	var out bytes.Buffer
	if err := run(context.Background(), append(args, "--check-config"), env, &out, io.Discard, nil); err != nil ||
		!strings.HasSuffix(out.String(), "\n# change-feed auto: binlog: 127.0.0.1:"+strconv.Itoa(srv.Port)+" can feed the sidecar; it would follow the binary log, answering GETs from memory while the feed is current (serve-from-feed)\n") {
		t.Errorf("check-config on a binlog server: %v\n%s", err, out.String())
	}

	// A server without a binary log.
	plain := testdb.StartServer(t)
	_, args, env = autoSite(t, plain, php.URL)
	var format, image string
	if err := testdb.NewOn(t, plain.Config()).SQL.QueryRow("SELECT @@GLOBAL.binlog_format, @@GLOBAL.binlog_row_image").Scan(&format, &image); err != nil {
		t.Fatal(err)
	}
	why := "binlog change feed unusable: the binary log is off (start the server with log_bin and a server_id: in my.cnf's [mysqld], log_bin=binlog, server_id=1, binlog_format=ROW and binlog_row_image=FULL, then restart it)"
	if format != "ROW" {
		why += "; binlog_format is " + format + " (SET GLOBAL binlog_format=ROW, and binlog_format=ROW in my.cnf's [mysqld] to keep it)"
	}
	if image != "FULL" {
		why += "; binlog_row_image is " + image + " (SET GLOBAL binlog_row_image=FULL, and binlog_row_image=FULL in my.cnf's [mysqld] to keep it)"
	}
	p := start(t, args, env)
	waitReadyz(t, p, map[string]string{"change_feed": "poll", "change_feed_reason": why, "database": "ok", "leader": "yes", "serve_from_feed": "database", "upstream": "ok"})
	waitLog(t, p, "change-feed auto: the server cannot feed the sidecar; polling and reading the database for every GET until it can", "the binary log is off (start the server")
	waitLog(t, p, `"change_feed":"auto"`, `"feed":"poll"`, `"reason":"binlog change feed unusable: the binary log is off`, "change detection on")
	if got := readOptions(t, p); got != `{}` {
		t.Errorf("options %s", got)
	}
	p.stop()
	out.Reset()
	if err := run(context.Background(), append(args, "--check-config"), env, &out, io.Discard, nil); err != nil ||
		!strings.HasSuffix(out.String(), "\n# change-feed auto: poll: "+why+"; the sidecar would poll and read the database for every GET, asking the server again every 1m0s\n") {
		t.Errorf("check-config without a binary log: %v\n%s", err, out.String())
	}
}

// TestRun_AutoFeedFallBack: the feed's user loses its replication grants
// and the feed falls back to polling, saying which grant is missing; a
// change made then is noticed by polling; the grants given back, the
// sidecar follows the log again (within thirty change intervals), that
// change reported once, memory forgotten (the value read before the
// fall-back is not served), and a later change reported once, by the
// feed.
func TestRun_AutoFeedFallBack(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[string(b)]++
		mu.Unlock()
	}))
	defer hook.Close()
	count := func(body string) int { mu.Lock(); defer mu.Unlock(); return got[body] }
	php := httptest.NewServer(http.NotFoundHandler())
	defer php.Close()
	// A Varnish's purge endpoint: the xkey-purge headers it is sent.
	var purged []string
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		purged = append(purged, r.Header.Get("xkey-purge"))
		mu.Unlock()
	}))
	defer cdn.Close()
	srv := testdb.StartBinlogServer(t)
	tdb, args, env := autoSite(t, srv, php.URL)
	exec := func(q string) {
		t.Helper()
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE USER 'feed'@'%' IDENTIFIED BY 'feed-pw'")
	exec("GRANT SELECT ON " + tdb.Name + ".* TO 'feed'@'%'")
	exec("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'feed'@'%'")
	tdb.SetOption(t, "o", `a:2:{s:1:"a";s:1:"x";s:1:"b";s:1:"x";}`)
	s := start(t, append(args, "--binlog-dsn", "feed:feed-pw@tcp(127.0.0.1:"+strconv.Itoa(srv.Port)+")/", "--change-interval", "100ms",
		"--webhook-urls", hook.URL, "--webhook-secret", "s", "--cache-rest", "wp/v2", "--purge-varnish", cdn.URL), env)
	onFeed := map[string]string{"change_feed": "binlog", "database": "ok", "leader": "yes", "serve_from_feed": "memory", "upstream": "ok", "rest_cache": "on"}
	waitReadyz(t, s, onFeed)
	for i := 0; i < 2; i++ { // the second from memory
		if got := readOptions(t, s); got != `{"a":"x","b":"x"}` {
			t.Fatalf("options %s", got)
		}
	}

	// Out of the log: a statement the feed followed would have it forget
	// everything itself.
	unlogged, err := tdb.SQL.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlogged.Close()
	for _, q := range []string{"SET SESSION sql_log_bin = 0", "REVOKE REPLICATION SLAVE, REPLICATION CLIENT ON *.* FROM 'feed'@'%'"} {
		if _, err := unlogged.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tdb.KillConnections(t, "feed")
	// Changed while the feed is down, before the poller has looked since:
	// its first look tells (its baseline was taken when the feed started).
	between := `{"namespace":"themeopts","ids":["a"]}`
	exec(`UPDATE wp_options SET option_value = 'a:2:{s:1:"a";s:1:"y";s:1:"b";s:1:"x";}' WHERE option_name = 'o'`)
	grant := "(GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'feed'@'%', the host as SELECT CURRENT_USER() names it)"
	testwait.For(t, "readyz saying the feed polls for want of the grant", func() bool {
		_, st := readyz(t, s)
		return st["change_feed"] == "poll" && st["serve_from_feed"] == "database" && strings.Contains(st["change_feed_reason"], grant)
	})
	waitLog(t, s, "binlog change feed cannot go on; falling back to polling", grant)

	testwait.For(t, "the change between reported", func() bool { return count(between) == 1 })

	if _, err := unlogged.ExecContext(context.Background(), "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'feed'@'%'"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	purged = nil
	mu.Unlock()
	waitReadyz(t, s, onFeed)
	waitLog(t, s, "change-feed auto: the server can feed the sidecar again; following its binary log from its current position")
	// What the feed did not hear, CDNs forget too: every answer of
	// --cache-rest's (issue 55, item 2).
	testwait.For(t, "every kept answer purged once the feed follows again", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(purged, "rest")
	})
	if got := readOptions(t, s); got != `{"a":"y","b":"x"}` {
		t.Errorf("options after the feed resumed: %s", got)
	}
	after := `{"namespace":"themeopts","ids":["b"]}`
	exec(`UPDATE wp_options SET option_value = 'a:2:{s:1:"a";s:1:"y";s:1:"b";s:1:"z";}' WHERE option_name = 'o'`)
	testwait.For(t, "the change after reported", func() bool { return count(after) == 1 })
	waitLog(t, s, `"via":"binlog"`, `"keys":["b"]`)
	if count(between) != 1 || count(after) != 1 {
		mu.Lock()
		t.Errorf("webhooks %v", got)
		mu.Unlock()
	}
	if got := readOptions(t, s); got != `{"a":"y","b":"z"}` {
		t.Errorf("options after a change followed: %s", got)
	}
}

// TestRun_CacheREST: --cache-rest says in /readyz whether PHP's answers
// are given from memory (on once the binlog feed follows), and in
// --check-config what it keeps; with change-feed poll it is refused.
func TestRun_CacheREST(t *testing.T) {
	php := httptest.NewServer(http.NotFoundHandler())
	defer php.Close()
	srv := testdb.StartBinlogServer(t)
	_, args, env := autoSite(t, srv, php.URL)
	args = append(args, "--cache-rest", "wp/v2, wc/store/v1")
	s := start(t, args, env)
	waitReadyz(t, s, map[string]string{"change_feed": "binlog", "database": "ok", "leader": "yes", "serve_from_feed": "memory", "rest_cache": "on", "upstream": "ok"})
	waitLog(t, s, "cache-rest on", `"namespaces":["wp/v2","wc/store/v1"]`, `"mib":64`)
	s.stop()

	var out bytes.Buffer
	if err := run(context.Background(), append(args, "--check-config"), env, &out, io.Discard, nil); err != nil ||
		!strings.Contains(out.String(), "\n# cache-rest: wp/v2,wc/store/v1: PHP's answers to anonymous GET and HEAD requests kept in at most 64 MiB while the binlog feed is current; every request goes to PHP while it is not\n") {
		t.Errorf("check-config: %v\n%s", err, out.String())
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cache-rest", "wp/v2", "--change-feed", "poll"}, "cache-rest: needs change-feed auto or binlog"},
		{[]string{"--cache-rest", "wp v2"}, `"wp v2" is not a REST namespace such as wp/v2`},
	} {
		if err := run(context.Background(), append(slices.Clone(args[:len(args)-2]), c.args...), env, io.Discard, io.Discard, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

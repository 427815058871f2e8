//go:build soak

package soak

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

var purgeDuration = flag.Duration("purge-duration", 2*time.Minute, "how long TestSoakPurges' load runs")

// TestSoakPurges: --cache-rest wp/v2 behind a real Varnish that keeps the
// answers it is given for an hour, counting on the sidecar's purges
// (issue 55). Two instances share the site, as replicas do: the first,
// Varnish's backend, leads; the second follows. For -purge-duration,
// readers ask a set of URLs through Varnish and through both instances,
// writers change posts by SQL, by PHP and by bulk statements, and three
// faults come in turn: the feed's grants revoked for a while (the feed
// falls back to polling, and follows again), the purge target hung for a
// while (a proxy in front of Varnish's purges that answers nothing), and
// the leader killed (the second instance takes over the purges; the
// first comes back, following). Once the load stops, every URL read must
// show PHP's own answer, through both instances and through Varnish,
// within a few seconds: the count of differences is printed and must be
// 0. Seven posts are written only during the faults, so that no later
// write hides a purge they lost.
func TestSoakPurges(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	var hung atomic.Bool
	var purgeTarget *url.URL
	purges := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for hung.Load() {
			select {
			case <-r.Context().Done():
				return // answered nothing: the purger's request times out
			case <-time.After(50 * time.Millisecond):
			}
		}
		httputil.NewSingleHostReverseProxy(purgeTarget).ServeHTTP(w, r)
	}))
	defer purges.Close()
	root := srv.Config()
	rootDB, err := sql.Open("mysql", root.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer rootDB.Close()
	for _, q := range []string{"CREATE USER 'feed'@'%' IDENTIFIED BY 'feed-pw'", "GRANT REPLICATION SLAVE, " + replicationClient() + " ON *.* TO 'feed'@'%'"} {
		if _, err := rootDB.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	site, err := wptest.Start(wptest.Options{DB: root, Varnish: true, VarnishTTL: time.Hour,
		VarnishPurge: func(varnish string) string { purgeTarget, _ = url.Parse(varnish); return purges.URL },
		SidecarArgs: []string{"--binlog-dsn", "feed:feed-pw@tcp(127.0.0.1:" + strconv.Itoa(srv.Port) + ")/", "--change-interval", "100ms",
			"--cache-rest", "wp/v2", "--access-log", "off"}})
	if err != nil {
		t.Fatal(err)
	}
	defer site.Stop()
	db := site.DB(t)
	second, err := site.StartInstance()
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the first instance to lead", func() bool { return site.Sidecar.Leads() })
	if second.Leads() {
		t.Fatal("the second instance leads too")
	}

	var posts []int64
	for i := range 30 {
		var id int64
		site.PHP(t, fmt.Sprintf(`return wp_insert_post(array("post_title" => "soak %d", "post_status" => "publish", "post_author" => 1, "post_content" => "<p>soak</p>"));`, i), &id)
		posts = append(posts, id)
	}
	paths := []string{"/wp-json/wp/v2/posts?per_page=10", "/wp-json/wp/v2/posts?per_page=5&page=2", "/wp-json/wp/v2/posts?orderby=id&order=asc&per_page=3",
		"/wp-json/wp/v2/categories", "/wp-json/wp/v2/users/1"}
	for _, id := range posts {
		paths = append(paths, fmt.Sprintf("/wp-json/wp/v2/posts/%d", id))
	}
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(base, path string) (int, string) {
		resp, err := client.Get(base + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	ctx, stop := context.WithTimeout(context.Background(), *purgeDuration)
	defer stop()
	var load sync.WaitGroup
	var reads, writes atomic.Int64
	for range 4 { // readers
		load.Go(func() {
			for ctx.Err() == nil {
				p := paths[rand.IntN(len(paths))]
				get(site.VarnishURL, p)
				get(site.URL, p)
				get(second.URL, p)
				reads.Add(3)
			}
		})
	}
	// The steady writers leave seven posts alone: those are written only
	// during the faults, three in the first and two in each other, so
	// that nothing after them purges them again.
	steady, quiet := posts[:23], posts[23:]
	writeQuiet := func(when string, ids []int64) {
		for _, id := range ids {
			if _, err := db.Exec("UPDATE wp_posts SET post_title = ? WHERE ID = ?", fmt.Sprintf("soak %d, %s", id, when), id); err != nil {
				t.Error(err)
			}
		}
	}
	load.Go(func() { // writers: SQL often, PHP now and then, a bulk statement once in a while
		for n := 0; ctx.Err() == nil; n++ {
			id := steady[rand.IntN(len(steady))]
			switch {
			case n%50 == 49:
				db.Exec("UPDATE wp_posts SET post_content = CONCAT('<p>bulk ', ?, '</p>') WHERE post_title LIKE 'soak % by %'", n)
			case n%10 == 9:
				site.PHP(t, fmt.Sprintf(`return wp_update_post(array("ID" => %d, "post_title" => "soak %d by php"));`, id, n), nil)
			default:
				db.Exec("UPDATE wp_posts SET post_title = ? WHERE ID = ?", fmt.Sprintf("soak %d by sql", n), id)
			}
			writes.Add(1)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	load.Go(func() { // the faults, in turn, a quarter, a half and three quarters in
		quarter := *purgeDuration / 4
		if !sleep(ctx, quarter) {
			return
		}
		revokeFeed(t, rootDB, []*wptest.Sidecar{site.Sidecar, second}, func() { writeQuiet("while the feed was down", quiet[:3]) }, min(quarter/2, 10*time.Second))
		if !sleep(ctx, quarter/2) {
			return
		}
		hung.Store(true)
		t.Logf("%s: the purge target hung", time.Now().Format(time.TimeOnly))
		writeQuiet("while the purge target hung", quiet[3:5])
		// Longer than the purger's request timeout (10 s): its requests
		// fail, and what changes meanwhile waits with them.
		time.Sleep(max(15*time.Second, min(quarter/2, 30*time.Second))) // the fault's length, not a wait for a condition
		hung.Store(false)
		t.Logf("%s: the purge target answers again", time.Now().Format(time.TimeOnly))
		if !sleep(ctx, quarter/2) {
			return
		}
		site.Sidecar.Kill()
		t.Logf("%s: the leader killed", time.Now().Format(time.TimeOnly))
		// Written before the second instance leads, noticed by it alone:
		// its purges are the new leader's to send.
		writeQuiet("while the leader was dead", quiet[5:])
		for deadline := time.Now().Add(testwait.Within); !second.Leads(); time.Sleep(50 * time.Millisecond) { // a poll's pace; the deadline bounds it
			if time.Now().After(deadline) {
				t.Errorf("the second instance does not lead after %s:\n%s", testwait.Within, tailLines(second.Log(), 20))
				break
			}
		}
		t.Logf("%s: the second instance leads", time.Now().Format(time.TimeOnly))
		if err := site.Sidecar.Restart(); err != nil {
			t.Error(err)
		}
	})
	load.Wait()
	// The faults took: the feed fell back and followed again; purges
	// waited for the hung target.
	log := site.SidecarLog()
	for _, want := range []string{"falling back to polling", "following its binary log from its current position", "purge failed; will retry"} {
		if !strings.Contains(log, want) {
			t.Errorf("the sidecar's log does not say %q: a fault did not take", want)
		}
	}
	if site.Sidecar.Leads() || !second.Leads() {
		t.Errorf("after the leader's death, the second instance should lead and the first, back, follow")
	}

	// Every URL, through both, as PHP answers it now: within a few
	// seconds of the load's end (the feed's, then the purges' latency).
	differ := func() []string {
		var out []string
		for _, p := range paths {
			code, want := get(site.WPURL, p)
			if code != 200 {
				t.Fatalf("PHP's own answer to %s: %d %.200s", p, code, want)
			}
			for _, via := range []struct{ name, base string }{{"sidecar", site.URL}, {"second sidecar", second.URL}, {"varnish", site.VarnishURL}} {
				if code, got := get(via.base, p); code != 200 || got != want {
					out = append(out, via.name+" "+p)
				}
			}
		}
		return out
	}
	var left []string
	for deadline := time.Now().Add(10 * time.Second); ; {
		if left = differ(); len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond) // a retry's pace; the deadline bounds it
	}
	fmt.Printf("soak purges: %s of load, %d reads, %d writes, %d URLs through two sidecars and Varnish: %d differences from PHP's own answers\n",
		*purgeDuration, reads.Load(), writes.Load(), len(paths), len(left))
	if len(left) > 0 {
		t.Errorf("answers that differ from PHP's 10 s after the load: %s\nsidecar log (end):\n%s\nsecond sidecar's log (end):\n%s", strings.Join(left, ", "), tailLines(site.SidecarLog(), 40), tailLines(second.Log(), 40))
	}
}

// revokeFeed takes the feed's grants away (and its connections), calls
// meanwhile once every instance's feed has fallen back to polling, and
// gives the grants back after length.
func revokeFeed(t *testing.T, rootDB *sql.DB, instances []*wptest.Sidecar, meanwhile func(), length time.Duration) {
	unlogged, err := rootDB.Conn(context.Background())
	if err != nil {
		t.Error(err)
		return
	}
	defer unlogged.Close()
	grants := "REPLICATION SLAVE, " + replicationClient() + " ON *.* "
	for _, q := range []string{"SET SESSION sql_log_bin = 0", "REVOKE " + grants + "FROM 'feed'@'%'"} {
		if _, err := unlogged.ExecContext(context.Background(), q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	(&testdb.DB{SQL: rootDB}).KillConnections(t, "feed")
	t.Logf("%s: the feed's grants revoked", time.Now().Format(time.TimeOnly))
	for _, c := range instances {
		for deadline := time.Now().Add(testwait.Within); c.Ready()["change_feed"] != "poll"; time.Sleep(50 * time.Millisecond) { // a poll's pace; the deadline bounds it
			if time.Now().After(deadline) {
				t.Errorf("the feed at %s did not fall back to polling within %s: %v", c.AdminURL, testwait.Within, c.Ready())
				break
			}
		}
	}
	meanwhile()
	time.Sleep(length) // the fault's length, not a wait for a condition
	if _, err := unlogged.ExecContext(context.Background(), "GRANT "+grants+"TO 'feed'@'%'"); err != nil {
		t.Error(err)
	}
	t.Logf("%s: the feed's grants given back", time.Now().Format(time.TimeOnly))
}

// sleep waits d, or until ctx ends: false then.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// replicationClient is the grant that lets a user ask where the log
// ends, as the server's flavor names it.
func replicationClient() string {
	if testdb.ServerFlavor() == "mysql" {
		return "REPLICATION CLIENT"
	}
	return "BINLOG MONITOR"
}

// tailLines is the last n lines of s.
func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
)

// BenchmarkChangeDetectionDatabaseCost is what noticing changes costs the
// database: the server's CPU time and the statements it runs per minute
// while nothing changes, with no sidecar (the floor), a sidecar polling
// every 2 s (the default) and one following the binary log. Both sidecars
// also re-read the site settings every 2 s (--settings-refresh), which the
// feed does not replace. One iteration is one 2 s interval: run it with
// -benchtime=15x or more (scripts/bench-feed-cost.sh).
func BenchmarkChangeDetectionDatabaseCost(b *testing.B) {
	srv := testdb.StartBinlogServer(b)
	tdb := testdb.NewOn(b, srv.Config())
	if _, err := tdb.SQL.Exec("CREATE TABLE wp_fieldmgr_groups (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, group_key VARCHAR(191) NOT NULL UNIQUE, title TEXT NOT NULL, config LONGTEXT NOT NULL, status VARCHAR(20) NOT NULL DEFAULT 'active', created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	// A site with 200 field groups of 4 KB each: polling digests them all.
	config := `{"fields":[` + strings.Repeat(`{"key":"field_x","label":"A field","type":"text"},`, 80) + `{}]}`
	for i := 0; i < 200; i++ {
		if _, err := tdb.SQL.Exec("INSERT INTO wp_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES (?, 'T', ?, NOW(), NOW())", fmt.Sprintf("group_%d", i), config); err != nil {
			b.Fatal(err)
		}
	}
	tdb.SetOption(b, "o", `a:1:{s:1:"a";s:1:"x";}`)
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	php := httptest.NewServer(http.NotFoundHandler())
	defer php.Close()
	cfgFile := filepath.Join(b.TempDir(), "themeopts.json")
	os.WriteFile(cfgFile, []byte(`{"opt_name":"o","sections":[{"id":"s","fields":[{"id":"a","type":"text"}]}]}`), 0o644)
	env := []string{"WORDPRESS_DB_HOST=127.0.0.1:" + strconv.Itoa(srv.Port), "WORDPRESS_DB_USER=root", "WORDPRESS_DB_NAME=" + tdb.Name, "WORDPRESS_TABLE_PREFIX=" + testdb.Prefix,
		"GOMAXPROCS=" + strconv.Itoa(runtime.GOMAXPROCS(0))} // run keeps the benchmark's own

	for _, mode := range []string{"none", "poll", "binlog"} {
		b.Run(mode, func(b *testing.B) {
			if mode != "none" {
				s := start(b, []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--upstream", php.URL, "--themeopts-config", cfgFile,
					"--fieldmgr-table", "wp_fieldmgr_groups", "--change-feed", mode, "--webhook-urls", hook.URL, "--webhook-secret", "s"}, env)
				defer s.stop()
				if _, body := get(b, s.admin+"/readyz"); mode == "binlog" && !strings.Contains(body, `"change_feed":"binlog"`) {
					b.Fatalf("not following the binary log: %s\n%s", body, s.log)
				}
			}
			// Not a wait: the cost of time passing is what is measured.
			idle := func() { time.Sleep(2 * time.Second) }
			idle() // first, so that the start-up's reads are not counted
			cpu0, q0 := serverLoad(b, srv, tdb)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				idle()
			}
			b.StopTimer()
			cpu1, q1 := serverLoad(b, srv, tdb)
			minutes := float64(b.N) * 2 / 60
			b.ReportMetric(float64((cpu1-cpu0).Milliseconds())/minutes, "db-cpu-ms/min")
			b.ReportMetric(float64(q1-q0)/minutes, "statements/min")
		})
	}
}

// serverLoad is the server's CPU time so far (from /proc: user and system
// clock ticks, 100 a second on Linux) and its count of statements run
// (Questions, which counts this query too: the same in every mode).
func serverLoad(b *testing.B, srv *testdb.Server, tdb *testdb.DB) (time.Duration, int64) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", srv.PID()))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	var name string
	var q int64
	if err := tdb.SQL.QueryRow("SHOW GLOBAL STATUS LIKE 'Questions'").Scan(&name, &q); err != nil {
		b.Fatal(err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, q
}

package changes_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
)

// TestDetector: changes made straight in the database (as PHP or another
// replica makes them) are reported once, naming exactly what changed.
func TestDetector(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	groups, err := fieldgrouptable.Open(db, "wp_fieldmgr_groups")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	optName := "themeopts_options"
	var got []string
	d := changes.NewDetector(0, db, []changes.Table{fieldGroups("wp_fieldmgr_groups")}, themeOpts(func(int64) string { return optName }), changes.OnCommit(func(c wpsidecar.Commit) {
		if c.Author.Via != wpsidecar.ViaPoll || c.Origin != "" || time.Since(c.When) > time.Minute {
			t.Errorf("a polled commit: %+v", c)
		}
		got = append(got, string(c.Namespace)+":"+c.Object+":"+strings.Join(c.Keys(), ","))
	}), zerolog.Nop())
	poll := func(want ...string) {
		t.Helper()
		got = nil
		if err := d.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 && len(got) == 0 {
			return
		}
		if !slices.Equal(got, want) {
			t.Errorf("changes %v, want %v", got, want)
		}
	}
	poll() // no table, no row: the baseline
	if _, err := groups.EnsureTable(ctx); err != nil {
		t.Fatal(err)
	}
	poll()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := tdb.SQL.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec("INSERT INTO wp_fieldmgr_groups (group_key, title, config, status, created_at, updated_at) VALUES ('b', 'B', '{}', 'active', NOW(), NOW()), ('a', 'A', '{}', 'active', NOW(), NOW()), ('c', 'C', '{}', 'active', NOW(), NOW())")
	poll("fieldmgr:wp_fieldmgr_groups:a,b,c")
	poll()
	exec("UPDATE wp_fieldmgr_groups SET config = '{\"fields\":{}}' WHERE group_key = 'c'")
	exec("DELETE FROM wp_fieldmgr_groups WHERE group_key = 'a'")
	poll("fieldmgr:wp_fieldmgr_groups:a,c")

	tdb.SetOption(t, optName, `a:3:{s:1:"x";i:1;i:10;s:1:"y";s:1:"z";a:0:{}}`)
	poll("themeopts:themeopts_options:x,10,z")
	tdb.SetOption(t, optName, `a:3:{s:1:"x";i:1;i:10;s:1:"Y";s:1:"w";b:1;}`)
	poll("themeopts:themeopts_options:10,w,z")
	poll()
	tdb.SetOption(t, optName, `a:3:{s:1:"x";i:1;i:10;s:1:"Y";s:1:"w";b:1;}`) // same bytes
	poll()
	optName = "other_options" // a new configuration: a new baseline
	tdb.SetOption(t, optName, `a:1:{s:1:"q";i:1;}`)
	poll()
	tdb.DeleteOption(t, optName)
	poll("themeopts:other_options:q")
}

// runFeed follows the log with a feed of o, checked, until stop (or the
// test's end): stop returns once Run has, its pool closed.
func runFeed(t testing.TB, o changes.FeedOptions) (feed *changes.Feed, stop func()) {
	t.Helper()
	feed, err := changes.NewFeed(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := feed.Check(ctx); err != nil {
		cancel()
		feed.Close()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { feed.Run(ctx, func(context.Context) {}); close(done) }()
	stop = sync.OnceFunc(func() { cancel(); <-done; feed.Close() })
	t.Cleanup(stop)
	return feed, stop
}

package changes_test

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestDetectorsAgree: the binlog feed and the poller, shown the same
// change, produce the same Commit — its site, namespace, object and items
// with their before and after; only how it was seen (origin, author,
// time) differs.
func TestDetectorsAgree(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	db := tdb.Store(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	groups, _ := fieldgrouptable.Open(db, "wp_fieldmgr_groups")
	if _, err := groups.EnsureTable(ctx); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var fed []wpsidecar.Commit
	feed, err := changes.NewFeed(changes.FeedOptions{Conn: srv.Config(), ServerID: 4245, Schema: tdb.Name, Options: "wp_options", Tables: []changes.Table{fieldGroups("wp_fieldmgr_groups")},
		OptionRows: themeOpts(func(int64) string { return "opts" }), Heartbeat: 100 * time.Millisecond, Log: zerolog.Nop(),
		Subscriber: changes.OnCommit(func(c wpsidecar.Commit) { mu.Lock(); fed = append(fed, c); mu.Unlock() })})
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	if err := feed.Check(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { feed.Run(ctx, func(context.Context) {}); close(done) }()
	defer func() { cancel(); <-done }()

	var polled []wpsidecar.Commit
	d := changes.NewDetector(0, db, []changes.Table{fieldGroups("wp_fieldmgr_groups")}, themeOpts(func(int64) string { return "opts" }), changes.OnCommit(func(c wpsidecar.Commit) { polled = append(polled, c) }), zerolog.Nop())
	if err := d.Poll(ctx); err != nil { // the baseline
		t.Fatal(err)
	}

	g := func(title, status string) *string {
		s := `{"title":"` + title + `","status":"` + status + `","config":"{}"}`
		return &s
	}
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		name string
		sql  string
		want wpsidecar.Commit
	}{
		{"a group added", "INSERT INTO wp_fieldmgr_groups (group_key, title, config, status, created_at, updated_at) VALUES ('g1', 'T', '{}', 'active', NOW(), NOW())",
			wpsidecar.Commit{Namespace: wpsidecar.FieldGroups, Object: "wp_fieldmgr_groups", Items: []wpsidecar.Item{{Key: "g1", After: g("T", "active")}}}},
		{"a group renamed", "UPDATE wp_fieldmgr_groups SET title = 'U' WHERE group_key = 'g1'",
			wpsidecar.Commit{Namespace: wpsidecar.FieldGroups, Object: "wp_fieldmgr_groups", Items: []wpsidecar.Item{{Key: "g1", Before: g("T", "active"), After: g("U", "active")}}}},
		{"a group's dates alone", "UPDATE wp_fieldmgr_groups SET updated_at = '2030-01-01 00:00:00' WHERE group_key = 'g1'",
			wpsidecar.Commit{Namespace: wpsidecar.FieldGroups, Object: "wp_fieldmgr_groups", Items: []wpsidecar.Item{{Key: "g1", Before: g("U", "active"), After: g("U", "active")}}}},
		{"a group deleted", "DELETE FROM wp_fieldmgr_groups WHERE group_key = 'g1'",
			wpsidecar.Commit{Namespace: wpsidecar.FieldGroups, Object: "wp_fieldmgr_groups", Items: []wpsidecar.Item{{Key: "g1", Before: g("U", "active")}}}},
		{"the options row created", `INSERT INTO wp_options (option_name, option_value, autoload) VALUES ('opts', 'a:2:{s:1:"a";i:1;s:1:"b";i:2;}', 'yes')`,
			wpsidecar.Commit{Namespace: wpsidecar.ThemeOptions, Object: "opts", Items: []wpsidecar.Item{{Key: "a", After: str("i:1;")}, {Key: "b", After: str("i:2;")}}}},
		{"an option id changed, one added, one removed", `UPDATE wp_options SET option_value = 'a:2:{s:1:"a";i:5;s:1:"c";b:1;}' WHERE option_name = 'opts'`,
			wpsidecar.Commit{Namespace: wpsidecar.ThemeOptions, Object: "opts", Items: []wpsidecar.Item{
				{Key: "a", Before: str("i:1;"), After: str("i:5;")}, {Key: "c", After: str("b:1;")}, {Key: "b", Before: str("i:2;")}}}},
		{"the options row deleted", "DELETE FROM wp_options WHERE option_name = 'opts'",
			wpsidecar.Commit{Namespace: wpsidecar.ThemeOptions, Object: "opts", Items: []wpsidecar.Item{{Key: "a", Before: str("i:5;")}, {Key: "c", Before: str("b:1;")}}}},
	} {
		mu.Lock()
		fed = nil
		mu.Unlock()
		polled = nil
		if _, err := tdb.SQL.Exec(c.sql); err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		testwait.For(t, c.name+" fed", func() bool { mu.Lock(); defer mu.Unlock(); return len(fed) > 0 })
		if err := d.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := map[string][]wpsidecar.Commit{"feed": fed, "poll": polled}
		mu.Unlock()
		for by, commits := range got {
			if len(commits) != 1 {
				t.Errorf("%s: %s: %d commits, want one", c.name, by, len(commits))
				continue
			}
			x := commits[0]
			if x.Origin == "" != (by == "poll") || x.When.IsZero() || x.Author.Via != map[string]string{"feed": wpsidecar.ViaBinlog, "poll": wpsidecar.ViaPoll}[by] {
				t.Errorf("%s: %s: seen as origin %q author %+v when %v", c.name, by, x.Origin, x.Author, x.When)
			}
			x.Origin, x.Author, x.When = "", wpsidecar.Author{}, time.Time{}
			if !reflect.DeepEqual(x, c.want) {
				t.Errorf("%s: %s:\n%s\nwant\n%s", c.name, by, show(x), show(c.want))
			}
		}
	}
}

func show(c wpsidecar.Commit) string {
	s := string(c.Namespace) + " " + c.Object + ":"
	for _, it := range c.Items {
		s += " " + it.Key + " " + value(it.Before) + " → " + value(it.After) + ";"
	}
	return s
}

func value(p *string) string {
	if p == nil {
		return "-"
	}
	return *p
}

// TestForget_Content: a transaction that wrote posts, comments or terms
// alone (as the feed reports them for --cache-rest) leaves the memo's
// version, and the answers prepared at it, as they are; one that wrote
// anything the sidecar's own routes may read moves it.
func TestForget_Content(t *testing.T) {
	memo := store.NewMemo(func(context.Context) bool { return true }, 10)
	f := changes.Forget{Memo: memo, Prefix: "wp_"}
	for _, tc := range []struct {
		name  string
		t     wpsidecar.Touched
		moves bool
	}{
		{"posts and their meta", wpsidecar.Touched{Written: map[int64][]string{0: {"wp_posts", "wp_postmeta", "wp_term_relationships"}}}, false},
		{"a network site's comments", wpsidecar.Touched{Written: map[int64][]string{2: {"wp_comments"}}}, false},
		{"an option row", wpsidecar.Touched{Written: map[int64][]string{0: {"wp_posts", "wp_options"}}, Options: map[int64][]string{0: {"cron"}}}, true},
		{"a namespace's rows kept among posts", wpsidecar.Touched{Written: map[int64][]string{0: {"wp_posts"}}, Tables: map[string][]string{"wp_posts": {"7"}}}, true},
		{"a user", wpsidecar.Touched{Written: map[int64][]string{0: {"wp_usermeta"}}, UserIDs: []int64{1}}, true},
		{"a plugin's table", wpsidecar.Touched{Written: map[int64][]string{0: {"wp_posts", "wp_shop_orders"}}}, true},
		{"another prefix's posts", wpsidecar.Touched{Written: map[int64][]string{0: {"other_posts"}}}, true},
		{"DDL", wpsidecar.Touched{DDL: true}, true},
		{"nothing known written (no table reported)", wpsidecar.Touched{}, true},
	} {
		before, _ := memo.Version(context.Background())
		f.Touched(tc.t)
		after, _ := memo.Version(context.Background())
		if moved := after != before; moved != tc.moves {
			t.Errorf("%s: the memo's version moved %v, want %v", tc.name, moved, tc.moves)
		}
	}
}

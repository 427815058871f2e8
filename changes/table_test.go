package changes_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testlog"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/store"
)

// themeOpts are the theme options kept in the row name names for a site,
// as cmd describes them.
func themeOpts(name func(site int64) string) []changes.OptionRow {
	return []changes.OptionRow{{Namespace: wpsidecar.ThemeOptions, Name: name, Diff: themeoption.Diff}}
}

// fieldGroups is the field groups' table named name, as cmd describes it.
func fieldGroups(name string) changes.Table {
	return changes.Table{Namespace: wpsidecar.FieldGroups, Name: name,
		Key: fieldgroup.KeyColumn, ID: fieldgroup.IDColumn, Value: fieldgroup.RowValue,
		Rows: func(db *store.DB) (changes.TableRows, error) { return fieldgrouptable.Open(db, name) }}
}

// The toy third namespace, which no code outside this file names: menus,
// one a row of a table of their own.
const menusNS wpsidecar.Namespace = "menus"

const menusDDL = " (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, menu_key VARCHAR(191) NOT NULL UNIQUE, title TEXT NOT NULL, items LONGTEXT NOT NULL, updated_at DATETIME NOT NULL)"

// menuValue is what the history would keep of a menu.
func menuValue(title, items string) string { return title + "|" + items }

// menus is the menus' table named name; its poller reads through sqlDB.
func menus(name string, sqlDB *sql.DB) changes.Table {
	return changes.Table{Namespace: menusNS, Name: name, Key: "menu_key", ID: "id",
		Value: func(row map[string]string) string { return menuValue(row["title"], row["items"]) },
		Rows:  func(*store.DB) (changes.TableRows, error) { return menuRows{sqlDB, name}, nil }}
}

type menuRows struct {
	db    *sql.DB
	table string
}

func (m menuRows) Table() string { return m.table }

func (m menuRows) Versions(ctx context.Context) (map[string]string, error) {
	return m.query(ctx, "SELECT menu_key, SHA2(CONCAT_WS(CHAR(31), title, items, updated_at), 256) FROM "+m.table)
}

func (m menuRows) Values(ctx context.Context, keys []string) (map[string]string, error) {
	if len(keys) == 0 {
		return map[string]string{}, nil
	}
	return m.query(ctx, "SELECT menu_key, CONCAT(title, '|', items) FROM "+m.table+" WHERE menu_key IN ('"+strings.Join(keys, "','")+"')")
}

func (m menuRows) query(ctx context.Context, q string) (map[string]string, error) {
	rows, err := m.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// showCommit is a commit as a test compares it: site, namespace, object, and
// each item with its before and after.
func showCommit(c wpsidecar.Commit) string {
	val := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	var items []string
	for _, it := range c.Items {
		items = append(items, it.Key+" "+val(it.Before)+"→"+val(it.After))
	}
	return fmt.Sprintf("%d %s %s: %s", c.BlogID, c.Namespace, c.Object, strings.Join(items, "; "))
}

// TestTables_AThirdNamespace: a namespace kept in a table of its own,
// described to the detectors and named nowhere else, is followed as the
// field groups are: the feed reports one commit per namespace per site per
// transaction, in the order the tables are given, a site's table with its
// prefix, a renamed key as a removal and a creation, the keys written in
// Touched; the poller reports the same commits.
func TestTables_AThirdNamespace(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	for _, q := range []string{"CREATE TABLE wp_menus" + menusDDL, "CREATE TABLE wp_2_menus" + menusDDL,
		"CREATE TABLE wp_fieldmgr_groups (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, group_key VARCHAR(191) NOT NULL UNIQUE, title TEXT NOT NULL, config LONGTEXT NOT NULL, status VARCHAR(20) NOT NULL DEFAULT 'active', created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL)"} {
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tables := []changes.Table{fieldGroups("wp_fieldmgr_groups"), menus("wp_menus", tdb.SQL)}
	var mu sync.Mutex
	var fed, touched []string
	var logs testlog.Buffer
	runFeed(t, changes.FeedOptions{Conn: srv.Config(), ServerID: 4247, Schema: tdb.Name, Options: "wp_options", Tables: tables,
		BasePrefix: "wp_", Heartbeat: 100 * time.Millisecond, Log: zerolog.New(&logs), Primary: tdb.Store(t),
		Subscriber: subscriber{
			touched: func(tc wpsidecar.Touched) {
				mu.Lock()
				defer mu.Unlock()
				touched = append(touched, fmt.Sprint(tc.Tables))
			},
			commit: func(c wpsidecar.Commit) {
				mu.Lock()
				defer mu.Unlock()
				if c.Author.Via != wpsidecar.ViaBinlog || c.Origin == "" {
					t.Errorf("a fed commit: %+v", c)
				}
				fed = append(fed, showCommit(c))
			}}})
	ctx := context.Background()

	// The poller of site 1 (its tables, wp_menus among them), by its own
	// reads; site 2's table only the feed follows here.
	var polled []string
	d := changes.NewDetector(0, tdb.Store(t), tables, nil, changes.OnCommit(func(c wpsidecar.Commit) {
		if c.Author.Via != wpsidecar.ViaPoll {
			t.Errorf("a polled commit: %+v", c)
		}
		c.BlogID = 1 // as the feed names the base prefix's site
		polled = append(polled, showCommit(c))
	}), zerolog.Nop())
	if err := d.Poll(ctx); err != nil { // the baseline
		t.Fatal(err)
	}

	step := (&feedThenPoll{t: t, db: tdb.SQL, mu: &mu, fed: &fed, polled: &polled, d: d}).step
	g := `{"title":"G","status":"active","config":"{}"}`
	step([]string{"INSERT INTO wp_menus (menu_key, title, items, updated_at) VALUES ('main', 'Main', '[1]', NOW())"},
		"1 menus wp_menus: main -→"+menuValue("Main", "[1]"))
	// One transaction, two namespaces and two sites: one commit each,
	// site by site, the tables in their order.
	step([]string{"BEGIN",
		"INSERT INTO wp_2_menus (menu_key, title, items, updated_at) VALUES ('side', 'Side', '[]', NOW())",
		"UPDATE wp_menus SET items = '[1,2]' WHERE menu_key = 'main'",
		"INSERT INTO wp_fieldmgr_groups (group_key, title, config, created_at, updated_at) VALUES ('g1', 'G', '{}', NOW(), NOW())",
		"COMMIT"},
		"1 fieldmgr wp_fieldmgr_groups: g1 -→"+g,
		"1 menus wp_menus: main "+menuValue("Main", "[1]")+"→"+menuValue("Main", "[1,2]"),
		"2 menus wp_2_menus: side -→"+menuValue("Side", "[]"))
	// A key renamed: the old key's removal, the new one's creation.
	step([]string{"UPDATE wp_menus SET menu_key = 'top' WHERE menu_key = 'main'"},
		"1 menus wp_menus: main "+menuValue("Main", "[1,2]")+"→-; top -→"+menuValue("Main", "[1,2]"))
	step([]string{"DELETE FROM wp_menus"},
		"1 menus wp_menus: top "+menuValue("Main", "[1,2]")+"→-")

	mu.Lock()
	defer mu.Unlock()
	wantTouched := []string{"map[wp_menus:[main]]", "map[wp_2_menus:[side] wp_fieldmgr_groups:[g1] wp_menus:[main]]",
		"map[wp_menus:[main top]]", "map[wp_menus:[top]]"}
	if !slices.Equal(touched, wantTouched) {
		t.Errorf("touched %q, want %q", touched, wantTouched)
	}
	if strings.Contains(logs.String(), "cannot tell when the primary shows") {
		t.Errorf("the feed could not wait on a menu's row:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `"namespace":"menus"`) {
		t.Errorf("no log line names the menus:\n%s", logs.String())
	}
}

// feedThenPoll checks a test's steps against both detectors: each step
// runs its statements, waits for the feed to have reported the commits
// every step so far wants and compares them, then polls d and compares
// what it reports with site 1's commits of the step.
type feedThenPoll struct {
	t      *testing.T
	db     *sql.DB
	mu     *sync.Mutex
	fed    *[]string // the feed's commits so far, under mu
	polled *[]string // d's commits of its last poll
	d      *changes.Detector
	want   []string
}

func (s *feedThenPoll) step(q []string, commits ...string) {
	t := s.t
	t.Helper()
	for _, stmt := range q {
		if _, err := s.db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	s.want = append(s.want, commits...)
	testwait.For(t, q[len(q)-1], func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(*s.fed) >= len(s.want) })
	s.mu.Lock()
	got := slices.Clone(*s.fed)
	s.mu.Unlock()
	if !slices.Equal(got, s.want) {
		t.Fatalf("after %q: fed %q, want %q", q, got, s.want)
	}
	// The poller sees site 1's changes alike.
	var site1 []string
	for _, c := range commits {
		if strings.HasPrefix(c, "1 ") {
			site1 = append(site1, c)
		}
	}
	*s.polled = nil
	if err := s.d.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(*s.polled, site1) {
		t.Errorf("after %q: polled %q, want %q", q, *s.polled, site1)
	}
}

package changes_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
)

// The toy namespace kept in an option row, which no code outside this
// file names: notes, one a line "key=value" of the row's value.
const notesNS wpsidecar.Namespace = "notes"

// notesDiff is its rules' diff of two of the row's values.
func notesDiff(before, after string) []wpsidecar.Item {
	lines := func(s string) map[string]string {
		out := map[string]string{}
		for l := range strings.Lines(s) {
			if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
				out[k] = v
			}
		}
		return out
	}
	b, a := lines(before), lines(after)
	var out []wpsidecar.Item
	var keys []string
	for _, m := range []map[string]string{b, a} {
		for k := range m {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		ov, had := b[k]
		nv, has := a[k]
		switch {
		case had && has && ov != nv:
			out = append(out, wpsidecar.Item{Key: k, Before: &ov, After: &nv})
		case had && !has:
			out = append(out, wpsidecar.Item{Key: k, Before: &ov})
		case !had && has:
			out = append(out, wpsidecar.Item{Key: k, After: &nv})
		}
	}
	return out
}

// TestOptionRows_AThirdNamespace: a namespace kept in an option row,
// described to the detectors and named nowhere else, is followed as the
// theme options are: the feed reports one commit per option row per site
// per transaction, each by its namespace, its row named per site, its
// items as its diff finds them; the poller reports the same commits.
func TestOptionRows_AThirdNamespace(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	if _, err := tdb.SQL.Exec("CREATE TABLE wp_2_options LIKE wp_options"); err != nil {
		t.Fatal(err)
	}
	rows := append(themeOpts(func(int64) string { return "themeopts_options" }), changes.OptionRow{Namespace: notesNS,
		Name: func(site int64) string {
			if site == 2 {
				return "site2_notes"
			}
			return "my_notes"
		},
		Diff: notesDiff})
	var mu sync.Mutex
	var fed []string
	runFeed(t, changes.FeedOptions{Conn: srv.Config(), ServerID: 4248, Schema: tdb.Name, Options: "wp_options", OptionRows: rows,
		BasePrefix: "wp_", Heartbeat: 100 * time.Millisecond, Log: zerolog.Nop(), Primary: tdb.Store(t),
		Subscriber: changes.OnCommit(func(c wpsidecar.Commit) { mu.Lock(); fed = append(fed, showCommit(c)); mu.Unlock() })})
	ctx := context.Background()
	var polled []string
	d := changes.NewDetector(1, tdb.Store(t), nil, rows, changes.OnCommit(func(c wpsidecar.Commit) {
		polled = append(polled, showCommit(c))
	}), zerolog.Nop())
	if err := d.Poll(ctx); err != nil { // the baseline
		t.Fatal(err)
	}
	step := (&feedThenPoll{t: t, db: tdb.SQL, mu: &mu, fed: &fed, polled: &polled, d: d}).step
	step([]string{"INSERT INTO wp_options (option_name, option_value, autoload) VALUES ('my_notes', 'a=1\nb=2', 'no')"},
		"1 notes my_notes: a -→1; b -→2")
	// One transaction, both option rows of site 1 and site 2's notes.
	step([]string{"BEGIN",
		"INSERT INTO wp_2_options (option_name, option_value, autoload) VALUES ('site2_notes', 'x=9', 'no')",
		"UPDATE wp_options SET option_value = 'a=1\nb=3\nc=4' WHERE option_name = 'my_notes'",
		`INSERT INTO wp_options (option_name, option_value, autoload) VALUES ('themeopts_options', 'a:1:{s:4:"logo";s:1:"x";}', 'yes')`,
		"INSERT INTO wp_2_options (option_name, option_value, autoload) VALUES ('my_notes', 'not=site 2''s', 'no')",
		"COMMIT"},
		`1 themeopts themeopts_options: logo -→s:1:"x";`,
		"1 notes my_notes: b 2→3; c -→4",
		"2 notes site2_notes: x -→9")
	step([]string{"DELETE FROM wp_options WHERE option_name = 'my_notes'"},
		"1 notes my_notes: a 1→-; b 3→-; c 4→-")
}

package changes

import (
	"maps"
	"slices"
	"strings"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/store"
)

// What a commit does. The two detectors — the binlog feed (Feed), and the
// poller (Detector: one site; a network polls one per site) — each tell
// one Subscriber, in commit order and on their own goroutine, what every
// committed transaction did:
//
//   - Touched: the rows it wrote of the tables followed (the feed only):
//     what copies of them kept in memory must forget (Forget: the memo of
//     serve-from-feed; Refresher: a site's settings snapshot, the
//     network's site map);
//   - Commit, one for each namespace of each site it changed: the history
//     records it (Recorder, others' changes only), and the leading
//     instance (Sender) hands it to the webhooks (Notifier) and the CDN
//     purges (Purges).
//
// cmd wires the subscribers together (Subscribers). A subscriber is
// called on the detector's goroutine and must be quick: work that waits
// on the database or the network goes to a goroutine of its own.
type Subscriber interface {
	Touched(wpsidecar.Touched)
	Commit(wpsidecar.Commit)
}

// touchRowValue notes in t v, a value of column (table.column) in a row site wrote.
func touchRowValue(t *wpsidecar.Touched, site int64, column, v string) {
	if t.RowValues == nil {
		t.RowValues = map[int64]map[string][]string{}
	}
	if t.RowValues[site] == nil {
		t.RowValues[site] = map[string][]string{}
	}
	if !slices.Contains(t.RowValues[site][column], v) {
		t.RowValues[site][column] = append(t.RowValues[site][column], v)
	}
}

// touchWrote notes in t a write to site's table name.
func touchWrote(t *wpsidecar.Touched, site int64, name string) {
	if t.Written == nil {
		t.Written = map[int64][]string{}
	}
	if !slices.Contains(t.Written[site], name) {
		t.Written[site] = append(t.Written[site], name)
	}
}

// touchedNothing tells whether t names no write.
func touchedNothing(t wpsidecar.Touched) bool {
	return !t.DDL && !t.Network && !t.Missed && len(t.UserIDs)+len(t.Options)+len(t.Tables)+len(t.Written)+len(t.RowValues) == 0
}

// Subscribers tell each of theirs, in order.
type Subscribers []Subscriber

func (s Subscribers) Touched(t wpsidecar.Touched) {
	for _, x := range s {
		x.Touched(t)
	}
}

func (s Subscribers) Commit(c wpsidecar.Commit) {
	for _, x := range s {
		x.Commit(c)
	}
}

// OnCommit is a subscriber of commits only.
type OnCommit func(wpsidecar.Commit)

func (OnCommit) Touched(wpsidecar.Touched)   {}
func (f OnCommit) Commit(c wpsidecar.Commit) { f(c) }

// Forget has serve-from-feed's memo forget what each transaction wrote.
// It runs on the feed's goroutine, before the feed says it heard the
// transaction: a reader that finds the feed current finds what it forgot
// forgotten.
type Forget struct {
	Memo *store.Memo
	// Prefix is the site's table prefix (Written's names start with it).
	Prefix string
}

// contentTables are the tables, after the prefix, of what a site
// publishes: posts, comments, terms and their meta. No answer of the
// sidecar's own routes is read from them but a namespace's own rows
// (Touched.Tables), so a transaction that wrote nothing else (as the
// feed reports every table for --cache-rest) leaves the memo and the
// answers prepared from it as they are.
var contentTables = []string{"posts", "postmeta", "comments", "commentmeta", "terms", "termmeta", "term_taxonomy", "term_relationships", "links"}

func (f Forget) Touched(t wpsidecar.Touched) {
	if f.contentOnly(t) {
		return
	}
	var names []string
	for _, site := range t.Options {
		for _, n := range site {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	f.Memo.Forget(store.Changed{All: t.DDL || t.Missed, Users: len(t.UserIDs) > 0, Options: names, Tables: slices.Sorted(maps.Keys(t.Tables))})
}

func (Forget) Commit(wpsidecar.Commit) {}

// contentOnly tells whether t wrote rows of contentTables alone, none of
// them a namespace's.
func (f Forget) contentOnly(t wpsidecar.Touched) bool {
	if t.DDL || t.Missed || t.Network || len(t.UserIDs) > 0 || len(t.Options) > 0 || len(t.Tables) > 0 || len(t.Written) == 0 {
		return false
	}
	for _, tables := range t.Written {
		for _, name := range tables {
			if g, ok := strings.CutPrefix(name, f.Prefix); !ok || !slices.Contains(contentTables, g) {
				return false
			}
		}
	}
	return true
}

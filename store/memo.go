package store

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wpsidecar/wpsidecar/domain/wplogin"
)

// Memo keeps what the sidecar's GETs read — users found for authentication
// with their meta, the theme options row, the rows of a namespace's own
// table (the field groups') — for as long as
// a change feed vouches that none of it changed, so that a GET costs no
// database round trip. It is only as good as what it is told: every
// committed write to those tables must reach Forget (the binlog change
// feed's, and the sidecar's own writes, which forget by themselves), and
// Serving must say false whenever the feed cannot vouch for the present as
// of the request it is asked for.
//
// A read that found nothing is not kept for users and tables' rows (the
// key is the client's choice; a later insert is always seen); the number
// of entries of each kind is bounded.
type Memo struct {
	serving func(context.Context) bool
	limit   int

	mu    sync.Mutex
	gen   atomic.Uint64 // moved by every Forget, under mu: a read that began before it is not kept
	kinds [kindCount]map[string]any

	hits, misses, bypassed atomic.Int64
}

type memoKind int

const (
	kindUser memoKind = iota
	kindOption
	// kindTable: reads of a namespace's own table, keyed as what was read,
	// NUL, the table (with the site's prefix), then anything (NUL first):
	// a write of the table forgets them.
	kindTable
	kindCount
)

// memoKey names a read: its kind (what invalidates it) and what it asked.
type memoKey struct {
	kind memoKind
	key  string
}

// NewMemo is an empty memo that answers a request only while serving(its
// context) is true, keeping at most limit entries of each kind (users,
// options, tables' rows).
func NewMemo(serving func(context.Context) bool, limit int) *Memo {
	m := &Memo{serving: serving, limit: max(limit, 1)}
	for k := range m.kinds {
		m.kinds[k] = map[string]any{}
	}
	return m
}

// Changed is what a committed transaction wrote, as far as the memo cares.
type Changed struct {
	All     bool     // something the memo cannot judge (a DDL statement)
	Users   bool     // a users or usermeta row, any user
	Options []string // option names
	// Tables are namespaces' own tables written (with the site's
	// prefix), named as the log names them: without case, as a server
	// with lower_case_table_names may have it.
	Tables []string
}

// Forget drops every entry c may have made stale. A nil memo forgets
// nothing.
func (m *Memo) Forget(c Changed) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen.Add(1)
	// A user's entry is found by what the client typed (a login, an
	// e-mail), and a new or renamed user can change which user that finds:
	// any user change drops them all. They are re-read at one round trip
	// each.
	if c.All || c.Users {
		clear(m.kinds[kindUser])
	}
	if c.All {
		clear(m.kinds[kindTable])
	}
	for _, table := range c.Tables {
		for k := range m.kinds[kindTable] {
			if strings.EqualFold(tableOf(k), table) {
				delete(m.kinds[kindTable], k)
			}
		}
	}
	if c.All {
		clear(m.kinds[kindOption])
	}
	// Option entries are table + NUL + name: a name forgets its row in
	// every site's table (the feed names the option, not the table).
	for _, name := range c.Options {
		suffix := "\x00" + optionKey(name)
		for k := range m.kinds[kindOption] {
			if strings.HasSuffix(k, suffix) {
				delete(m.kinds[kindOption], k)
			}
		}
	}
}

// Version is a number every Forget moves, and every read made while the
// memo did not serve (which may have gone to a replica behind the feed),
// and whether the memo serves now: what was built from the memo's reads
// and the database while it served (rest's prepared answers) holds while
// both stay the same. A nil memo never serves.
func (m *Memo) Version(ctx context.Context) (version uint64, serving bool) {
	if m == nil {
		return 0, false
	}
	// Serving is asked first (with exact reads it waits until the feed
	// has applied what the server had committed when the request came,
	// forgetting what that changed), the version read after. Without
	// exact reads serving is asked again: a change that comes in between
	// is either seen in the version or makes serving false. With them
	// the second answer is the request's first, remembered; a change
	// after the version was read shows when the answer is stored
	// (rest's Prepared compares the version again).
	if !m.serving(ctx) {
		return 0, false
	}
	version = m.gen.Load() + uint64(m.bypassed.Load())
	return version, m.serving(ctx)
}

// MemoStats counts reads: answered from the memo, read from the database
// and kept, or read from the database because the feed could not vouch.
type MemoStats struct{ Hits, Misses, Bypassed int64 }

// Stats are the counts so far.
func (m *Memo) Stats() MemoStats {
	return MemoStats{Hits: m.hits.Load(), Misses: m.misses.Load(), Bypassed: m.bypassed.Load()}
}

// lookup is the kept answer to k (ok), or, when there is none, the
// generation a read starting now must give put, and whether the memo
// serves at all (when not, nothing is kept either).
func (m *Memo) lookup(ctx context.Context, k memoKey) (v any, ok bool, gen uint64, serving bool) {
	if m == nil {
		return nil, false, 0, false
	}
	if !m.serving(ctx) {
		m.bypassed.Add(1)
		return nil, false, 0, false
	}
	m.mu.Lock()
	v, ok = m.kinds[k.kind][k.key]
	gen = m.gen.Load()
	m.mu.Unlock()
	if ok {
		m.hits.Add(1)
	} else {
		m.misses.Add(1)
	}
	return v, ok, gen, true
}

// put keeps v, read from the database after lookup gave gen, unless a
// Forget came in between: the read may predate the change forgotten.
func (m *Memo) put(k memoKey, gen uint64, v any) {
	if m == nil {
		return
	}
	if r, ok := v.(interface{ Missing() bool }); ok && r.Missing() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen != m.gen.Load() {
		return
	}
	entries := m.kinds[k.kind]
	if _, ok := entries[k.key]; !ok && len(entries) >= m.limit {
		for old := range entries { // any one: the map's order is random
			delete(entries, old)
			break
		}
	}
	entries[k.key] = v
}

// tableOf is the table a kindTable entry's key names.
func tableOf(key string) string {
	_, rest, _ := strings.Cut(key, "\x00")
	table, _, _ := strings.Cut(rest, "\x00")
	return table
}

// optionKey is how the options table's collation compares names: without
// case, accents or trailing spaces.
func optionKey(name string) string {
	return strings.ToLower(wplogin.RemoveAccents(strings.TrimRight(name, " ")))
}

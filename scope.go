package wpsidecar

import (
	"context"
	"sync"
	"time"
)

// Scope is what a request learns as it goes, declared in one place: who
// it is (the user the authentication layer found, and the read that rode
// along with its lookup), whether its answer may be kept (for package
// rest's prepared answers), and where it reads and writes on a
// replicated database (the commit the client asked to read after, the
// commit its writes made). It is the only value the sidecar carries in a
// request's context; everything else is passed as a value.
//
// A scope is a chain of levels. WithScope makes a new level within the
// one the context carries, and what a level is told is seen by the
// contexts made from it, not by those made before it — as with context
// values, but typed: a context taken before read-your-writes prepared the
// request (a site's services built on its first request, a goroutine
// started on the way in) never reads after the client's commit nor notes
// a write into the request's receipt. Each part is set on the level its
// owner made, and read from the nearest level below that set it:
//
//   - who: Identify, by package auth after it authenticated the request
//     (auth.UserFrom, auth.RideFrom read it);
//   - what may be kept: Keep, by package rest for an answer it may keep;
//     Allow, Refuse and Until from anyone building the answer report to
//     the nearest level that keeps, and are ignored where none does;
//   - read-your-writes: ReadAfter and NoteWrites, by package rest for the
//     requests to the sidecar's own routes (readYourWrites); package
//     store reads after that commit and notes its writes' commit (Noted)
//     only below such a level;
//   - whether the change feed had applied, when the request came, what
//     the server had committed: Settled, asked by whatever answers from
//     memory (the memo, the REST cache), once a request, on its first
//     level (the proxy makes one for every request).
//
// Code run without a scope (tests, the subcommands) sees a nil *Scope:
// every method is safe on it and means "nothing learned, nothing kept".
type Scope struct {
	up *Scope // the level this one was made within; nil: the first

	mu sync.Mutex

	// who
	identified bool     // Identify was called on this level
	who        Identity // nil: anonymous
	ride       any      // the route's ride-along read (auth.Ride); nil: none

	// what may be kept
	keeping          bool // this level's answer may be kept: Keep
	allowed, refused bool
	until            time.Time

	// read-your-writes
	readAfter GTIDSet // the commit to read after; nil: none
	noting    bool    // writes note their commit here: NoteWrites
	receipt   string  // the last commit noted
	// settled: the first level's answer to Settled, asked once
	settle  sync.Once
	settled bool
}

// Identity is a user the authentication layer found (auth.User): the root
// names only what the history needs of it.
type Identity interface {
	// Identity is the user's id and login.
	Identity() (id int64, login string)
}

// GTIDSet is a position of the primary, parsed by package store from what
// the client sent; String spells it as the server does.
type GTIDSet interface {
	String() string
}

type scopeKey struct{}

// WithScope makes a new level of ctx's scope (the first one when ctx has
// none) and returns the context that carries it. What the caller tells
// the level is seen by the returned context and those made from it.
func WithScope(ctx context.Context) (context.Context, *Scope) {
	s := &Scope{up: ScopeOf(ctx)}
	return context.WithValue(ctx, scopeKey{}, s), s
}

// ScopeOf is the innermost level of ctx's scope; nil when ctx has none.
func ScopeOf(ctx context.Context) *Scope {
	s, _ := ctx.Value(scopeKey{}).(*Scope)
	return s
}

// find is the nearest level, from s up, for which has holds; nil when none
// does. has is called with the level's lock held.
func (s *Scope) find(has func(*Scope) bool) *Scope {
	for l := s; l != nil; l = l.up {
		l.mu.Lock()
		ok := has(l)
		l.mu.Unlock()
		if ok {
			return l
		}
	}
	return nil
}

// get is what read gives of the nearest level for which has holds, read
// with the level's lock held; the zero T when no level does.
func get[T any](s *Scope, has func(*Scope) bool, read func(*Scope) T) T {
	var v T
	if l := s.find(has); l != nil {
		l.mu.Lock()
		v = read(l)
		l.mu.Unlock()
	}
	return v
}

// Identify records who the request is (nil: anonymous) and the read its
// route had ride along with the lookup (nil: none), for what runs within
// this level.
func (s *Scope) Identify(who Identity, ride any) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.identified, s.who, s.ride = true, who, ride
	s.mu.Unlock()
}

func identified(l *Scope) bool { return l.identified }

// Who is the user the request was identified as; nil when anonymous or
// not identified.
func (s *Scope) Who() Identity {
	return get(s, identified, func(l *Scope) Identity { return l.who })
}

// Ride is the read that rode along with the request's identification;
// nil without one.
func (s *Scope) Ride() any {
	return get(s, identified, func(l *Scope) any { return l.ride })
}

// Keep says that the answer built within this level may be kept and
// given again (package rest's prepared answers): Allow, Refuse and Until
// called within it report here. Without a level that keeps, they are
// ignored.
func (s *Scope) Keep() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.keeping, s.allowed, s.refused, s.until = true, false, false, time.Time{}
	s.mu.Unlock()
}

// keeper is the nearest level that keeps its answer, or nil.
func (s *Scope) keeper() *Scope { return s.find(keeping) }

// Allow says that the answer depends on nothing but the request and what
// the change feed vouches for: the rows read through the store's memo,
// the site settings, the configuration files.
func (s *Scope) Allow() {
	if k := s.keeper(); k != nil {
		k.mu.Lock()
		k.allowed = true
		k.mu.Unlock()
	}
}

// Refuse says that the answer must not be kept, whatever allowed it (a
// failure rendered).
func (s *Scope) Refuse() {
	if k := s.keeper(); k != nil {
		k.mu.Lock()
		k.refused = true
		k.mu.Unlock()
	}
}

// Until says that the answer holds only until t: what authenticated the
// request holds until then (a cookie's expiry, a nonce's tick). The
// earliest such time wins.
func (s *Scope) Until(t time.Time) {
	if k := s.keeper(); k != nil {
		k.mu.Lock()
		if k.until.IsZero() || t.Before(k.until) {
			k.until = t
		}
		k.mu.Unlock()
	}
}

func keeping(l *Scope) bool { return l.keeping }

// Allowed tells whether the answer may be kept as far as is known now.
func (s *Scope) Allowed() bool {
	return get(s, keeping, func(k *Scope) bool { return k.allowed && !k.refused })
}

// Holds tells whether the answer may be kept at now, and until when
// (zero: no time of its own).
func (s *Scope) Holds(now time.Time) (bool, time.Time) {
	type kept struct {
		allowed bool
		until   time.Time
	}
	k := get(s, keeping, func(k *Scope) kept { return kept{k.allowed && !k.refused, k.until} })
	return k.allowed && (k.until.IsZero() || now.Before(k.until)), k.until
}

// ReadAfter has the reads made within this level see the commit set (the
// client brought it back from a write's answer).
func (s *Scope) ReadAfter(set GTIDSet) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.readAfter = set
	s.mu.Unlock()
}

// ReadsAfter is the commit the reads within this level must see; nil:
// none.
func (s *Scope) ReadsAfter() GTIDSet {
	return get(s, func(l *Scope) bool { return l.readAfter != nil }, func(l *Scope) GTIDSet { return l.readAfter })
}

// NoteWrites has the writes made within this level note their commit
// (Noted); Receipt tells it once they are done.
func (s *Scope) NoteWrites() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.noting = true
	s.mu.Unlock()
}

func noting(l *Scope) bool { return l.noting }

// noter is the nearest level whose writes are noted, or nil.
func (s *Scope) noter() *Scope { return s.find(noting) }

// NotesWrites tells whether a write made within this level is to note its
// commit: a writer asks before it looks the commit up.
func (s *Scope) NotesWrites() bool { return s.noter() != nil }

// Noted records the commit a write made within this level, where writes
// are noted (the last one wins); elsewhere it is ignored.
func (s *Scope) Noted(gtid string) {
	if n := s.noter(); n != nil {
		n.mu.Lock()
		n.receipt = gtid
		n.mu.Unlock()
	}
}

// Receipt is the commit of the last write noted within this level's
// noting level ("" when none, or the primary writes no binary log).
func (s *Scope) Receipt() string {
	return get(s, noting, func(n *Scope) string { return n.receipt })
}

// Settled is settle's answer — whether the change feed has applied what
// the server had committed when the request came — asked once a request,
// at its first level: every read from memory within the request shares
// one wait for the feed. Without a scope it is asked each time.
func (s *Scope) Settled(settle func() bool) bool {
	if s == nil {
		return settle()
	}
	root := s
	for root.up != nil {
		root = root.up
	}
	root.settle.Do(func() { root.settled = settle() })
	return root.settled
}

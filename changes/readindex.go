package changes

import (
	"context"
	"sync"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/wpsidecar/wpsidecar"
)

// Where the feed stands against the server's log, and the read index:
// what lets a read wait until the feed has applied every transaction the
// server had committed when the read came, whatever the traffic in the
// log (a busy server sends no heartbeat: it is never idle).
//
// Sync looks at where the server's log ends (one statement on the feed's
// own connection, made by the feed's goroutine looks) and waits until the
// feed has reported everything before that point. Looks are shared:
// every Sync that comes while a look is under way joins the next one,
// which starts when that one ends, so a burst of reads costs one look,
// and no read is answered from a look that started before it came (a
// write committed just before the read might be missing from it). This
// is etcd's read index, with the server's log as the leader's.

// progress is the point of the server's log up to which the feed has
// reported every transaction, and a channel closed when it moves.
type progress struct {
	mu    sync.Mutex
	at    gomysql.Position // the zero Position: nothing yet
	moved chan struct{}
}

// advance moves the point to to, when it is further.
func (p *progress) advance(to gomysql.Position) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if to.Name == "" || p.at.Name != "" && to.Compare(p.at) <= 0 {
		return
	}
	p.at = to
	if p.moved != nil {
		close(p.moved)
	}
	p.moved = make(chan struct{})
}

// reset forgets the point: a new stream (another server, perhaps) says
// where it stands with its own events.
func (p *progress) reset() {
	p.mu.Lock()
	p.at = gomysql.Position{}
	p.mu.Unlock()
}

// none tells whether nothing is applied yet (since the stream began).
func (p *progress) none() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.at.Name == ""
}

// reached tells whether the point is at or past pos, and else gives a
// channel closed when it moves.
func (p *progress) reached(pos gomysql.Position) (bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.at.Name != "" && p.at.Compare(pos) >= 0 {
		return true, nil
	}
	if p.moved == nil {
		p.moved = make(chan struct{})
	}
	return false, p.moved
}

// look is one look at where the server's log ends, shared by every Sync
// that joined it before it started.
type look struct {
	done chan struct{}
	at   time.Time // when it started
	pos  gomysql.Position
	err  error
}

// readIndex hands out looks: one gathering the Syncs that come while the
// one under way is made (by the feed's own goroutine, looks).
type readIndex struct {
	mu   sync.Mutex
	next *look         // the look new Syncs join; nil: none gathering
	kick chan struct{} // a value when next waits to be made
}

// lookTimeout bounds a look: the Syncs waiting on one that does not
// answer are refused, and the next look starts.
const lookTimeout = time.Second

// join is the look a Sync coming now waits on: one that has not started.
func (x *readIndex) join() *look {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.next == nil {
		x.next = &look{done: make(chan struct{})}
		select {
		case x.kick <- struct{}{}:
		default:
		}
	}
	return x.next
}

// take is the look to make now, and no longer one to join; nil: none.
func (x *readIndex) take() *look {
	x.mu.Lock()
	defer x.mu.Unlock()
	l := x.next
	x.next = nil
	return l
}

// Sync waits until the feed has reported every transaction the server
// had logged when Sync was called, for at most bound (and while ctx
// lasts): true once it has. False when the feed does not follow the log,
// the server does not answer, or the feed is further behind than bound.
// A Sync that succeeds also makes the feed Current as of the look's
// start.
func (f *Feed) Sync(ctx context.Context, bound time.Duration) bool {
	if f.Mode() != ModeBinlog || f.applied.none() {
		return false // not following, or reconnecting: nothing applied yet
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	l := f.index.join()
	select {
	case <-l.done:
	case <-ctx.Done():
		return false
	}
	if l.err != nil {
		return false
	}
	for {
		ok, moved := f.applied.reached(l.pos)
		if ok {
			f.vouch(l.at.UnixNano())
			return f.Mode() == ModeBinlog
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return false
		}
	}
}

// Vouches tells whether the feed vouches for the database as of the
// request of ctx. Exact: it has applied what the server had committed
// when the request came (Sync, for at most bound, asked once a request:
// every read from memory within it shares the answer,
// wpsidecar.Scope.Settled). Else: it did as of at most bound ago
// (Current).
func (f *Feed) Vouches(ctx context.Context, exact bool, bound time.Duration) bool {
	if !exact {
		return f.Current(bound)
	}
	return f.Mode() == ModeBinlog && wpsidecar.ScopeOf(ctx).Settled(func() bool { return f.Sync(ctx, bound) })
}

// looks makes the looks Syncs join, one at a time, until ctx ends (a
// goroutine of Run's): a Sync's wait for one is bounded by its own
// context, whatever the server does.
func (f *Feed) looks(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			if l := f.index.take(); l != nil {
				l.err = ctx.Err()
				close(l.done)
			}
			return
		case <-f.index.kick:
		}
		l := f.index.take()
		if l == nil {
			continue
		}
		l.at = time.Now()
		lctx, cancel := context.WithTimeout(ctx, lookTimeout)
		l.pos, l.err = f.server.LogEnd(lctx, f.flavor)
		cancel()
		close(l.done)
	}
}

// vouch notes that the feed had applied the server's log as of at (unix
// nanoseconds): it is Current for max-staleness from then.
func (f *Feed) vouch(at int64) {
	for {
		old := f.caughtUp.Load()
		if old >= at || f.caughtUp.CompareAndSwap(old, at) {
			return
		}
	}
}

// probe makes the feed vouch for the present every period while it
// follows the log, whether or not reads ask (a busy server sends no
// heartbeat): one look at the log's end, unless a read's made one since.
func (f *Feed) probe(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if f.Mode() == ModeBinlog && time.Since(time.Unix(0, f.caughtUp.Load())) >= period {
			f.Sync(ctx, 2*period)
		}
	}
}

package changes

import (
	"sync"
	"time"

	"github.com/wpsidecar/wpsidecar"
)

// Sender lets only the leading instance send what changed: every instance
// notices changes (its own memory needs them), and one noticed while
// another instance leads is kept for a while, then dropped — unless this
// instance comes to lead meanwhile and the old leader was not seen alive
// for lag after the change was noticed (it notices changes up to lag
// later than this instance, and may have died before sending them), so
// it is sent then. A receiver may get a change twice around a fail-over,
// never in steady state. It subscribes to commits, and sends to its own
// subscriber: the webhooks and the purges. What a transaction touched
// (the purges of PHP's answers kept by --cache-rest) is kept likewise: a
// new leader passes on what its predecessor may not have, or, when a
// follower noticed more than it keeps, has everything forgotten
// (Touched.Missed: CDNs purge every kept answer). So does an instance
// that comes to lead first without having seen another lead: it cannot
// know what was written while no instance ran (a restart of a site's one
// instance, every instance down for a while).
type Sender struct {
	send      Subscriber
	keep, lag time.Duration
	now       func() time.Time

	mu         sync.Mutex
	leading    bool
	led        bool      // has led before
	recent     []noticed // oldest first
	touched    []noticed // likewise; overflowed: some were let go
	overflowed bool
}

// noticed is a commit, or what a transaction touched, noticed at at.
type noticed struct {
	at time.Time
	c  wpsidecar.Commit
	t  wpsidecar.Touched
}

// maxKept bounds what a follower keeps, whatever keep says.
const maxKept = 1024

// NewSender sends to send while leading, keeping what it notices as
// a follower for keep; lag is how much later than this instance the
// leader may notice a change.
func NewSender(send Subscriber, keep, lag time.Duration) *Sender {
	return &Sender{send: send, keep: keep, lag: lag, now: time.Now}
}

// Touched passes t on, or keeps it while another instance leads.
func (s *Sender) Touched(t wpsidecar.Touched) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leading {
		s.send.Touched(t)
		return
	}
	s.prune()
	if len(s.touched) == maxKept {
		s.touched, s.overflowed = s.touched[1:], true
	}
	s.touched = append(s.touched, noticed{at: s.now(), t: t})
}

// Commit sends c, or keeps it while another instance leads. send must not
// block: it is called with the order of changes held.
func (s *Sender) Commit(c wpsidecar.Commit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leading {
		s.send.Commit(c)
		return
	}
	s.prune()
	if len(s.recent) == maxKept {
		s.recent = s.recent[1:]
	}
	s.recent = append(s.recent, noticed{at: s.now(), c: c})
}

// Lead says whether this instance leads now; on becoming leader it sends
// what it kept that the old leader, last seen holding the lock at held
// (zero: none seen), may not have sent.
func (s *Sender) Lead(leading bool, held time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leading = leading
	if !leading {
		return
	}
	unknown := !s.led && held.IsZero() // nobody seen leading since this instance started
	s.led = true
	s.prune()
	for _, n := range s.recent {
		if n.at.Add(s.lag).After(held) {
			s.send.Commit(n.c)
		}
	}
	if s.overflowed || unknown {
		s.send.Touched(wpsidecar.Touched{Missed: true})
	} else {
		for _, n := range s.touched {
			if n.at.Add(s.lag).After(held) {
				s.send.Touched(n.t)
			}
		}
	}
	s.recent, s.touched, s.overflowed = nil, nil, false
}

func (s *Sender) prune() {
	cut := s.now().Add(-s.keep)
	for _, l := range []*[]noticed{&s.recent, &s.touched} {
		i := 0
		for i < len(*l) && (*l)[i].at.Before(cut) {
			i++
		}
		*l = (*l)[i:]
	}
}

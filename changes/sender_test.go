package changes

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar"
)

// TestSender: a leader sends at once; a follower keeps what it notices
// for keep and, when it comes to lead, sends what is still fresh and was
// noticed less than lag before the old leader was last seen; what it keeps
// is bounded.
func TestSender(t *testing.T) {
	var sent []string
	s := NewSender(OnCommit(func(c wpsidecar.Commit) { sent = append(sent, c.Items[0].Key) }), 10*time.Second, time.Second)
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	change := func(k string) wpsidecar.Commit {
		return wpsidecar.Commit{Namespace: wpsidecar.FieldGroups, Items: []wpsidecar.Item{{Key: k}}}
	}

	s.Commit(change("old"))
	now = now.Add(11 * time.Second)
	s.Commit(change("sent by the old leader"))
	now = now.Add(2 * time.Second)
	held := now // the old leader last seen
	now = now.Add(-500 * time.Millisecond)
	s.Commit(change("fresh"))
	now = now.Add(time.Second)
	if len(sent) != 0 {
		t.Fatalf("a follower sent %q", sent)
	}
	s.Lead(true, held)
	s.Commit(change("led"))
	if want := []string{"fresh", "led"}; !slices.Equal(sent, want) {
		t.Errorf("sent %q, want %q", sent, want)
	}
	s.Lead(false, time.Time{})
	for i := 0; i < maxKept+10; i++ {
		s.Commit(change("x"))
	}
	if len(s.recent) != maxKept {
		t.Errorf("%d kept, bound %d", len(s.recent), maxKept)
	}
}

// touchedTo passes what transactions touched on.
type touchedTo func(wpsidecar.Touched)

func (f touchedTo) Touched(t wpsidecar.Touched) { f(t) }
func (touchedTo) Commit(wpsidecar.Commit)       {}

// TestSender_Touched: what a transaction touched is passed on while
// leading; a follower keeps it, and on coming to lead passes on what the
// old leader, last seen at held, may not have (issue 55, item 5); one that
// noticed more than it keeps has everything forgotten.
func TestSender_Touched(t *testing.T) {
	var got []string
	s := NewSender(touchedTo(func(t wpsidecar.Touched) { got = append(got, fmt.Sprint(t.Options[0], t.Missed)) }), time.Minute, time.Second)
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	touched := func(name string) wpsidecar.Touched { return wpsidecar.Touched{Options: map[int64][]string{0: {name}}} }
	s.Touched(touched("sent by the old leader"))
	now = now.Add(5 * time.Second)
	held := now
	s.Touched(touched("maybe not sent"))
	if len(got) != 0 {
		t.Fatalf("a follower passed on %q", got)
	}
	s.Lead(true, held)
	s.Touched(touched("led"))
	if want := []string{"[maybe not sent] false", "[led] false"}; !slices.Equal(got, want) {
		t.Errorf("passed on %q, want %q", got, want)
	}
	got = nil
	s.Lead(false, time.Time{})
	for range maxKept + 1 {
		s.Touched(touched("x"))
	}
	s.Lead(true, time.Time{})
	if want := []string{"[] true"}; !slices.Equal(got, want) {
		t.Errorf("after more than it keeps, passed on %q, want %q", got, want)
	}
}

// TestSender_FirstLead: an instance that leads without having seen another
// lead has every kept answer forgotten (what was written while no
// instance ran is unknown); leading again later passes on what it kept.
func TestSender_FirstLead(t *testing.T) {
	var got []string
	s := NewSender(touchedTo(func(t wpsidecar.Touched) { got = append(got, fmt.Sprint(t.Options[0], t.Missed)) }), time.Minute, time.Second)
	s.Lead(true, time.Time{})
	s.Lead(false, time.Time{})
	s.Touched(wpsidecar.Touched{Options: map[int64][]string{0: {"x"}}})
	s.Lead(true, time.Time{})
	if want := []string{"[] true", "[x] false"}; !slices.Equal(got, want) {
		t.Errorf("passed on %q, want %q", got, want)
	}
	got = nil
	follower := NewSender(touchedTo(func(t wpsidecar.Touched) { got = append(got, fmt.Sprint(t.Options[0], t.Missed)) }), time.Minute, time.Second)
	follower.Lead(true, time.Now()) // another seen leading: what it sent is not forgotten
	if len(got) != 0 {
		t.Errorf("a new leader that saw another lead passed on %q", got)
	}
}

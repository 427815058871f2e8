package changes

import (
	"slices"
	"testing"
	"time"
)

// TestSender: a leader sends at once; a follower keeps what it notices
// for keep and, when it comes to lead, sends what is still fresh and was
// noticed less than lag before the old leader was last seen; what it keeps
// is bounded.
func TestSender(t *testing.T) {
	var sent []string
	s := NewSender(func(c Change) { sent = append(sent, c.Keys[0]) }, 10*time.Second, time.Second)
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	change := func(k string) Change { return Change{Namespace: "fieldmgr", Keys: []string{k}} }

	s.Notify(change("old"))
	now = now.Add(11 * time.Second)
	s.Notify(change("sent by the old leader"))
	now = now.Add(2 * time.Second)
	held := now // the old leader last seen
	now = now.Add(-500 * time.Millisecond)
	s.Notify(change("fresh"))
	now = now.Add(time.Second)
	if len(sent) != 0 {
		t.Fatalf("a follower sent %q", sent)
	}
	s.Lead(true, held)
	s.Notify(change("led"))
	if want := []string{"fresh", "led"}; !slices.Equal(sent, want) {
		t.Errorf("sent %q, want %q", sent, want)
	}
	s.Lead(false, time.Time{})
	for i := 0; i < maxKept+10; i++ {
		s.Notify(change("x"))
	}
	if len(s.recent) != maxKept {
		t.Errorf("%d kept, bound %d", len(s.recent), maxKept)
	}
}

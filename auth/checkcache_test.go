package auth

import (
	"strconv"
	"testing"
)

// The set of successful checks is kept per user: one user's additions,
// however many, push out only that user's oldest entries; users are
// forgotten least recently used first, all their entries with them; a key
// already there is not new and counts as a use (security round 3, item 7).
func TestCheckCache_PerUser(t *testing.T) {
	c := newCheckCache(3, 2)
	victim := c.key("app", 1, "right", "hash")
	if !c.add(1, victim) || c.add(1, victim) {
		t.Fatal("add: the first time new, the second not")
	}
	for i := 0; i < 10_000; i++ {
		c.add(2, c.key("request", 0, "junk", strconv.Itoa(i)))
	}
	if !c.has(victim) {
		t.Fatal("another user's additions pushed out the victim's entry")
	}
	if n := len(c.users[2].Value.(*userChecks).keys); n != 3 || len(c.set) != 4 {
		t.Errorf("user 2 keeps %d entries, the set %d; want 3 and 4", n, len(c.set))
	}
	if c.has(c.key("request", 0, "junk", "9996")) || !c.has(c.key("request", 0, "junk", "9997")) {
		t.Error("a user's oldest entries should go first")
	}
	// Two users at most: a third pushes out the least recently used. The
	// victim was used last (has), so user 2 goes.
	c.has(victim)
	c.add(3, c.key("pw", 3, "x", "y"))
	if !c.has(victim) || c.has(c.key("request", 0, "junk", "9999")) || len(c.users) != 2 || len(c.set) != 2 {
		t.Errorf("after a third user: victim %v, users %d, entries %d", c.has(victim), len(c.users), len(c.set))
	}
	c.remove(victim)
	if c.has(victim) || len(c.users) != 1 {
		t.Errorf("removed: still there %v, users %d", c.has(victim), len(c.users))
	}
	c.remove(victim) // twice: nothing
}

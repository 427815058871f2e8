package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestLeadership: of three candidates one leads; when it stops another
// leads at once; when the leader's connection is killed on the server it
// steps down at once (it is always waiting on the server) and another
// leads.
func TestLeadership(t *testing.T) {
	tdb := testdb.New(t)
	type candidate struct {
		l      *store.Leadership
		cancel context.CancelFunc
		done   chan struct{}
	}
	// A period far longer than the test: a candidate's next look never
	// comes while it runs, so each hand-over below can only be the one
	// asserted (the lock let go, the connection's error), never a look.
	const period = time.Hour
	var cs []*candidate
	for i := 0; i < 3; i++ {
		db := tdb.Store(t)
		c := &candidate{l: db.Leadership(period, zerolog.Nop()), done: make(chan struct{})}
		var ctx context.Context
		ctx, c.cancel = context.WithCancel(context.Background())
		go func() { c.l.Run(ctx, func(bool, time.Time) {}); close(c.done) }()
		t.Cleanup(func() { c.cancel(); <-c.done })
		cs = append(cs, c)
	}
	leaders := func() (n int, who *candidate) {
		for _, c := range cs {
			if c.l.Leading() {
				n, who = n+1, c
			}
		}
		return n, who
	}
	waitOne := func(step string, not *candidate) (*candidate, time.Duration) {
		t.Helper()
		start := time.Now()
		var one *candidate
		// Two may overlap for the moment the old one takes to hear its
		// connection is gone.
		testwait.For(t, "a single leader: "+step, func() bool {
			n, who := leaders()
			if n == 1 && who != not {
				one = who
			}
			return one != nil
		})
		return one, time.Since(start)
	}
	first, _ := waitOne("start", nil)
	first.cancel()
	<-first.done
	second, took := waitOne("the leader stopped", first)
	t.Logf("leader stopped: another led after %s", took.Round(time.Millisecond))

	var holder int64
	if err := tdb.SQL.QueryRow("SELECT IS_USED_LOCK(?)", second.l.Name()).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if _, err := tdb.SQL.Exec("KILL " + strconv.FormatInt(holder, 10)); err != nil { // MySQL cannot prepare KILL
		t.Fatal(err)
	}
	// Its next look is an hour away: stepping down at all means it heard
	// the connection go while waiting on the server.
	testwait.For(t, "the killed leader to step down before its next look", func() bool { return !second.l.Leading() })
	t.Logf("leader's connection killed: it stepped down after %s", time.Since(killed).Round(time.Millisecond))
	_, took = waitOne("the leader's connection killed", second)
	t.Logf("leader's connection killed: another led after %s", took.Round(time.Millisecond))
}

// Package testwait is the tests' one way to wait: for a condition, never
// for a duration.
package testwait

import (
	"sync"
	"testing"
	"time"
)

// Within is how long For waits: generous, as a busy machine is slow, and
// spent only by a test that fails anyway.
const Within = time.Minute

// For returns once ok holds, asking at once and then after pauses that
// grow from a millisecond to 50 ms (quick when the condition is, light on
// a busy machine when it is not); if ok does not hold within Within it
// fails t, saying what was awaited. Call it on the test's goroutine.
func For(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(Within)
	pause := time.Millisecond
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", Within, what)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Meanwhile runs f again and again on a goroutine of wg until stop is
// closed, or until f says to stop (false): the readers and writers a
// freshness test keeps running beside its checks.
func Meanwhile(wg *sync.WaitGroup, stop <-chan struct{}, f func() bool) {
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				if !f() {
					return
				}
			}
		}
	})
}

package testwait_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
)

// TestFor: it returns once the condition holds, having asked until then.
func TestFor(t *testing.T) {
	asked := 0
	testwait.For(t, "the fifth question", func() bool { asked++; return asked == 5 })
	if asked != 5 {
		t.Errorf("asked %d times, want 5", asked)
	}
}

// TestMeanwhile: f runs again and again until stop closes, or until it
// says to stop; the wait group waits for it either way.
func TestMeanwhile(t *testing.T) {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var runs atomic.Int64
	testwait.Meanwhile(&wg, stop, func() bool { runs.Add(1); return true })
	testwait.For(t, "a few runs", func() bool { return runs.Load() >= 3 })
	close(stop)
	wg.Wait() // returns: f stopped once stop closed

	own := 0
	testwait.Meanwhile(&wg, make(chan struct{}), func() bool { own++; return own < 5 })
	wg.Wait()
	if own != 5 {
		t.Errorf("f ran %d times, want 5 (it said stop on the fifth)", own)
	}
}

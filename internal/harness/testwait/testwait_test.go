package testwait_test

import (
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

//go:build e2e

package e2e

import (
	"regexp"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testvectors"
)

// TestVectorsAgreeWithThisWordPress: the test vectors the unit tests read
// are what this WordPress computes (Debian's 6.1.9; 6.8 or 7.1 in make
// test-stacks), section by section where the file records this version's
// answer (scripts/wp/vectors-check.php).
func TestVectorsAgreeWithThisWordPress(t *testing.T) {
	var got struct {
		WordPress  string   `json:"wordpress"`
		Checked    int      `json:"checked"`
		Mismatches []string `json:"mismatches"`
	}
	site.Script(t, "vectors-check.php", &got, testvectors.Path(t))
	if !regexp.MustCompile(`^(6\.1|6\.[89]|7\.)`).MatchString(got.WordPress) {
		t.Fatalf("the harness runs WordPress %q; the file has 6.1.9's answers and 7.1's (which 6.8 shares)", got.WordPress)
	}
	// Password checks, phpass hashes, DB_HOST forms, serialization cases
	// and login names: every vector of those sections.
	if got.Checked < 100 {
		t.Errorf("only %d vectors checked", got.Checked)
	}
	for _, m := range got.Mismatches {
		t.Error(m)
	}
	t.Logf("WordPress %s computed %d vectors as the file has them", got.WordPress, got.Checked)
}

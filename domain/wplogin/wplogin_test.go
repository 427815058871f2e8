package wplogin_test

import (
	"testing"

	"github.com/wpsidecar/wpsidecar/domain/wplogin"
	"github.com/wpsidecar/wpsidecar/internal/harness/testvectors"
)

// TestSanitize_Vectors: what real PHP's sanitize_user() made of each
// login (testdata/wp-vectors.json).
func TestSanitize_Vectors(t *testing.T) {
	var v struct {
		S struct {
			Vectors []struct {
				In, Out string
			} `json:"vectors"`
		} `json:"sanitize_user_login_lookup"`
	}
	testvectors.Decode(t, &v)
	if len(v.S.Vectors) < 5 {
		t.Fatal("no vectors")
	}
	for _, c := range v.S.Vectors {
		if got := wplogin.Sanitize(c.In); got != c.Out {
			t.Errorf("Sanitize(%q) = %q, want %q", c.In, got, c.Out)
		}
	}
}

// LooksLikeEmail: what is looked up as an e-mail address.
func TestLooksLikeEmail(t *testing.T) {
	for in, want := range map[string]bool{"admin@example.test": true, "a.b+c@x.y": true, "admin": false, "a@b": false, "a@b.": false, "@x.test": false, "x y@z.test": false} {
		if got := wplogin.LooksLikeEmail(in); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}

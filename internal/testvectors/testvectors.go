// Package testvectors finds and decodes ../shared/testdata/wp-vectors.json,
// the values real PHP and WordPress produced, for the tests.
package testvectors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Path is the vectors file: $WPSIDECAR_SHARED/testdata/wp-vectors.json, or
// shared/testdata/wp-vectors.json in the first folder above the working
// directory that has it (CI puts shared/ beside the clone).
func Path(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("WPSIDECAR_SHARED"); d != "" {
		return filepath.Join(d, "testdata", "wp-vectors.json")
	}
	dir, _ := os.Getwd()
	for ; dir != "/"; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", "testdata", "wp-vectors.json")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("shared/testdata/wp-vectors.json not found beside the repository (set WPSIDECAR_SHARED)")
	return ""
}

// Decode reads the vectors into v, a struct naming the sections it needs.
func Decode(t testing.TB, v any) {
	t.Helper()
	b, err := os.ReadFile(Path(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("wp-vectors.json: %v", err)
	}
}

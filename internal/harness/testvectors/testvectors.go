// Package testvectors decodes testdata/wp-vectors.json at the repository's
// root: values real PHP and WordPress produced, for the tests (see
// testdata/README.md for where they come from).
package testvectors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Path is the vectors file, found from this source file's own place so
// that a test in any package, run from any directory, reads the same file.
func Path(t testing.TB) string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testvectors: cannot tell where the package's source is")
	}
	return filepath.Join(filepath.Dir(self), "..", "..", "..", "testdata", "wp-vectors.json")
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

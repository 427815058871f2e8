package wpconfig

import (
	"runtime"
	"strings"
	"testing"
)

// TestParseCost: what parsing is charged is what lexing and parsing
// allocate, within a margin, so that the byte bound is one of memory.
func TestParseCost(t *testing.T) {
	for _, src := range []string{
		strings.Repeat("$x=1;", 4096),
		strings.Repeat("define('A', 'b' . getenv('X'));\n", 1000),
		"1" + strings.Repeat("|1", 10000) + ";",
		strings.Repeat(`$a = "{$b} and $c[d]";`+"\n", 1000),
		strings.Repeat("/* a comment */\n", 1000),
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f, err := parsePHP("/x.php", src, true, nil)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		_, tokens, _ := phpTokens(src, true)
		stmts, nodes := 0, 0
		walk(f.stmts, func(*stmt) { stmts++ }, func(*node) { nodes++ })
		allocated := int(after.TotalAlloc - before.TotalAlloc)
		charged := len(src) + tokens*tokenCost + stmts*stmtCost + nodes*nodeCost
		t.Logf("%.20q…: %d tokens, %d statements, %d nodes: %d bytes allocated, %d charged", src, tokens, stmts, nodes, allocated, charged)
		if allocated > charged*5/4 {
			t.Errorf("%.20q…: %d bytes allocated, %d charged", src, allocated, charged)
		}
	}
}

func TestASCIICase(t *testing.T) {
	for _, c := range []struct{ in, upper, lower string }{
		{"", "", ""},
		{"wp_Prefix-1", "WP_PREFIX-1", "wp_prefix-1"},
		{"été \xff@[`{", "éTé \xff@[`{", "été \xff@[`{"},
		{"ÀB", "ÀB", "Àb"},
	} {
		if got := asciiCase(c.in, true); got != c.upper {
			t.Errorf("strtoupper(%q) = %q, want %q", c.in, got, c.upper)
		}
		if got := asciiCase(c.in, false); got != c.lower {
			t.Errorf("strtolower(%q) = %q, want %q", c.in, got, c.lower)
		}
	}
	if !asciiEqualFold("TrUe", "true") || asciiEqualFold("truſ", "trus") || asciiEqualFold("true", "tru") {
		t.Error("asciiEqualFold")
	}
}

package phpserial

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// refVector is one value of testdata/refs.json (made by testdata/refs.php
// with PHP 8.2): PHP's serialize(), serialize(unserialize()) and what
// json_encode(unserialize()) gave under a 128M memory_limit.
type refVector struct {
	Label       string `json:"label"`
	Serialize   string `json:"serialize"`
	Reserialize string `json:"reserialize"`
	JSONEncode  struct {
		JSON   *string `json:"json"`
		Length int64   `json:"length"`
		SHA256 string  `json:"sha256"`
		Error  string  `json:"error"`
		Fatal  string  `json:"fatal"`
	} `json:"json_encode"`
}

func loadRefVectors(t testing.TB) map[string]refVector {
	t.Helper()
	b, err := os.ReadFile("testdata/refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Values []refVector `json:"values"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	out := map[string]refVector{}
	for _, v := range f.Values {
		out[v.Label] = v
	}
	if len(out) < 200 {
		t.Fatalf("only %d vectors", len(out))
	}
	return out
}

// TestReferences_PHPVectors: values holding references, as PHP wrote them,
// write back as PHP writes them again (byte for byte, references kept), and
// give json_encode's JSON: the same bytes when PHP could make it, ErrTooLarge
// where PHP ran out of memory, null for a value inside itself (PHP:
// "Recursion detected").
func TestReferences_PHPVectors(t *testing.T) {
	for _, c := range loadRefVectors(t) {
		v, err := Unserialize(c.Serialize)
		if err != nil {
			t.Errorf("%s: Unserialize: %v", c.Label, err)
			continue
		}
		if got := Serialize(v); got != c.Reserialize {
			t.Errorf("%s: Serialize:\n got %.300s\n PHP %.300s", c.Label, got, c.Reserialize)
		}
		if c.Serialize != c.Reserialize {
			t.Errorf("%s: PHP does not write back what it wrote; pick another vector", c.Label)
		}
		var j []byte
		if c.JSONEncode.Length <= 1<<20 {
			j, err = EncodeJSON(v)
		}
		switch want := c.JSONEncode; {
		case want.Fatal != "":
			if !errors.Is(err, ErrTooLarge) || j != nil {
				t.Errorf("%s: EncodeJSON = %d bytes, %v; PHP: %s; want ErrTooLarge", c.Label, len(j), err, want.Fatal)
			}
		case want.Error == "Recursion detected":
			if err != nil || !strings.Contains(string(j), "null") {
				t.Errorf("%s: EncodeJSON = %.200s, %v; want null where PHP finds recursion", c.Label, j, err)
			}
		case want.Error != "":
			t.Errorf("%s: PHP's json_encode: %s", c.Label, want.Error)
		case err != nil:
			t.Errorf("%s: EncodeJSON: %v; PHP gives %d bytes", c.Label, err, want.Length)
		case want.JSON != nil && string(j) != *want.JSON:
			t.Errorf("%s: EncodeJSON:\n got %.300s\n PHP %.300s", c.Label, j, *want.JSON)
		case want.Length > 1<<20:
			// Measured, not written (25 MB for nest_22).
			var m jsonSizer
			if size := m.size(v); size != want.Length {
				t.Errorf("%s: JSON measured at %d bytes; PHP %d", c.Label, size, want.Length)
			}
		default:
			sum := sha256.Sum256(j)
			if int64(len(j)) != want.Length || hex.EncodeToString(sum[:]) != want.SHA256 {
				t.Errorf("%s: EncodeJSON gives %d bytes (sha256 %x); PHP %d (%s)", c.Label, len(j), sum, want.Length, want.SHA256)
			}
		}
	}
}

// TestReferences_Nested40: the row ($b=[$a]; $b[1]=&$b[0]; forty
// times, 760 bytes) reads, compares and writes back in bounded memory, the
// same bytes PHP wrote; its JSON, 2^40 leaves, is ErrTooLarge, measured
// without being written; JSON puts null in its place in a set of options.
func TestReferences_Nested40(t *testing.T) {
	vectors := loadRefVectors(t)
	for _, label := range []string{"nest_40", "nest_40_long_leaf", "objects_40"} {
		in := vectors[label].Serialize
		var out string
		var v Value
		allocated := allocatedBy(func() {
			var err error
			if v, err = Unserialize(in); err != nil {
				t.Fatal(err)
			}
			out = Serialize(v)
		})
		if out != in {
			t.Errorf("%s: Serialize(Unserialize(x)) = %.200s, want x", label, out)
		}
		if allocated > 64<<10 {
			t.Errorf("%s: reading and writing %d bytes allocated %d bytes", label, len(in), allocated)
		}
		if err := CheckJSON(v); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: CheckJSON: %v, want ErrTooLarge", label, err)
		}
		var j []byte
		var err error
		allocated = allocatedBy(func() { j, err = EncodeJSON(v) })
		if !errors.Is(err, ErrTooLarge) || j != nil {
			t.Errorf("%s: EncodeJSON = %d bytes, %v; want ErrTooLarge", label, len(j), err)
		}
		if allocated > 64<<10 {
			t.Errorf("%s: EncodeJSON allocated %d bytes to refuse", label, allocated)
		}
		// Each half is 2^39 leaves: JSON leaves both out.
		if got, want := string(JSON(v)), map[bool]string{true: `{"l":null,"r":null}`, false: `[null,null]`}[v.Kind == Object]; got != want {
			t.Errorf("%s: JSON = %.100s, want %s", label, got, want)
		}
	}
	set, err := Unserialize(vectors["options_with_bomb"].Serialize)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := EncodeJSON(set); !errors.Is(err, ErrTooLarge) {
		t.Errorf("options_with_bomb: EncodeJSON: %v, want ErrTooLarge", err)
	}
	if got, want := string(JSON(set)), `{"color":"#fff","bomb":null,"title":"x","list":[1,2]}`; got != want {
		t.Errorf("options_with_bomb: JSON = %.200s, want %s", got, want)
	}
}

// allocatedBy is how many bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReferences_Allocs: reading and writing the 40-deep row takes a few
// allocations per level, not per copy.
func TestReferences_Allocs(t *testing.T) {
	in := loadRefVectors(t)["nest_40"].Serialize
	allocs := testing.AllocsPerRun(20, func() {
		v, err := Unserialize(in)
		if err != nil || Serialize(v) != in {
			t.Fatal("round trip")
		}
		if _, err := EncodeJSON(v); !errors.Is(err, ErrTooLarge) {
			t.Fatal(err)
		}
	})
	if allocs > 500 {
		t.Errorf("%v allocations for %d bytes", allocs, len(in))
	}
}

// TestReferences_JSONSize: the measured size is the written size, and a
// size of exactly MaxJSON is written while one byte more is refused.
func TestReferences_JSONSize(t *testing.T) {
	for _, c := range loadRefVectors(t) {
		v, _ := Unserialize(c.Serialize)
		var m jsonSizer
		if size := m.size(v); size <= 1<<20 {
			if j := JSON(v); int64(len(j)) != size {
				t.Errorf("%s: size %d, JSON %d bytes", c.Label, size, len(j))
			}
		}
	}
	// 64 strings sharing one string's bytes, measured at exactly MaxJSON,
	// then at one byte more (refused, and nothing written).
	const n = 64
	long := strings.Repeat("a", MaxJSON/n)
	list := Value{Kind: Array}
	left := MaxJSON - 2 - (n - 1) // brackets and commas
	for i := range n {
		l := min(left/(n-i), len(long)) - 2
		list.Entries = append(list.Entries, Entry{Key: IntKey(int64(i)), Value: Value{Kind: String, Str: long[:l]}})
		left -= l + 2
	}
	var m jsonSizer
	if size := m.size(list); size != MaxJSON || CheckJSON(list) != nil {
		t.Fatalf("measured %d bytes, want %d (CheckJSON: %v)", size, MaxJSON, CheckJSON(list))
	}
	list.Entries[0].Value.Str += "a"
	var j []byte
	var err error
	if allocated := allocatedBy(func() { j, err = EncodeJSON(list) }); !errors.Is(err, ErrTooLarge) || j != nil || allocated > 1<<20 {
		t.Errorf("MaxJSON+1 bytes: %d bytes, %v, %d bytes allocated", len(j), err, allocated)
	}
}

// TestReferences_Changed: a value read through a reference and changed
// since is written as it now is, not as a reference to what it was.
func TestReferences_Changed(t *testing.T) {
	v, err := Unserialize(`a:3:{i:0;a:1:{i:0;i:1;}i:1;R:2;i:2;O:8:"stdClass":0:{}}`)
	if err != nil {
		t.Fatal(err)
	}
	// Appending gives entries of its own: the other place keeps [1].
	v.Entries[1].Value.Entries = append(v.Entries[1].Value.Entries, Entry{Key: IntKey(1), Value: Value{Kind: Int, Int: 2}})
	if got, want := Serialize(v), `a:3:{i:0;a:1:{i:0;i:1;}i:1;a:2:{i:0;i:1;i:1;i:2;}i:2;O:8:"stdClass":0:{}}`; got != want {
		t.Errorf("changed copy: %s, want %s", got, want)
	}
	// The same value picked into a new set stays one reference.
	set := Value{Kind: Array, Entries: []Entry{{Key: StrKey("b"), Value: v.Entries[2].Value}, {Key: StrKey("a"), Value: v.Entries[0].Value}, {Key: StrKey("c"), Value: v.Entries[0].Value}}}
	if got, want := Serialize(set), `a:3:{s:1:"b";O:8:"stdClass":0:{}s:1:"a";a:1:{i:0;i:1;}s:1:"c";R:3;}`; got != want {
		t.Errorf("picked: %s, want %s", got, want)
	}
	// One entry alone is that entry's value (the top level is no
	// reference).
	if got, want := Serialize(v.Entries[0].Value), `a:1:{i:0;i:1;}`; got != want {
		t.Errorf("alone: %s, want %s", got, want)
	}
	// A scalar changed in one place.
	w, _ := Unserialize(`a:2:{i:0;s:1:"x";i:1;R:2;}`)
	w.Entries[0].Value.Str = "y"
	if got, want := Serialize(w), `a:2:{i:0;s:1:"y";i:1;s:1:"x";}`; got != want {
		t.Errorf("changed scalar: %s, want %s", got, want)
	}
}

// TestReferences_AsPHPReadsThem: references PHP refuses (r: to what is not
// an object, R: to an overwritten value, to itself, signed numbers) are
// errors; what PHP reads oddly (a repeated key, a value inside itself) is
// written back as PHP writes it. Compared with PHP's own answers.
func TestReferences_AsPHPReadsThem(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatal("php: not found (Debian's php-cli: scripts/install-deps.sh)")
	}
	inputs := []string{
		`a:1:{i:0;R:1;}`, `a:2:{i:0;i:1;i:1;R:1;}`, `a:2:{i:0;a:1:{i:0;i:5;}i:1;r:2;}`, `a:2:{i:0;i:5;i:1;r:2;}`,
		`a:3:{i:0;i:5;i:1;R:2;i:2;R:2;}`, `a:3:{i:0;i:5;i:1;R:2;i:2;R:3;}`,
		`O:8:"stdClass":1:{s:4:"self";r:1;}`, `O:8:"stdClass":1:{s:4:"self";R:1;}`,
		`a:3:{i:0;O:8:"stdClass":0:{}i:1;R:2;i:2;r:2;}`, `a:3:{i:0;O:8:"stdClass":0:{}i:1;r:2;i:2;R:3;}`,
		`a:4:{i:0;i:1;i:1;O:8:"stdClass":0:{}i:2;r:3;i:3;R:4;}`, `R:1;`, `r:1;`,
		`a:2:{i:0;i:1;i:0;R:2;}`, `a:3:{i:0;i:1;i:1;i:2;i:0;R:3;}`, `a:3:{i:0;a:1:{i:0;i:5;}i:0;i:1;i:1;R:3;}`,
		`a:3:{i:0;O:8:"stdClass":0:{}i:0;i:1;i:1;r:2;}`, `O:8:"stdClass":3:{s:1:"p";i:1;s:1:"p";i:2;s:1:"q";R:2;}`,
		`O:8:"stdClass":2:{s:1:"p";i:1;s:1:"p";R:2;}`, `a:3:{i:0;i:1;i:1;R:2;i:1;i:5;}`, `a:3:{i:0;i:1;i:1;R:2;i:0;i:5;}`,
		`a:3:{i:0;O:8:"stdClass":0:{}i:1;R:2;i:0;i:5;}`, `a:4:{i:0;O:8:"stdClass":0:{}i:1;R:2;i:0;i:5;i:2;r:2;}`,
		`a:1:{i:0;r:1;}`, `a:1:{i:0;a:1:{i:0;R:2;}}`, `O:8:"stdClass":1:{s:1:"a";a:1:{i:0;R:1;}}`,
		`a:2:{i:0;N;i:1;R:2;}`, `a:1:{i:0;R:-1;}`, `a:1:{i:0;R:0;}`, `a:2:{i:0;i:1;i:1;R:+2;}`, `a:2:{i:0;i:1;i:1;R:02;}`,
		`a:2:{i:0;i:1;i:1;R:99999999999999999999;}`, `a:2:{i:0;O:8:"stdClass":0:{}i:1;r:02;}`,
		// A repeated key's new value takes the old one's place: a number
		// that named the old value names the new one.
		`a:3:{i:0;i:7;i:0;i:1;i:1;R:2;}`, `a:3:{i:0;i:7;i:0;a:1:{i:0;i:3;}i:1;R:2;}`, `a:4:{i:0;i:7;i:1;R:2;i:0;i:1;i:2;R:2;}`,
		`a:3:{i:0;O:8:"stdClass":0:{}i:0;O:8:"stdClass":1:{s:1:"p";i:1;}i:1;r:2;}`, `a:3:{i:0;b:1;i:0;d:1.5;i:0;a:1:{s:1:"a";R:2;}}`,
		`a:3:{i:2;a:0:{}s:1:"b";d:1.5;s:1:"b";O:8:"stdClass":1:{s:1:"p";O:8:"stdClass":3:{s:1:"r";R:3;s:1:"q";b:1;s:1:"r";i:1;}}}`,
		// A reference made to a place inside an overwritten value is held
		// once, when that value is gone: r: again, not R:.
		`a:3:{s:1:"b";O:8:"stdClass":0:{}i:1;a:1:{s:1:"a";r:2;}i:1;a:1:{s:1:"c";R:4;}}`,
		// Arrays inside themselves, as PHP serializes them.
		`a:1:{i:0;a:1:{i:0;R:2;}}`, `a:2:{s:1:"x";i:1;s:1:"s";a:2:{s:1:"x";i:1;s:1:"s";R:3;}}`,
		`a:1:{i:0;a:2:{i:0;i:1;i:1;a:1:{i:0;N;}}}`, `O:8:"stdClass":1:{s:1:"a";a:2:{i:0;i:1;i:1;R:2;}}`,
	}
	for _, in := range inputs {
		out, err := exec.Command(php, "-r", `$u = @unserialize($argv[1]); echo $u === false ? "false" : serialize($u);`, in).Output()
		if err != nil {
			t.Fatalf("php: %v", err)
		}
		got := "false"
		if v, err := Unserialize(in); err == nil {
			got = Serialize(v)
		} else if !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: %v", in, err)
		}
		if got != string(out) {
			t.Errorf("%s:\n got %s\n PHP %s", in, got, out)
		}
	}
	// Where the sidecar differs: R:1 inside the top-level array (which
	// PHP's serialize never writes) makes it recursive, and PHP writes it
	// once more before its N; (a:1:{i:0;a:1:{i:0;a:1:{i:0;N;}}}). The
	// sidecar reads the inner reference as null, and writes N; there.
	for in, want := range map[string]string{
		`a:1:{i:0;a:1:{i:0;R:1;}}`: `a:1:{i:0;a:1:{i:0;N;}}`,
		`a:1:{i:0;R:1;}`:           `a:1:{i:0;N;}`,
	} {
		if v, err := Unserialize(in); err != nil || Serialize(v) != want {
			t.Errorf("%s: %s, %v; want %s", in, Serialize(v), err, want)
		}
	}
}

// BenchmarkReferences_Nested40: reading, writing back and refusing the JSON
// of the 760-byte row.
func BenchmarkReferences_Nested40(b *testing.B) {
	in := loadRefVectors(b)["nest_40"].Serialize
	b.ReportAllocs()
	for b.Loop() {
		v, err := Unserialize(in)
		if err != nil || Serialize(v) != in {
			b.Fatal("round trip")
		}
		if _, err := EncodeJSON(v); !errors.Is(err, ErrTooLarge) {
			b.Fatal(err)
		}
	}
}

// TestReferences_RandomAgainstPHP: random serialized data full of R:, r:
// and repeated keys (most of it nothing PHP's serialize would write) reads
// and writes back as PHP's serialize(unserialize()) gives, or is refused
// where PHP's unserialize refuses it. Only R:1 inside a top-level array is
// left out (see TestReferences_AsPHPReadsThem).
func TestReferences_RandomAgainstPHP(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatal("php: not found (Debian's php-cli: scripts/install-deps.sh)")
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int, values *int) string
	gen = func(depth int, values *int) string {
		r := rnd.Float64()
		switch {
		case depth > 3 || r < 0.35:
			*values++
			return []string{`N;`, `i:1;`, `i:2;`, `b:1;`, `s:1:"x";`, `d:1.5;`}[rnd.IntN(6)]
		case r < 0.5 && *values > 0:
			n := rnd.IntN(*values+1) + 1
			if rnd.IntN(2) == 0 {
				return fmt.Sprintf("R:%d;", n)
			}
			*values++
			return fmt.Sprintf("r:%d;", n)
		}
		*values++
		object := rnd.Float64() < 0.35
		var b strings.Builder
		n := rnd.IntN(4)
		for range n {
			switch {
			case object:
				fmt.Fprintf(&b, `s:1:"%c";`, "pqr"[rnd.IntN(3)])
			case rnd.IntN(2) == 0:
				fmt.Fprintf(&b, "i:%d;", rnd.IntN(3))
			default:
				fmt.Fprintf(&b, `s:1:"%c";`, "ab"[rnd.IntN(2)])
			}
			b.WriteString(gen(depth+1, values))
		}
		if object {
			return fmt.Sprintf(`O:8:"stdClass":%d:{%s}`, n, b.String())
		}
		return fmt.Sprintf("a:%d:{%s}", n, b.String())
	}
	var inputs []string
	for len(inputs) < 5000 {
		values := 0
		in := gen(0, &values)
		if strings.HasPrefix(in, "a:") && strings.Contains(in, "R:1;") {
			continue
		}
		inputs = append(inputs, in)
	}
	cmd := exec.Command(php, "-r", `while (($l = fgets(STDIN)) !== false) { $u = @unserialize(hex2bin(trim($l))); echo $u === false ? "false" : bin2hex(serialize($u)), "\n"; }`)
	var stdin strings.Builder
	for _, in := range inputs {
		stdin.WriteString(hex.EncodeToString([]byte(in)) + "\n")
	}
	cmd.Stdin = strings.NewReader(stdin.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	answers := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(answers) != len(inputs) {
		t.Fatalf("php answered %d of %d", len(answers), len(inputs))
	}
	refs, refused := 0, 0
	for i, in := range inputs {
		want := answers[i]
		if want != "false" {
			b, _ := hex.DecodeString(want)
			want = string(b)
		} else {
			refused++
		}
		got := "false"
		if v, err := Unserialize(in); err == nil {
			got = Serialize(v)
		}
		if strings.Contains(got, "R:") || strings.Contains(got, "r:") {
			refs++
		}
		if got != want {
			t.Errorf("%s:\n got %s\n PHP %s", in, got, want)
		}
	}
	if refs < 200 || refused < 200 {
		t.Errorf("only %d answers with references, %d refused", refs, refused)
	}
}

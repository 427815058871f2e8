package phpserial

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testvectors"
)

type vectors struct {
	PHPSerialize struct {
		Cases []struct {
			Label     string `json:"label"`
			Serialize string `json:"serialize"`
		} `json:"cases"`
		Nested struct {
			Serialize string   `json:"serialize"`
			KeyTypes  []string `json:"key_types"`
		} `json:"nested"`
		Floats []struct {
			Repr      string `json:"repr_17g"`
			Serialize string `json:"serialize"`
			JSON      string `json:"json"`
		} `json:"floats"`
		StringKeys struct {
			Input        string   `json:"input"`
			Reserialized string   `json:"reserialized"`
			KeyTypes     []string `json:"key_types"`
		} `json:"unserialize_string_keys"`
		JSONEscaping struct {
			Serialize string `json:"serialize"`
		} `json:"json_string_escaping"`
	} `json:"php_serialize"`
	SessionTokens json.RawMessage `json:"session_tokens"`
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	var v vectors
	testvectors.Decode(t, &v)
	return v
}

// TestRoundTrip_PHPVectors: every value PHP serialized reads and writes back
// byte for byte, references included.
func TestRoundTrip_PHPVectors(t *testing.T) {
	v := loadVectors(t)
	inputs := []string{v.PHPSerialize.Nested.Serialize, v.PHPSerialize.StringKeys.Reserialized, v.PHPSerialize.JSONEscaping.Serialize}
	for _, c := range v.PHPSerialize.Cases {
		inputs = append(inputs, c.Serialize)
	}
	for _, f := range v.PHPSerialize.Floats {
		inputs = append(inputs, f.Serialize)
	}
	if len(inputs) < 40 {
		t.Fatalf("only %d vectors", len(inputs))
	}
	for _, in := range inputs {
		got, err := Unserialize(in)
		if err != nil {
			t.Errorf("Unserialize(%q): %v", in, err)
			continue
		}
		if out := Serialize(got); out != in {
			t.Errorf("Serialize(Unserialize(%q)) = %q", in, out)
		}
	}
}

func TestUnserialize_Types(t *testing.T) {
	tests := []struct {
		in   string
		want Value
	}{
		{`N;`, Value{Kind: Null}},
		{`b:1;`, Value{Kind: Bool, Bool: true}},
		{`i:-9223372036854775808;`, Value{Kind: Int, Int: math.MinInt64}},
		{`d:0.1;`, Value{Kind: Float, Float: 0.1, FloatText: "0.1"}},
		{`s:4:"😀";`, Value{Kind: String, Str: "😀"}},
		{`s:3:"a"b";`, Value{Kind: String, Str: `a"b`}},
		{`E:14:"WpvSuit:Hearts";`, Value{Kind: Enum, Str: "WpvSuit:Hearts"}},
		{`C:9:"WpvLegacy":3:{abc}`, Value{Kind: Object, Class: "WpvLegacy", Custom: true, Str: "abc"}},
	}
	for _, tt := range tests {
		got, err := Unserialize(tt.in)
		if err != nil || !equal(got, tt.want) {
			t.Errorf("Unserialize(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestUnserialize_KeysAndOrder(t *testing.T) {
	v := loadVectors(t).PHPSerialize.StringKeys
	got, err := Unserialize(v.Input)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range got.Entries {
		if e.Key.IsInt {
			types = append(types, "integer:"+e.Key.String())
		} else {
			types = append(types, "string:"+e.Key.String())
		}
	}
	if strings.Join(types, ",") != strings.Join(v.KeyTypes, ",") {
		t.Errorf("key types %v, PHP says %v", types, v.KeyTypes)
	}
	if Serialize(got) != v.Reserialized {
		t.Errorf("reserialized %q, PHP says %q", Serialize(got), v.Reserialized)
	}
	if x, ok := got.Get("10"); !ok || x.Str != "x" {
		t.Error(`Get("10") does not find integer key 10`)
	}
	if _, ok := got.Get("10 "); ok {
		t.Error(`Get("10 ") found integer key 10`)
	}
}

func TestUnserialize_References(t *testing.T) {
	got, err := Unserialize(`a:2:{i:0;i:1;i:1;R:2;}`)
	if err != nil || len(got.Entries) != 2 || got.Entries[1].Value.Int != 1 {
		t.Errorf("R: %+v %v", got, err)
	}
	got, err = Unserialize(`a:2:{i:0;O:8:"stdClass":1:{s:1:"a";i:7;}i:1;r:2;}`)
	if err != nil || got.Entries[1].Value.Class != "stdClass" || got.Entries[1].Value.Entries[0].Value.Int != 7 {
		t.Errorf("r: %+v %v", got, err)
	}
	// A reference to the array being read is read as null, not a cycle.
	if _, err := Unserialize(`a:1:{i:0;R:1;}`); err != nil {
		t.Errorf("self reference: %v", err)
	}
}

func TestUnserialize_Errors(t *testing.T) {
	bad := []string{
		``, `N`, `x:1;`, `i:;`, `i:1`, `i:1x;`, `b:2;`, `d:abc;`, `s:5:"abc";`, `s:-1:"";`, `s:3:"abc"`,
		`s:99999999999999999999:"a";`, `a:1:{i:0;}`, `a:2:{i:0;i:1;}`, `a:-1:{}`, `a:999999999:{}`,
		`a:1:{d:1.5;i:1;}`, `O:8:"stdClass":1:{}`, `r:1;`, `a:1:{i:0;r:5;}`, `i:1;i:2;`,
		`C:3:"Foo":5:{ab}`, `E:3:"Foo";`, strings.Repeat("a:1:{i:0;", MaxDepth+2) + "N;" + strings.Repeat("}", MaxDepth+2),
	}
	for _, in := range bad {
		if v, err := Unserialize(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("Unserialize(%q) = %+v, %v; want ErrSyntax", in, v, err)
		}
	}
}

func TestFormatFloat_PHPVectors(t *testing.T) {
	for _, f := range loadVectors(t).PHPSerialize.Floats {
		v, err := Unserialize(f.Serialize)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(strings.TrimPrefix(f.Serialize, "d:"), ";")
		if got := FormatFloat(v.Float, 'E'); got != want {
			t.Errorf("FormatFloat(%v) = %q, PHP serialize %q", v.Float, got, want)
		}
		if got := FormatFloat(v.Float, 'e'); got != f.JSON {
			t.Errorf("FormatFloat(%v, e) = %q, PHP json_encode %q", v.Float, got, f.JSON)
		}
	}
	for f, want := range map[float64]string{1: "1", -0.5: "-0.5", math.Copysign(0, -1): "-0", 1e100: "1.0E+100", math.Inf(-1): "-INF"} {
		if got := FormatFloat(f, 'E'); got != want {
			t.Errorf("FormatFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

// equal tells whether a and b hold the same data, comparing entries that
// references share once (a row that nests references is small as a graph,
// and 2^40 values as a tree).
func equal(a, b Value) bool {
	e := equaler{}
	return e.equal(a, b)
}

type equaler struct{ same map[[2]sharedEntries]bool }

func (q *equaler) equal(a, b Value) bool {
	if a.Kind != b.Kind || a.Bool != b.Bool || a.Int != b.Int || a.Str != b.Str || a.FloatText != b.FloatText ||
		a.Class != b.Class || a.Custom != b.Custom || len(a.Entries) != len(b.Entries) {
		return false
	}
	if a.Kind == Float && !(a.Float == b.Float || math.IsNaN(a.Float) && math.IsNaN(b.Float)) {
		return false
	}
	if len(a.Entries) == 0 {
		return true
	}
	k := [2]sharedEntries{{at: &a.Entries[0], n: len(a.Entries)}, {at: &b.Entries[0], n: len(b.Entries)}}
	if q.same[k] {
		return true
	}
	for i := range a.Entries {
		if a.Entries[i].Key != b.Entries[i].Key || !q.equal(a.Entries[i].Value, b.Entries[i].Value) {
			return false
		}
	}
	if q.same == nil {
		q.same = map[[2]sharedEntries]bool{}
	}
	q.same[k] = true
	return true
}

// FuzzUnserialize: no panics; what reads writes back no larger, reads
// again to the same data and writes the same bytes again; its JSON is as
// long as measured, or refused as too large, and never larger than the
// limit (and what the top level's keys add when JSON leaves values out).
func FuzzUnserialize(f *testing.F) {
	for _, s := range []string{`a:2:{i:0;O:8:"stdClass":0:{}i:1;r:2;}`, `a:1:{s:2:"10";d:1.0E+25;}`, `C:3:"Foo":2:{ab}`, `E:5:"A:Bcd";`, `s:4:"😀";`,
		`a:2:{i:0;i:1;i:1;R:2;}`, `a:2:{i:0;a:2:{i:0;s:1:"x";i:1;R:3;}i:1;R:2;}`, `O:8:"stdClass":1:{s:4:"self";r:1;}`,
		`a:3:{i:0;O:8:"stdClass":0:{}i:1;r:2;i:2;R:3;}`, `a:3:{i:0;i:1;i:1;R:2;i:0;i:5;}`, `a:1:{i:0;a:1:{i:0;R:2;}}`,
		`O:8:"stdClass":3:{s:1:"p";i:1;s:1:"p";i:2;s:1:"q";R:2;}`, `a:2:{i:0;a:1:{i:0;i:9;}i:1;R:3;}`,
		strings.Repeat("a:2:{i:0;", 30) + "N;" + strings.Repeat("i:1;R:2;}", 30)} {
		f.Add(s)
	}
	// The rows, as PHP wrote them.
	b, err := os.ReadFile("testdata/refs.json")
	if err != nil {
		f.Fatal(err)
	}
	var vectors struct {
		Values []struct {
			Serialize string `json:"serialize"`
		} `json:"values"`
	}
	if err := json.Unmarshal(b, &vectors); err != nil {
		f.Fatal(err)
	}
	for _, v := range vectors.Values {
		f.Add(v.Serialize)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, err := Unserialize(in)
		if err != nil {
			return
		}
		// What reads must write and read again to the same value.
		out := Serialize(v)
		if len(out) > len(in) {
			t.Fatalf("%q -> %q is larger", in, out)
		}
		w, err := Unserialize(out)
		if err != nil || !equal(v, w) {
			t.Fatalf("%q -> %q does not read back: %v", in, out, err)
		}
		if again := Serialize(w); again != out {
			t.Fatalf("%q -> %q -> %q", in, out, again)
		}
		var m jsonSizer
		size := m.size(v)
		if err := CheckJSON(v); (err != nil) != (size > MaxJSON) {
			t.Fatalf("%q: %d bytes of JSON, CheckJSON: %v", in, size, err)
		}
		switch {
		case size <= 1<<16:
			j, err := EncodeJSON(v)
			if err != nil || int64(len(j)) != size || string(JSON(w)) != string(j) {
				t.Fatalf("%q: EncodeJSON = %s, %v; measured %d; of the copy %s", in, j, err, size, JSON(w))
			}
		case size > MaxJSON:
			if _, err := EncodeJSON(v); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("%q: %d bytes of JSON: %v", in, size, err)
			}
			// JSON writes what fits: checked when that is little.
			if slices.ContainsFunc(v.Entries, func(e Entry) bool { n := m.size(e.Value); return n > 1<<16 && n <= MaxJSON }) {
				return
			}
			if j := JSON(v); len(j) > 1<<16+2*len(in) || !json.Valid(j) {
				t.Fatalf("%q: JSON gives %d bytes: %.100s", in, len(j), j)
			}
		}
	})
}

func TestJSON_NestedVector(t *testing.T) {
	var v struct {
		PHPSerialize struct {
			Nested struct {
				Serialize string `json:"serialize"`
				WPJSON    string `json:"wp_json_encode"`
			} `json:"nested"`
		} `json:"php_serialize"`
	}
	testvectors.Decode(t, &v)
	val, err := Unserialize(v.PHPSerialize.Nested.Serialize)
	if err != nil {
		t.Fatal(err)
	}
	// Same JSON as PHP's, up to escaping (PHP writes \/ and \u00e9), key
	// order included: compare token streams.
	if got, want := tokens(t, JSON(val)), tokens(t, []byte(v.PHPSerialize.Nested.WPJSON)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("JSON:\n got %s\nwant %s", JSON(val), v.PHPSerialize.Nested.WPJSON)
	}
	for in, want := range map[string]string{`a:0:{}`: `[]`, `a:1:{i:1;i:2;}`: `{"1":2}`, `d:1;`: `1`, `d:NAN;`: `null`, `C:1:"A":0:{}`: `{}`,
		"s:2:\"\xffA\";": `"?A"`, `s:4:"Zoë";`: `"Zoë"`} {
		v, _ := Unserialize(in)
		if got := string(JSON(v)); got != want {
			t.Errorf("JSON(%s) = %s, want %s", in, got, want)
		}
	}
}

func tokens(t *testing.T, b []byte) []string {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var out []string
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		out = append(out, fmt.Sprintf("%v", tok))
	}
	return out
}

// TestMaybeUnserialize_PHPVectors: is_serialized's answer for every vector,
// and an error wherever PHP's unserialize failed (maybe_unserialize gave
// false for something other than b:0;).
func TestMaybeUnserialize_PHPVectors(t *testing.T) {
	var v struct {
		PHPSerialize struct {
			IsSerialized []struct {
				Input        string `json:"input"`
				IsSerialized bool   `json:"is_serialized"`
				Maybe        string `json:"maybe_unserialize"`
			} `json:"is_serialized"`
		} `json:"php_serialize"`
	}
	testvectors.Decode(t, &v)
	if len(v.PHPSerialize.IsSerialized) < 20 {
		t.Fatalf("only %d vectors", len(v.PHPSerialize.IsSerialized))
	}
	for _, c := range v.PHPSerialize.IsSerialized {
		if got := IsSerialized(c.Input); got != c.IsSerialized {
			t.Errorf("IsSerialized(%q) = %v, PHP says %v", c.Input, got, c.IsSerialized)
		}
		got, err := MaybeUnserialize(c.Input)
		phpFailed := c.Maybe == "boolean:false" && strings.TrimSpace(c.Input) != "b:0;"
		if phpFailed != (err != nil) {
			t.Errorf("MaybeUnserialize(%q) = %v, %v; PHP gave %s", c.Input, got, err, c.Maybe)
		}
		if strings.HasPrefix(c.Maybe, "string:") && (got.Kind != String || "string:'"+got.Str+"'" != c.Maybe) {
			t.Errorf("MaybeUnserialize(%q) = %+v; PHP gave %s", c.Input, got, c.Maybe)
		}
	}
}

// TestUnserialize_AsPHPReadsIt: rows PHP reads, read as PHP reads them —
// deep nesting, an integer out of range, repeated keys — compared with
// PHP's own unserialize and json_encode (security round 2, item 10).
func TestUnserialize_AsPHPReadsIt(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatal("php: not found (Debian's php-cli: scripts/install-deps.sh)")
	}
	inputs := []string{
		strings.Repeat("a:1:{i:0;", 80) + "s:4:\"deep\";" + strings.Repeat("}", 80),
		`a:1:{s:1:"n";i:99999999999999999999999;}`,
		`a:1:{s:1:"n";i:-99999999999999999999999;}`,
		`a:1:{i:99999999999999999999999;s:3:"big";}`,
		`a:2:{s:1:"a";i:1;s:1:"a";i:2;}`,
		`a:3:{s:1:"a";i:1;s:1:"b";i:2;s:1:"a";i:3;}`,
		`a:2:{i:1;s:1:"x";s:1:"1";s:1:"y";}`,
		`O:8:"stdClass":2:{s:1:"p";i:1;s:1:"p";i:2;}`,
	}
	for _, in := range inputs {
		out, err := exec.Command(php, "-r", `echo json_encode(@unserialize($argv[1]));`, in).Output()
		if err != nil {
			t.Fatalf("php: %v", err)
		}
		v, err := Unserialize(in)
		if err != nil {
			t.Errorf("%.60s: %v; PHP reads %s", in, err, out)
			continue
		}
		if got := string(JSON(v)); got != string(out) {
			t.Errorf("%.60s:\n got %s\n PHP %s", in, got, out)
		}
	}
}

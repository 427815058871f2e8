package phpserial

import (
	"errors"
	"math"
	"os/exec"
	"strings"
	"testing"
)

// TestFromJSON: what json_decode($j, true) and serialize() give, as printed
// by PHP 8.2's php -r.
func TestFromJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":1,"10":"x","010":"y","-5":true,"b":1.0,"c":[1,2],"d":{},"e":null,"a":2}`,
			`a:8:{s:1:"a";i:2;i:10;s:1:"x";s:3:"010";s:1:"y";i:-5;b:1;s:1:"b";d:1;s:1:"c";a:2:{i:0;i:1;i:1;i:2;}s:1:"d";a:0:{}s:1:"e";N;}`},
		{`12345678901234567890`, `d:1.2345678901234567E+19;`},
		{`-0`, `i:0;`},
		{`-0.0`, `d:-0;`},
		{`"\u00e9\ud83d\ude00"`, `s:6:"é😀";`},
		{`[{"":1}]`, `a:1:{i:0;a:1:{s:0:"";i:1;}}`},
		{`1E2`, `d:100;`},
		{`0.1`, `d:0.1;`},
		{` {"z":[],"y":{"1":"a","0":"b"}} `, `a:2:{s:1:"z";a:0:{}s:1:"y";a:2:{i:1;s:1:"a";i:0;s:1:"b";}}`},
	} {
		v, err := FromJSON([]byte(c.in))
		if err != nil {
			t.Errorf("FromJSON(%s): %v", c.in, err)
			continue
		}
		if got := Serialize(v); got != c.want {
			t.Errorf("FromJSON(%s) serialized = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestFromJSON_Errors(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":}`, `[1,]`, `{} {}`, "\"\xff\"", `{"a" 1}`, `nul`,
		strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2)} {
		if _, err := FromJSON([]byte(in)); !errors.Is(err, ErrJSON) {
			t.Errorf("FromJSON(%q) = %v, want ErrJSON", in, err)
		}
	}
}

// TestFromJSON_BeyondFloat: as json_decode, 1e400 is INF, -1e400 -INF and
// 1e-400 zero; the callers refuse what they cannot store.
func TestFromJSON_BeyondFloat(t *testing.T) {
	for in, want := range map[string]float64{`1e400`: math.Inf(1), `-1e400`: math.Inf(-1), `1e-400`: 0} {
		v, err := FromJSON([]byte(in))
		if err != nil || v.Kind != Float || v.Float != want {
			t.Errorf("FromJSON(%s) = %+v, %v", in, v, err)
		}
	}
}

// TestFromJSON_AsPHPReadsIt: numbers at a float's edges serialize as
// serialize(json_decode($j, true)) does in PHP (FuzzFromJSON's 1e700:
// d:INF;), and JSON writes the infinities as null.
func TestFromJSON_AsPHPReadsIt(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatal("php: not found (Debian's php-cli: scripts/install-deps.sh)")
	}
	for _, in := range []string{`1e700`, `-1e700`, `1e-700`, `-1e-700`, `[1e700,1]`, `{"a":1E400}`, strings.Repeat("9", 400),
		"-" + strings.Repeat("9", 400), `1e308`, `1.7976931348623157e308`, `1.7976931348623159e308`, `4.9e-324`, `2e-324`,
		`9223372036854775807`, `9223372036854775808`, `-9223372036854775809`} {
		out, err := exec.Command(php, "-r", `echo serialize(json_decode($argv[1], true));`, "--", in).Output()
		if err != nil {
			t.Fatalf("php: %v", err)
		}
		v, err := FromJSON([]byte(in))
		if err != nil {
			t.Errorf("FromJSON(%.20s): %v; PHP %s", in, err, out)
			continue
		}
		if got := Serialize(v); got != string(out) {
			t.Errorf("FromJSON(%.20s) serialized = %s, PHP %s", in, got, out)
		}
	}
	v, _ := FromJSON([]byte(`[1e700,-1e700,1]`))
	if got := string(JSON(v)); got != `[null,null,1]` {
		t.Errorf("JSON = %s", got)
	}
}

// FuzzFromJSON: no panics; what is read renders back to JSON that reads
// to the same value.
func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x"],"10":{"":null}}`, `[]`, `"é"`, `-0`, `1e308`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := FromJSON(in)
		if err != nil {
			return
		}
		j, err := EncodeJSON(v)
		var m jsonSizer
		if err != nil || int64(len(j)) != m.size(v) || string(j) != string(JSON(v)) {
			t.Fatalf("FromJSON(%q): EncodeJSON = %s, %v", in, j, err)
		}
		w, err := FromJSON(j)
		if err != nil {
			t.Fatalf("JSON(FromJSON(%q)) = %s does not read back: %v", in, JSON(v), err)
		}
		if Serialize(w) != Serialize(normalizeJSON(v)) {
			t.Fatalf("%q: %s != %s", in, Serialize(w), Serialize(v))
		}
	})
}

// normalizeJSON is what survives a trip through JSON: a float with an
// integral value prints without a fraction and reads back as an int, an
// infinity (a number beyond a float's range, as json_decode reads it) prints
// as null, and an empty object prints as [].
func normalizeJSON(v Value) Value {
	switch v.Kind {
	case Float:
		if math.IsInf(v.Float, 0) {
			return Value{Kind: Null}
		}
		if s := FormatFloat(v.Float, 'e'); !strings.ContainsAny(s, ".e") {
			if w, err := jsonNumber(s); err == nil {
				return w
			}
		}
	case Array:
		out := v
		out.Entries = make([]Entry, len(v.Entries))
		for i, e := range v.Entries {
			out.Entries[i] = Entry{Key: e.Key, Value: normalizeJSON(e.Value)}
		}
		return out
	}
	return v
}

// TestFromJSONStrict: JSON kept as sent: objects stay objects ({} is not
// []), integer-like keys stay strings, numbers keep their text, a key given
// twice is refused.
func TestFromJSONStrict(t *testing.T) {
	for _, in := range []string{
		`{"a":{},"b":[],"10":1.50,"c":[1e2,-0,12345678901234567890],"d":{"x":"é/<>"}}`,
		`[]`, `{}`, `"x"`, `1.0`,
	} {
		v, err := FromJSONStrict([]byte(in))
		if err != nil || string(JSON(v)) != in {
			t.Errorf("FromJSONStrict(%s) renders as %s (%v)", in, JSON(v), err)
		}
	}
	if _, err := FromJSONStrict([]byte(`{"a":1,"a":2}`)); err == nil || !errors.Is(err, ErrJSON) || !strings.Contains(err.Error(), `duplicate key "a"`) {
		t.Errorf("duplicate key: %v", err)
	}
	v, _ := FromJSONStrict([]byte(`{"10":true}`))
	if k := v.Entries[0].Key; k.IsInt || k.Str != "10" {
		t.Errorf("key %+v", k)
	}
}

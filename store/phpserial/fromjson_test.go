package phpserial

import (
	"errors"
	"math"
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
		w, err := FromJSON(JSON(v))
		if err != nil {
			t.Fatalf("JSON(FromJSON(%q)) = %s does not read back: %v", in, JSON(v), err)
		}
		if Serialize(w) != Serialize(normalizeJSON(v)) {
			t.Fatalf("%q: %s != %s", in, Serialize(w), Serialize(v))
		}
	})
}

// normalizeJSON is what survives a trip through JSON: a float with an
// integral value prints without a fraction and reads back as an int, and
// an empty object prints as [].
func normalizeJSON(v Value) Value {
	switch v.Kind {
	case Float:
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

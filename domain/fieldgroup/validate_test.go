package fieldgroup

import (
	"errors"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar"
)

func FuzzValidateConfig(f *testing.F) {
	f.Add(`{"type":"post","post_type":"post","fields":{"a":{"type":"text","label":"A","maxlength":3}}}`)
	f.Add(`{"type":"taxonomy","taxonomy":"cat","fields":[]}`)
	f.Add(`{"type":"user","fields":{"x":{"type":"image","label":"I","return_format":"id"}},"z":[1,{"a":null}]}`)
	f.Add(`[{"type":`)
	f.Fuzz(func(t *testing.T, in string) {
		n, err := ParseJSON([]byte(in))
		if err != nil {
			return
		}
		out, err := ValidateConfig(n)
		var v *wpsidecar.Invalid
		if err != nil {
			if !errors.As(err, &v) {
				t.Fatalf("%q: error %v is not a client error", in, err)
			}
			return
		}
		// What is accepted is stored as JSON that validates again unchanged.
		n2, err := ParseJSON([]byte(out))
		if err != nil {
			t.Fatalf("%q stored as invalid JSON %q", in, out)
		}
		again, err := ValidateConfig(n2)
		if err != nil || again != out {
			t.Fatalf("%q stored as %q, which re-validates as %q, %v", in, out, again, err)
		}
	})
}

func FuzzParseJSON(f *testing.F) {
	f.Add(`{"a":[1,2,{"b":"c"}],"d":1e5,"e":null,"f":true}`)
	f.Add(`{"a":1,"a":2}`)
	f.Add(strings.Repeat("[", 100) + strings.Repeat("]", 100))
	f.Fuzz(func(t *testing.T, in string) {
		n, err := ParseJSON([]byte(in))
		if err != nil {
			return
		}
		m, err := ParseJSON([]byte(jsonOf(n)))
		if err != nil || jsonOf(m) != jsonOf(n) {
			t.Fatalf("%q -> %q does not read back", in, jsonOf(n))
		}
	})
}

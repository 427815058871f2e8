package themeoption

import (
	"os"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// testConfig is the configuration the tests of the REST routes, the
// commands and the end-to-end suite serve: every field type, with defaults.
const testConfig = "../../web/themeopts/testdata/config.json"

// FuzzCheckValue: any request body, read as json_decode reads it, checked
// against every field of the test configuration: no panics, and a value
// that passes serializes and reads back unchanged.
func FuzzCheckValue(f *testing.F) {
	b, err := os.ReadFile(testConfig)
	if err != nil {
		f.Fatal(err)
	}
	c, err := ParseConfig(b)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{"accent_color":"#abc"}`, `{"body_font":{"subsets":["latin"],"font-size":"1.5"}}`,
		`{"slides":[{"id":1,"url":"u","alt":""}]}`, `{"logo":{"id":1,"url":"u"}}`, `{"10":"a","columns":1.5e3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := phpserial.FromJSON(body)
		if err != nil || v.Kind != phpserial.Array {
			return
		}
		for _, e := range v.Entries {
			for _, fld := range c.Fields {
				if fld.check(e.Value) != "" {
					continue
				}
				s := phpserial.Serialize(e.Value)
				back, err := phpserial.Unserialize(s)
				if err != nil || phpserial.Serialize(back) != s {
					t.Fatalf("%s value %s: serialized %q does not read back (%v)", fld.Type, phpserial.JSON(e.Value), s, err)
				}
			}
		}
	})
}

// FuzzParseConfig: any configuration file is accepted or refused with an
// error, never a panic.
func FuzzParseConfig(f *testing.F) {
	b, _ := os.ReadFile(testConfig)
	f.Add(b)
	f.Add([]byte(`{"opt_name":"x","sections":[{"id":"s","fields":[{"id":"f","type":"select","options":{"a":"A"},"default":"b"}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err == nil && (c.OptName == "" || c.Capability == "") {
			t.Fatalf("accepted a configuration without opt_name or capability: %s", b)
		}
	})
}

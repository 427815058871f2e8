package phpquery

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// cases are raw query fields and the name and value PHP files them under
// ("" for none), checked against PHP itself by TestFields_AsPHP.
var cases = []struct {
	raw, name, value string
	array            bool
}{
	{"rest_route=/wp/v2/posts", "rest_route", "/wp/v2/posts", false},
	{"rest.route=/x", "rest_route", "/x", false},
	{"rest%2Eroute=/x", "rest_route", "/x", false},
	{"%20rest_route=/x", "rest_route", "/x", false},
	{"+rest_route=/x", "rest_route", "/x", false},
	{"rest+route=/x", "rest_route", "/x", false},
	{"rest_route%00x=/x", "rest_route", "/x", false},
	{"rest[route=/x", "rest_route", "/x", false},
	{"rest_route[]=/x", "rest_route", "/x", true},
	{"rest_route[a]b=/x", "rest_route", "/x", true},
	{".method=OPTIONS", "_method", "OPTIONS", false},
	{"%20_method=PUT", "_method", "PUT", false},
	{"_method%00x=PUT", "_method", "PUT", false},
	{"_wpnonce%00x=1", "_wpnonce", "1", false},
	{"_wp.nonce=1", "_wp_nonce", "1", false},
	{"a%zz=%zz%4", "a%zz", "%zz%4", false},
	{"a%4=%41", "a%4", "A", false},
	{"%5Fmethod=x", "_method", "x", false},
	{"=x", "", "", false},
	{"%20=x", "", "", false},
	{"[a]=x", "", "", false},
	{"%00rest_route=x", "", "", false},
	{"per_page", "per_page", "", false},
	{"a.b[c.d]=1", "a_b", "1", true},
	{"[method=DELETE", "", "", false},
	{"%5Bwpnonce=1", "", "", false},
	{"%20[x]=1", "", "", false},
}

func TestFields(t *testing.T) {
	for _, c := range cases {
		got := Fields(c.raw, nil)
		if c.name == "" {
			if len(got) != 0 {
				t.Errorf("%q: %+v, want none", c.raw, got)
			}
			continue
		}
		if want := (Field{c.name, c.array, c.value}); len(got) != 1 || got[0] != want {
			t.Errorf("%q: %+v, want %+v", c.raw, got, want)
		}
	}
	if got := Fields("a=1&&rest.route=2&b", MayBe("rest_route")); len(got) != 1 || got[0].Name != "rest_route" {
		t.Errorf("filtered: %+v, want rest_route alone", got)
	}
	// PHP reads the first max_input_vars fields (empty ones not counted).
	many := strings.Repeat("a&&", MaxInputVars-1)
	if got := Fields(many+"b=1&rest_route=/x", MayBe("rest_route", "b")); len(got) != 1 || got[0].Name != "b" || !TooMany(many+"b=1&rest_route=/x") || TooMany(many+"b=1") {
		t.Errorf("past max_input_vars: %+v", got)
	}
}

// TestFields_AsPHP: the cases are what PHP's own parse_str files (it
// fills $_GET the same way).
func TestFields_AsPHP(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: needs php-cli")
	}
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatal("php-cli is not installed (make deps installs it)")
	}
	for _, c := range cases {
		out, err := exec.Command(php, "-d", "error_reporting=0", "-r", `parse_str($argv[1], $o); $r = array(); foreach ($o as $k => $v) { $r[] = array((string) $k, is_array($v), is_array($v) ? (string) reset($v) : $v); } echo json_encode($r);`, c.raw).Output()
		if err != nil {
			t.Fatalf("php: %v", err)
		}
		var got [][]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q: %s: %v", c.raw, out, err)
		}
		if c.name == "" {
			if len(got) != 0 {
				t.Errorf("%q: PHP files %v, the case says none", c.raw, got)
			}
			continue
		}
		if len(got) != 1 || got[0][0] != c.name || got[0][1] != c.array || got[0][2] != c.value {
			t.Errorf("%q: PHP files %v, the case says %q %v %q", c.raw, got, c.name, c.array, c.value)
		}
	}
}

// TestFields_MaxInputVarsAsPHP: PHP ignores the fields past
// max_input_vars, as Fields does.
func TestFields_MaxInputVarsAsPHP(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: needs php-cli")
	}
	raw := strings.Repeat("a&&", MaxInputVars-1) + "b=1&rest_route=/x"
	out, err := exec.Command("php", "-d", "error_reporting=0", "-r", `parse_str($argv[1], $o); echo json_encode(array_keys($o));`, raw).Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	if string(out) != `["a","b"]` {
		t.Errorf("PHP files %s; Fields reads the first %d fields", out, MaxInputVars)
	}
}

// FuzzName: a name never panics; what it files never holds a space, a
// dot or a NUL before an array's index, and never starts with a space.
func FuzzName(f *testing.F) {
	for _, c := range cases {
		k, _, _ := strings.Cut(c.raw, "=")
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		name, _ := Name(raw)
		if strings.ContainsAny(name, " .\x00") {
			t.Errorf("%q: filed as %q", raw, name)
		}
		if got := Decode(raw); len(got) > len(raw) {
			t.Errorf("%q decoded longer: %q", raw, got)
		}
	})
}

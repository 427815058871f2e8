package wpjson

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCheckJSON: what PHP 8.2's json_decode($body, true) reports, as
// json_last_error(), for each body (0: accepted).
func TestCheckJSON(t *testing.T) {
	tests := []struct {
		body string
		code int
	}{
		{``, 0},
		{`0`, 0},
		{`null`, 0},
		{` {"a": [1, -2.5e+3, true, false, null, "x\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t"]} `, 0},
		{`{"a":1,"a":2}`, 0},
		{`1e400`, 0},
		{`"é"`, 0},
		{"{\"title\":\"a\xff\xfe\xc3\x28b\"}", jsonErrUTF8},
		{"\xff", jsonErrUTF8},
		{"{\"a\":\"\x01\"}", jsonErrCtrlChar},
		{"[1]\x00", jsonErrCtrlChar},
		{`{"a":"\ud800"}`, jsonErrUTF16},
		{`{"a":"\udc00\ud800"}`, jsonErrUTF16},
		{`{"a":"\x"}`, jsonErrSyntax},
		{`{"a":"\u12"}`, jsonErrSyntax},
		{`{"a":1,}`, jsonErrSyntax},
		{`[1 2]`, jsonErrSyntax},
		{`01`, jsonErrSyntax},
		{`1.`, jsonErrSyntax},
		{`-`, jsonErrSyntax},
		{`tru`, jsonErrSyntax},
		{`{"a"}`, jsonErrSyntax},
		{`{1:2}`, jsonErrSyntax},
		{`[1] [2]`, jsonErrSyntax},
		{`"unterminated`, jsonErrCtrlChar},
		{`{"a`, jsonErrCtrlChar},
		{`"ab\`, jsonErrSyntax},
		{`[1`, jsonErrSyntax},
		{`'single'`, jsonErrSyntax},
		{"\xef\xbf\xbd", jsonErrSyntax}, // U+FFFD itself is valid UTF-8
		{"[\"\xff\" x", jsonErrUTF8},    // the first fault wins
		{strings.Repeat("[", 511) + strings.Repeat("]", 511), 0},
		{strings.Repeat("[", 512) + strings.Repeat("]", 512), jsonErrDepth},
		{strings.Repeat(`{"a":`, 511) + "1" + strings.Repeat("}", 511), 0},
		{strings.Repeat(`{"a":`, 512) + "1" + strings.Repeat("}", 512), jsonErrDepth},
	}
	for _, tt := range tests {
		got := 0
		if e := CheckJSON([]byte(tt.body)); e != nil {
			got = e.jsonCode
			if e.Status != 400 || e.Code != "rest_invalid_json" || e.Message != "Invalid JSON body passed." || e.jsonMessage != jsonErrMessages[got] {
				t.Errorf("%q: %+v", tt.body, e)
			}
		}
		if got != tt.code {
			t.Errorf("%.40q: json_last_error %d, want %d", tt.body, got, tt.code)
		}
	}
}

// FuzzCheckJSON: on valid UTF-8 without surrogate escapes or deep nesting,
// PHP's rules and Go's encoding/json agree on what is JSON.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x"]}`, `[]`, `"\u00e9"`, `{"a":}`, "\"\x01\"", `01`, `1.5E-2`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e := CheckJSON(b)
		if len(b) == 0 || string(b) == "0" || !utf8.Valid(b) {
			return
		}
		if e != nil && (e.jsonCode == jsonErrUTF16 || e.jsonCode == jsonErrDepth) {
			return
		}
		if (e == nil) != json.Valid(b) {
			t.Errorf("%q: PHP rules say %v, Go says valid=%v", b, e, json.Valid(b))
		}
	})
}

// TestCheckJSON_AgainstPHP sends the table above and a few thousand
// mutations of JSON bodies to the real PHP (php-cli) and compares
// json_last_error() after json_decode($body, true) with CheckJSON.
func TestCheckJSON_AgainstPHP(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatal("php (php-cli) is not installed: scripts/install-deps.sh installs it")
	}
	seeds := []string{`{"title":"Größe","config":{"type":"post","fields":{"a":{"type":"text","label":"A","maxlength":10}}}}`,
		`[1,-2.5e+3,true,false,null,"x\u00e9\ud83d\ude00\"\\\/"]`, `{"accent_color":"#fff","n":1e400,"l":[{"id":1}]}`}
	rng := rand.New(rand.NewPCG(1, 2))
	bytesOf := []byte("{}[]:,\"\\u0123456789.eE+-tfn \t\n\r\x00\x01\x7f\x80\xbf\xc3\xe2\xed\xf0\xf4\xffdD8aAbB")
	var cases [][]byte
	for _, s := range seeds {
		for i := 0; i < 1500; i++ {
			b := []byte(s)
			for n := rng.IntN(3) + 1; n > 0; n-- {
				at := rng.IntN(len(b) + 1)
				switch rng.IntN(3) {
				case 0: // insert
					b = append(b[:at], append([]byte{bytesOf[rng.IntN(len(bytesOf))]}, b[at:]...)...)
				case 1: // delete
					if at < len(b) {
						b = append(b[:at], b[at+1:]...)
					}
				default: // replace
					if at < len(b) {
						b[at] = bytesOf[rng.IntN(len(bytesOf))]
					}
				}
			}
			cases = append(cases, b)
		}
	}
	var in strings.Builder
	for _, c := range cases {
		in.WriteString(base64.StdEncoding.EncodeToString(c) + "\n")
	}
	cmd := exec.Command(php, "-r", `while (($l = fgets(STDIN)) !== false) { json_decode(base64_decode(trim($l)), true); echo json_last_error(), "\n"; }`)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	codes := strings.Fields(string(out))
	if len(codes) != len(cases) {
		t.Fatalf("php answered %d of %d", len(codes), len(cases))
	}
	bad := 0
	for i, c := range cases {
		if len(c) == 0 || string(c) == "0" {
			continue // WordPress does not decode an empty() body
		}
		got := 0
		if e := CheckJSON(c); e != nil {
			got = e.jsonCode
		}
		if want, _ := strconv.Atoi(codes[i]); got != want {
			if bad++; bad <= 20 {
				t.Errorf("%q: CheckJSON %d, PHP %d", c, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d bodies judged otherwise than PHP", bad, len(cases))
	}
}

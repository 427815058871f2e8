package auth

import (
	"encoding/base64"
	"testing"
	"time"
)

var timeZero = time.Unix(0, 0)

func TestParseBasic(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		header, login, password string
		ok                      bool
	}{
		{"Basic " + enc("admin:abcd EFGH ijkl"), "admin", "abcd EFGH ijkl", true},
		{"basic " + enc("a@b.test:p:w"), "a@b.test", "p:w", true}, // split at the first colon
		{"BASIC " + enc("u:p"), "u", "p", true},
		{"Basic " + enc("nocolon"), "", "", false},
		{"Basic " + enc(":p"), "", "", false},
		{"Basic " + enc("u:"), "", "", false},
		{"Bearer " + enc("u:p"), "", "", false},
		{"Basic !!!", "", "", false},
		{"Basic", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		l, p, ok := ParseBasic(tt.header)
		if l != tt.login || p != tt.password || ok != tt.ok {
			t.Errorf("ParseBasic(%q) = %q, %q, %v", tt.header, l, p, ok)
		}
	}
}

func FuzzParseBasic(f *testing.F) {
	f.Add("Basic YWRtaW46cHc=")
	f.Add("basic Og==")
	f.Add("Basic ====")
	f.Fuzz(func(t *testing.T, h string) {
		l, p, ok := ParseBasic(h)
		if ok && (l == "" || p == "") {
			t.Errorf("%q: empty part accepted", h)
		}
	})
}

func FuzzCookie(f *testing.F) {
	f.Add("admin%7C1893456000%7CAbC%7Cdeadbeef", "1893456000")
	f.Add("a|b|c|d", "x")
	f.Add("%zz|||", "-1e400")
	f.Fuzz(func(t *testing.T, raw, exp string) {
		c, err := ParseAuthCookie(raw)
		if err == nil {
			c.Expired(timeZero, true)
			s := NewSalts(map[string]string{"LOGGED_IN_KEY": "k", "LOGGED_IN_SALT": "s"}, nil)
			s.CookieHMAC(c, raw, SchemeLoggedIn, WP68)
			PassFrag(raw, WP61)
		}
		(AuthCookie{Expiration: exp}).Expired(timeZero, false)
		CookieValue([]string{raw, exp}, "a")
		sessionValid(raw, exp, timeZero)
	})
}

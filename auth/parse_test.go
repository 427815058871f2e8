package auth

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"strings"
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
		{"Basic " + enc("admin:abcd\x00efgh"), "admin", "abcd", true}, // PHP_AUTH_PW ends at the NUL
		{"Basic " + enc("admin\x00:abcd"), "", "", false},             // so does everything, the colon included
		{"Basic " + enc("admin:\x00abcd"), "", "", false},
		{"Basic " + enc(":p"), "", "", false},
		{"Basic " + enc("u:"), "", "", false},
		{"Bearer " + enc("u:p"), "", "", false},
		{"Basic !!!", "", "", false},
		{"Basic", "", "", false},
		{"", "", "", false},
	}
	for _, tt := range tests {
		l, p, ok := parseBasic(tt.header)
		if l != tt.login || p != tt.password || ok != tt.ok {
			t.Errorf("parseBasic(%q) = %q, %q, %v", tt.header, l, p, ok)
		}
	}
}

func FuzzParseBasic(f *testing.F) {
	f.Add("Basic YWRtaW46cHc=")
	f.Add("basic Og==")
	f.Add("Basic ====")
	f.Fuzz(func(t *testing.T, h string) {
		l, p, ok := parseBasic(h)
		if ok && (l == "" || p == "") {
			t.Errorf("%q: empty part accepted", h)
		}
		if ok && len(l)+len(p) > maxBasicEncoded {
			t.Errorf("%d bytes of credentials decoded", len(l)+len(p))
		}
	})
}

func FuzzCookie(f *testing.F) {
	f.Add("admin%7C1893456000%7CAbC%7Cdeadbeef", "1893456000")
	f.Add("a|b|c|d", "x")
	f.Add("%zz|||", "-1e400")
	f.Fuzz(func(t *testing.T, raw, exp string) {
		c, err := parseAuthCookie(raw)
		if err == nil {
			c.Expired(timeZero, true)
			s := NewSalts(map[string]string{"LOGGED_IN_KEY": "k", "LOGGED_IN_SALT": "s"}, nil)
			s.CookieHMAC(c, raw, SchemeLoggedIn, WP68)
			passFrag(raw, WP61)
		}
		(AuthCookie{Expiration: exp}).Expired(timeZero, false)
		cookieValue([]string{raw, exp}, "a")
		sessionValid(raw, exp, timeZero)
	})
}

// TestLongPasswords: WordPress checks no password over 4096 bytes against
// anything but an md5 hash, in every version (phpass's checkPassword before
// 6.8, wp_check_password since), so a long one costs no hashing.
func TestLongPasswords(t *testing.T) {
	hashOf := func(pw string) string {
		h, _ := phpassCrypt(bg, pw, "$P$B12345678"+strings.Repeat(".", 22))
		return h
	}
	at, over := strings.Repeat("a", maxPasswordBytes), strings.Repeat("a", maxPasswordBytes+1)
	long := strings.Repeat("x", 45000)
	md5Long := md5.Sum([]byte(long))
	tests := []struct {
		name, password, stored string
		want                   bool
	}{
		{"phpass, 4096 bytes", at, hashOf(at), true},
		{"phpass, 4097 bytes", over, hashOf(over), false},
		{"phpass $H$, 4097 bytes", over, "$H$" + hashOf(over)[3:], false},
		{"bcrypt, 45000 bytes", long, "$2y$10$WordPressVectorSalt12ueBMiWsOtZUYSE4DsMpR6a6ZK8S86JBC", false},
		{"6.8 bcrypt, 45000 bytes", long, "$wp$2y$10$WordPressVectorSalt12ueBMiWsOtZUYSE4DsMpR6a6ZK8S86JBC", false},
		{"md5, 45000 bytes (WordPress checks md5 at any length)", long, hex.EncodeToString(md5Long[:]), true},
	}
	for _, tt := range tests {
		for _, v := range []Version{WP61, WP68} {
			want := tt.want
			if strings.HasPrefix(tt.stored, "$H$") && v == WP68 {
				want = false
			}
			if got := checkPassword(bg, tt.password, tt.stored, v); got != want {
				t.Errorf("%s, version %d: %v, want %v", tt.name, v, got, want)
			}
			if got := checkApplicationPassword(bg, tt.password, tt.stored, v); got != want {
				t.Errorf("%s, version %d, as an application password: %v, want %v", tt.name, v, got, want)
			}
		}
	}
	// Basic credentials beyond what any right one needs are not decoded.
	enc := base64.StdEncoding.EncodeToString([]byte("admin:" + long))
	if _, _, ok := parseBasic("Basic " + enc); ok {
		t.Error("a 45,000-byte Basic password was decoded")
	}
	enc = base64.StdEncoding.EncodeToString([]byte(strings.Repeat("u", 100) + ":" + strings.Repeat(" ", 6000) + at))
	if l, p, ok := parseBasic("Basic " + enc); !ok || len(l) != 100 || len(p) != 6000+maxPasswordBytes {
		t.Error("the longest credentials WordPress could accept were not decoded")
	}
}

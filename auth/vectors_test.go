package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testvectors"
)

type producedBy struct {
	WordPress string `json:"wordpress"`
}

func producedVersion(p producedBy) Version {
	if strings.HasPrefix(p.WordPress, "6.1") {
		return WP61
	}
	return WP68
}

type cookieVector struct {
	ProducedBy  producedBy `json:"produced_by"`
	UserLogin   string     `json:"user_login"`
	UserPass    string     `json:"user_pass"`
	Scheme      string     `json:"scheme"`
	Expiration  int64      `json:"expiration"`
	Token       string     `json:"token"`
	PassFrag    string     `json:"pass_frag"`
	Salt        string     `json:"salt"`
	Key         string     `json:"key"`
	HMAC        string     `json:"hmac_sha256"`
	CookieValue string     `json:"cookie_value"`
}

type nonceVector struct {
	Time   int64  `json:"time"`
	Tick   int64  `json:"tick"`
	Action string `json:"action"`
	UID    int64  `json:"uid"`
	Token  string `json:"token"`
	Nonce  string `json:"nonce"`
}

type authVectors struct {
	Salts struct {
		Constants map[string]*string `json:"constants"`
		WPSalt    map[string]string  `json:"wp_salt"`
		WPHash    []struct {
			Data, Scheme string
			HMAC         string `json:"hmac_md5_hex"`
		} `json:"wp_hash"`
	} `json:"salts"`
	SaltFallback struct {
		Cases []struct {
			ProducedBy producedBy         `json:"produced_by"`
			Mode       string             `json:"salt_mode"`
			Constants  map[string]*string `json:"constants"`
			DBOptions  map[string]string  `json:"db_options"`
			WPSalt     map[string]string  `json:"wp_salt"`
			Cookie     cookieVector       `json:"logged_in_cookie_phpass_user"`
			Nonces     []nonceVector      `json:"nonces_fixed_time"`
		} `json:"cases"`
	} `json:"salt_fallback"`
	CookieNames map[string]any `json:"cookie_names"`
	AuthCookies struct {
		Vectors []cookieVector `json:"vectors"`
	} `json:"auth_cookies"`
	Nonces struct {
		Vectors []nonceVector `json:"vectors"`
	} `json:"nonces"`
	SessionTokens struct {
		Token    string `json:"token"`
		Verifier string `json:"verifier_sha256"`
	} `json:"session_tokens"`
	PHPass struct {
		Vectors []struct {
			Password string `json:"password"`
			Hash     string `json:"hash"`
			OK61     bool   `json:"wp_check_password_6.1.9"`
			OK71     bool   `json:"wp_check_password_7.1"`
		} `json:"vectors"`
	} `json:"phpass"`
	WPBcrypt struct {
		Vectors []struct {
			Password string `json:"password"`
			Prehash  string `json:"prehash_base64"`
			Stored   string `json:"stored_hash"`
			OK71     bool   `json:"wp_check_password_7.1"`
			OK61     bool   `json:"wp_check_password_6.1.9"`
		} `json:"vectors"`
	} `json:"wp_bcrypt"`
	OtherHashFormats struct {
		Vectors []struct {
			Kind     string `json:"kind"`
			Password string `json:"password"`
			Hash     string `json:"hash_6.1.9_run"`
			OK61     bool   `json:"wp_check_password_6.1.9"`
			OK71     bool   `json:"wp_check_password_7.1"`
		} `json:"vectors"`
	} `json:"other_hash_formats"`
	FastHash struct {
		Vectors []struct {
			Message string `json:"message"`
			Hash    string `json:"hash"`
		} `json:"vectors"`
	} `json:"fast_hash"`
	AppPasswordHash map[string]struct {
		Raw         string `json:"raw"`
		Chunked     string `json:"chunked"`
		Hash        string `json:"hash"`
		LegacyHash  string `json:"legacy_phpass_hash"`
		CheckLegacy bool   `json:"check_legacy_phpass"`
	} `json:"app_password_hash"`
}

func load(t *testing.T) authVectors {
	t.Helper()
	var v authVectors
	testvectors.Decode(t, &v)
	return v
}

func constants(m map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v != nil && !strings.HasPrefix(k, "SECRET_") {
			out[k] = *v
		}
	}
	return out
}

func TestSalts_FixedConstants(t *testing.T) {
	v := load(t)
	s := NewSalts(constants(v.Salts.Constants), nil)
	for _, scheme := range []string{SchemeAuth, SchemeSecureAuth, SchemeLoggedIn, SchemeNonce} {
		got, err := s.Salt(scheme)
		if err != nil || got != v.Salts.WPSalt[scheme] {
			t.Errorf("Salt(%s) = %q, %v; want %q", scheme, got, err, v.Salts.WPSalt[scheme])
		}
	}
	n := 0
	for _, h := range v.Salts.WPHash {
		if h.Scheme == "custom_scheme" {
			continue
		}
		n++
		if got, _ := s.Hash(h.Data, h.Scheme); got != h.HMAC {
			t.Errorf("Hash(%q, %s) = %s, want %s", h.Data, h.Scheme, got, h.HMAC)
		}
	}
	if n != 4 {
		t.Errorf("%d wp_hash vectors", n)
	}
}

// TestSalts_Fallback: placeholder, missing and duplicated constants fall
// back to the database options, and cookies and nonces made with them
// match WordPress's.
func TestSalts_Fallback(t *testing.T) {
	v := load(t)
	if len(v.SaltFallback.Cases) != 6 {
		t.Fatalf("%d cases", len(v.SaltFallback.Cases))
	}
	for _, c := range v.SaltFallback.Cases {
		name := c.Mode + "/" + c.ProducedBy.WordPress
		s := NewSalts(constants(c.Constants), c.DBOptions)
		for scheme, want := range c.WPSalt {
			if got, err := s.Salt(scheme); err != nil || got != want {
				t.Errorf("%s: Salt(%s) = %q, %v; want %q", name, scheme, got, err, want)
			}
		}
		checkCookie(t, name, s, c.Cookie, producedVersion(c.ProducedBy))
		for _, n := range c.Nonces {
			if got, _ := s.Nonce(n.Tick, n.Action, n.UID, n.Token); got != n.Nonce {
				t.Errorf("%s: nonce %+v = %s", name, n, got)
			}
		}
	}
	// Without the options, a rejected constant leaves nothing to use.
	if _, err := NewSalts(map[string]string{"NONCE_KEY": placeholderKey, "NONCE_SALT": "x"}, nil).Salt(SchemeNonce); err != errNoSalt {
		t.Errorf("err = %v, want errNoSalt", err)
	}
}

// checkCookie: a cookie WordPress minted on a site of version v (files
// and database alike) verifies on a database of that version, with the
// pass_frag the vector names.
func checkCookie(t *testing.T, name string, s *Salts, c cookieVector, v Version) {
	t.Helper()
	alt, _ := altPassFrag(c.UserPass, v)
	if got := passFrag(c.UserPass, v); got != c.PassFrag && alt != c.PassFrag {
		t.Errorf("%s: passFrag(%q) = %q (other rule %q), want %q", name, c.UserPass, got, alt, c.PassFrag)
	}
	parsed, err := parseAuthCookie(c.CookieValue)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got, err := s.cookieHMAC(parsed, c.PassFrag, c.Scheme); err != nil || got != c.HMAC || parsed.HMAC != c.HMAC {
		t.Errorf("%s: HMAC = %s, %v; want %s", name, got, err, c.HMAC)
	}
	if ok, err := s.cookieMatches(parsed, c.UserPass, c.Scheme, v); !ok || err != nil {
		t.Errorf("%s: not accepted: %v", name, err)
	}
}

func TestAuthCookies(t *testing.T) {
	v := load(t)
	s := NewSalts(constants(v.Salts.Constants), nil)
	if len(v.AuthCookies.Vectors) != 30 {
		t.Fatalf("%d vectors", len(v.AuthCookies.Vectors))
	}
	for _, c := range v.AuthCookies.Vectors {
		name := c.ProducedBy.WordPress + "/" + c.UserPass[:min(8, len(c.UserPass))] + "/" + c.Scheme
		checkCookie(t, name, s, c, producedVersion(c.ProducedBy))
	}
}

// TestAuthCookies_DatabaseBehindFiles: the cookies 7.1 mints verify on a
// database still at 6.1's db_version (files upgraded, upgrade.php not run
// yet), for every stored format — the $wp$ user's among them (issue: 403
// where WordPress answers 200). On a 6.8 database, 6.1's cookies verify
// only where the two rules agree ($P$, $2y$), as WordPress 6.8 has them.
func TestAuthCookies_DatabaseBehindFiles(t *testing.T) {
	v := load(t)
	s := NewSalts(constants(v.Salts.Constants), nil)
	kinds := map[string]bool{}
	for _, c := range v.AuthCookies.Vectors {
		parsed, _ := parseAuthCookie(c.CookieValue)
		name := c.ProducedBy.WordPress + "/" + c.UserPass[:min(8, len(c.UserPass))] + "/" + c.Scheme
		if producedVersion(c.ProducedBy) == WP68 {
			kinds[c.UserPass[:min(4, len(c.UserPass))]] = true
			if ok, err := s.cookieMatches(parsed, c.UserPass, c.Scheme, WP61); !ok || err != nil {
				t.Errorf("%s on a 6.1 database: refused", name)
			}
			continue
		}
		agree := passFrag61(c.UserPass) == passFrag68(c.UserPass)
		if ok, _ := s.cookieMatches(parsed, c.UserPass, c.Scheme, WP68); ok != agree {
			t.Errorf("%s on a 6.8 database: accepted %v, want %v", name, ok, agree)
		}
	}
	if len(kinds) != 5 || !kinds["$wp$"] {
		t.Errorf("7.1 vectors cover %v", kinds)
	}
}

func TestParseAuthCookie(t *testing.T) {
	c, err := parseAuthCookie("ad+min%7C1893456000%7Ctok%7Chm")
	if err != nil || c.Login != "ad+min" || c.Expiration != "1893456000" || c.Token != "tok" || c.HMAC != "hm" {
		t.Errorf("percent-decoded, + kept: %+v %v", c, err)
	}
	for _, bad := range []string{"", "a|b|c", "a|b|c|d|e", "%7C%7C"} {
		if _, err := parseAuthCookie(bad); err != errMalformedCookie {
			t.Errorf("parseAuthCookie(%q) = %v", bad, err)
		}
	}
	if v, ok := cookieValue([]string{"a=1; wordpress_logged_in_x=first", "wordpress_logged_in_x=second"}, "wordpress_logged_in_x"); !ok || v != "first" {
		t.Errorf("first duplicate wins: %q", v)
	}
}

func TestCookieExpiry(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := AuthCookie{Expiration: "1799999400"} // ten minutes ago
	if !c.Expired(now, false) || c.Expired(now, true) {
		t.Error("GET must reject, POST has the grace hour")
	}
	if !(AuthCookie{Expiration: "soon"}).Expired(now, true) {
		t.Error("a non-numeric expiration is expired")
	}
}

func TestNonces(t *testing.T) {
	v := load(t)
	s := NewSalts(constants(v.Salts.Constants), nil)
	if len(v.Nonces.Vectors) < 3 {
		t.Fatalf("%d vectors", len(v.Nonces.Vectors))
	}
	for _, n := range v.Nonces.Vectors {
		if tick := NonceTick(time.Unix(n.Time, 0)); tick != n.Tick {
			t.Errorf("tick(%d) = %d, want %d", n.Time, tick, n.Tick)
		}
		if got, _ := s.Nonce(n.Tick, n.Action, n.UID, n.Token); got != n.Nonce {
			t.Errorf("nonce %+v = %s", n, got)
		}
		now := time.Unix(n.Time, 0)
		if r := s.VerifyNonce(n.Nonce, n.Action, n.UID, n.Token, now); r != 1 {
			t.Errorf("verify at its tick = %d", r)
		}
		if r := s.VerifyNonce(n.Nonce, n.Action, n.UID, n.Token, now.Add(12*time.Hour)); r != 2 {
			t.Errorf("verify a tick later = %d", r)
		}
		if r := s.VerifyNonce(n.Nonce, n.Action, n.UID, n.Token, now.Add(24*time.Hour)); r != 0 {
			t.Errorf("verify two ticks later = %d", r)
		}
		if r := s.VerifyNonce(n.Nonce, n.Action, n.UID+1, n.Token, now); r != 0 {
			t.Errorf("verify for another user = %d", r)
		}
	}
	if s.VerifyNonce("", "wp_rest", 0, "", time.Now()) != 0 {
		t.Error("empty nonce verified")
	}
}

func TestTokenVerifier(t *testing.T) {
	v := load(t).SessionTokens
	if got := TokenVerifier(v.Token); got != v.Verifier {
		t.Errorf("TokenVerifier = %s, want %s", got, v.Verifier)
	}
}

func TestCheckPassword_Vectors(t *testing.T) {
	v := load(t)
	type c struct {
		name, pw, hash string
		ok61, ok68     bool
	}
	var cases []c
	for _, p := range v.PHPass.Vectors {
		cases = append(cases, c{"phpass " + p.Hash, p.Password, p.Hash, p.OK61, p.OK71})
	}
	for _, p := range v.WPBcrypt.Vectors {
		cases = append(cases, c{"wp bcrypt " + p.Stored, p.Password, p.Stored, p.OK61, p.OK71})
		if got := wpPrehash(p.Password); got != p.Prehash {
			t.Errorf("prehash(%q) = %s, want %s", p.Password, got, p.Prehash)
		}
	}
	for _, p := range v.OtherHashFormats.Vectors {
		cases = append(cases, c{p.Kind, p.Password, p.Hash, p.OK61, p.OK71})
	}
	if len(cases) < 14 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		// 6.8's own formats are read by their format on a database still
		// at 6.1's db_version: only 6.8+ files write them (see Version).
		want61 := tc.ok61
		if only68Format(tc.hash) {
			want61 = tc.ok68
		}
		if got := checkPassword(bg, tc.pw, tc.hash, WP61); got != want61 {
			t.Errorf("%s: 6.1 database, sidecar %v, want %v (6.1 says %v)", tc.name, got, want61, tc.ok61)
		}
		if got := checkPassword(bg, tc.pw, tc.hash, WP68); got != tc.ok68 {
			t.Errorf("%s: 6.8 says %v, sidecar %v", tc.name, tc.ok68, got)
		}
		if tc.ok68 && checkPassword(bg, tc.pw+"x", tc.hash, WP68) {
			t.Errorf("%s: a wrong password verified", tc.name)
		}
	}
}

func TestApplicationPasswordHashes(t *testing.T) {
	v := load(t)
	for _, f := range v.FastHash.Vectors {
		if got := FastHash(f.Message); got != f.Hash {
			t.Errorf("FastHash(%q) = %s, want %s", f.Message, got, f.Hash)
		}
	}
	v71, v61 := v.AppPasswordHash["7.1"], v.AppPasswordHash["6.1.9"]
	if v71.Raw == "" || v61.Raw == "" {
		t.Fatal("app_password_hash vectors missing")
	}
	stripped := stripApplicationPassword(v71.Chunked)
	if stripped != v71.Raw {
		t.Errorf("strip(%q) = %q", v71.Chunked, stripped)
	}
	checks := []struct {
		name       string
		pw, stored string
		v          Version
		want       bool
	}{
		{"6.8 generic", stripped, v71.Hash, WP68, true},
		{"6.8 legacy phpass item", stripped, v71.LegacyHash, WP68, v71.CheckLegacy},
		{"6.1 phpass item", stripped, v61.Hash, WP61, true},
		{"6.1 phpass item on a 6.8 database", stripped, v61.Hash, WP68, true},
		// 6.1 itself cannot read $generic$; on a database at 6.1's
		// db_version one was made by 6.8+ files not yet upgraded, which read
		// it (issue: 401 incorrect_password where WordPress answers 200).
		{"generic on a 6.1 database", stripped, v71.Hash, WP61, true},
		{"generic on a 6.1 database, wrong", "x" + stripped[1:], v71.Hash, WP61, false},
		{"chunked unstripped", v71.Chunked, v71.Hash, WP68, false},
		{"wrong", "x" + stripped[1:], v71.Hash, WP68, false},
	}
	for _, c := range checks {
		if got := checkApplicationPassword(bg, c.pw, c.stored, c.v); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestCookieNames(t *testing.T) {
	v := load(t)
	for _, key := range []string{"single_site_6.1.9", "single_site_7.1"} {
		m, ok := v.CookieNames[key].(map[string]any)
		if !ok {
			t.Fatalf("cookie_names.%s missing", key)
		}
		h := CookieHash(m["siteurl_option"].(string))
		if h != m["COOKIEHASH"] || LoggedInCookieName(h) != m["LOGGED_IN_COOKIE"] ||
			authCookieName(h) != m["AUTH_COOKIE"] || secureAuthCookieName(h) != m["SECURE_AUTH_COOKIE"] {
			t.Errorf("%s: hash %s", key, h)
		}
	}
}

package auth

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Schemes of wp_salt() that the sidecar uses.
const (
	SchemeAuth       = "auth"
	SchemeSecureAuth = "secure_auth"
	SchemeLoggedIn   = "logged_in"
	SchemeNonce      = "nonce"
)

// placeholderKey is the value of an unset key in wp-config-sample.php;
// WordPress never uses it as a key.
const placeholderKey = "put your unique phrase here"

// errNoSalt: a key or salt is neither configured nor stored in the
// database, so WordPress would generate one; nothing can be verified.
var errNoSalt = errors.New("auth: no usable key or salt")

// Salts computes wp_salt() from the wp-config.php constants that are set
// (name → value) and the database options WordPress falls back to
// ("logged_in_key", …): a constant that is empty, "0", the placeholder, or
// shared with another constant is not used, as wp_salt() decides.
type Salts struct {
	usable  map[string]string
	options map[string]string
}

// NewSalts applies WordPress's rejection rules to constants once.
func NewSalts(constants, options map[string]string) *Salts {
	count := map[string]int{}
	for _, v := range constants {
		count[v]++
	}
	usable := map[string]string{}
	for k, v := range constants {
		if v == "" || v == "0" || v == placeholderKey || count[v] > 1 {
			continue
		}
		usable[k] = v
	}
	return &Salts{usable: usable, options: options}
}

// Salt is wp_salt(scheme) for auth, secure_auth, logged_in and nonce.
func (s *Salts) Salt(scheme string) (string, error) {
	part := func(kind string) (string, error) {
		if v, ok := s.usable[strings.ToUpper(scheme)+"_"+strings.ToUpper(kind)]; ok {
			return v, nil
		}
		if v := s.options[scheme+"_"+kind]; v != "" {
			return v, nil
		}
		return "", errNoSalt
	}
	key, err := part("key")
	if err != nil {
		return "", err
	}
	salt, err := part("salt")
	if err != nil {
		return "", err
	}
	return key + salt, nil
}

// Hash is wp_hash(): hex HMAC-MD5 keyed with wp_salt(scheme).
func (s *Salts) Hash(data, scheme string) (string, error) {
	salt, err := s.Salt(scheme)
	if err != nil {
		return "", err
	}
	return hmacMD5Hex(salt, data), nil
}

func hmacMD5Hex(key, data string) string {
	m := hmac.New(md5.New, []byte(key))
	m.Write([]byte(data))
	return hex.EncodeToString(m.Sum(nil))
}

// CookieHash is COOKIEHASH: md5 of the site URL (single site: siteurl
// without trailing slash; multisite: the network's siteurl as stored).
func CookieHash(siteURL string) string {
	if siteURL == "" {
		return ""
	}
	sum := md5.Sum([]byte(siteURL))
	return hex.EncodeToString(sum[:])
}

// Cookie names for a COOKIEHASH.
func LoggedInCookieName(hash string) string   { return "wordpress_logged_in_" + hash }
func authCookieName(hash string) string       { return "wordpress_" + hash }
func secureAuthCookieName(hash string) string { return "wordpress_sec_" + hash }

// AuthCookie is a parsed auth or logged-in cookie.
type AuthCookie struct {
	Login      string
	Expiration string // as sent: the HMAC covers the exact text
	Token      string
	HMAC       string
}

// errMalformedCookie: not four |-separated fields.
var errMalformedCookie = errors.New("auth: malformed cookie")

// parseAuthCookie splits a cookie value as wp_parse_auth_cookie() does,
// after PHP's percent-decoding (which leaves '+' alone).
func parseAuthCookie(raw string) (AuthCookie, error) {
	v, err := url.PathUnescape(raw)
	if err != nil {
		v = raw
	}
	f := strings.Split(v, "|")
	if len(f) != 4 {
		return AuthCookie{}, errMalformedCookie
	}
	return AuthCookie{Login: f[0], Expiration: f[1], Token: f[2], HMAC: f[3]}, nil
}

// cookieValue returns the named cookie's raw value from a Cookie header as
// PHP would (the first of duplicates).
func cookieValue(header []string, name string) (string, bool) {
	for _, line := range header {
		for _, part := range strings.Split(line, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
			if ok && k == name {
				return v, true
			}
		}
	}
	return "", false
}

// passFrag is the part of user_pass WordPress binds into the cookies it
// mints (wp_generate_auth_cookie), so that a new password ends them. 6.1
// takes substr(user_pass, 8, 4) of every hash; 6.8 keeps that for hashes
// beginning $P$ or $2y$ and takes the last four bytes of any other. The
// rules agree on $P$ (all 6.1 writes) and $2y$, so the format decides,
// not db_version, which lags the files (see Version):
//   - $P$, $2y$: substr(8, 4), both rules;
//   - 6.8's own formats, $wp… and argon2: the last four bytes. Only 6.8 or
//     later writes them, and 6.1 cannot check their passwords, so their
//     users' cookies come from 6.8+ files — also on a database still at
//     6.1's db_version (files upgraded, upgrade.php not run yet);
//   - formats neither writes (md5, $2a$, $2b$, $H$, SHA-crypt…: imported
//     users): by the version, 6.1's substr or 6.8's last four.
//
// altPassFrag covers what the version cannot tell.
func passFrag(userPass string, v Version) string {
	if v == WP68 || only68Format(userPass) {
		return passFrag68(userPass)
	}
	return passFrag61(userPass)
}

// altPassFrag is the pass_frag of the other rule, where it differs, on a
// database whose db_version is older than 6.8's: its files may be 6.1's or
// already 6.8's, so a cookie either could mint is accepted — 6.8's for an
// imported format (files upgraded ahead of the database), 6.1's for $wp…
// and argon2 (files downgraded under hashes 6.8 wrote, whose users 6.1
// can still give cookies by other means than a password). Both fragments
// come from the current user_pass, so a password change still ends every
// cookie. From 6.8's db_version on, the files are 6.8 or later (db_version
// never runs ahead of them, short of a downgrade) and there is one rule.
func altPassFrag(userPass string, v Version) (string, bool) {
	if v == WP68 {
		return "", false
	}
	other := passFrag68(userPass)
	if only68Format(userPass) {
		other = passFrag61(userPass)
	}
	if other == passFrag(userPass, v) {
		return "", false
	}
	return other, true
}

// passFrag61 is 6.1's rule: substr(user_pass, 8, 4).
func passFrag61(userPass string) string {
	if len(userPass) <= 8 {
		return ""
	}
	return userPass[8:min(12, len(userPass))]
}

// passFrag68 is 6.8's rule.
func passFrag68(userPass string) string {
	if strings.HasPrefix(userPass, "$P$") || strings.HasPrefix(userPass, "$2y$") {
		return passFrag61(userPass)
	}
	return userPass[max(0, len(userPass)-4):]
}

// only68Format tells the hash formats only 6.8 and later write: $wp (its
// bcrypt of a pre-hash) and argon2 (password_hash() through the
// wp_hash_password_algorithm filter, which 6.8 added).
func only68Format(userPass string) bool {
	return strings.HasPrefix(userPass, "$wp") || strings.HasPrefix(userPass, "$argon2")
}

// CookieHMAC computes the HMAC of a cookie for the given user_pass, with
// the pass_frag WordPress of version v mints (passFrag).
func (s *Salts) CookieHMAC(c AuthCookie, userPass, scheme string, v Version) (string, error) {
	return s.cookieHMAC(c, passFrag(userPass, v), scheme)
}

// cookieHMAC is the HMAC of a cookie bound to pass_frag frag.
func (s *Salts) cookieHMAC(c AuthCookie, frag, scheme string) (string, error) {
	key, err := s.Hash(c.Login+"|"+frag+"|"+c.Expiration+"|"+c.Token, scheme)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(c.Login + "|" + c.Expiration + "|" + c.Token))
	return hex.EncodeToString(m.Sum(nil)), nil
}

// cookieMatches tells whether c's HMAC is one WordPress could have minted
// for userPass: with passFrag, or on a pre-6.8 database with altPassFrag.
func (s *Salts) cookieMatches(c AuthCookie, userPass, scheme string, v Version) (bool, error) {
	want, err := s.CookieHMAC(c, userPass, scheme, v)
	if err != nil {
		return false, err
	}
	if ctEqual(want, c.HMAC) {
		return true, nil
	}
	alt, ok := altPassFrag(userPass, v)
	if !ok {
		return false, nil
	}
	want, err = s.cookieHMAC(c, alt, scheme)
	return err == nil && ctEqual(want, c.HMAC), err
}

// Expired applies wp_validate_auth_cookie's expiry rule: POST (and Ajax)
// requests get a grace hour.
func (c AuthCookie) Expired(now time.Time, post bool) bool {
	limit, ok := c.lastSecond(post)
	return !ok || limit < now.Unix()
}

// lastSecond is the last second (unix) the cookie is good for, for a POST
// or not; false when its expiration is no number.
func (c AuthCookie) lastSecond(post bool) (int64, bool) {
	limit, err := strconv.ParseInt(c.Expiration, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(c.Expiration, 64)
		if ferr != nil || math.IsNaN(f) {
			return 0, false
		}
		limit = int64(f)
	}
	if post {
		limit += 3600
	}
	return limit, true
}

// NonceTickEnd is the first moment NonceTick(now) has passed: a nonce made
// at now changes then.
func NonceTickEnd(now time.Time) time.Time {
	return time.Unix(NonceTick(now)*43200+1, 0)
}

// TokenVerifier is the session_tokens key of a session token.
func TokenVerifier(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NonceTick is wp_nonce_tick() for the default nonce life of a day.
func NonceTick(now time.Time) int64 {
	return int64(math.Ceil(float64(now.Unix()) / 43200))
}

// Nonce is wp_create_nonce(action) for a user and session token at tick.
func (s *Salts) Nonce(tick int64, action string, uid int64, token string) (string, error) {
	h, err := s.Hash(strconv.FormatInt(tick, 10)+"|"+action+"|"+strconv.FormatInt(uid, 10)+"|"+token, SchemeNonce)
	if err != nil {
		return "", err
	}
	return h[20:30], nil
}

// VerifyNonce is wp_verify_nonce(): 1 for the current tick, 2 for the one
// before, 0 when it does not verify.
func (s *Salts) VerifyNonce(nonce, action string, uid int64, token string, now time.Time) int {
	if nonce == "" {
		return 0
	}
	tick := NonceTick(now)
	for age := int64(0); age < 2; age++ {
		want, err := s.Nonce(tick-age, action, uid, token)
		if err != nil {
			return 0
		}
		if ctEqual(want, nonce) {
			return int(age) + 1
		}
	}
	return 0
}

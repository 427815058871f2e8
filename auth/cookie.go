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

// passFrag is the part of user_pass bound into cookies.
func passFrag(userPass string, v Version) string {
	if v == WP68 && !strings.HasPrefix(userPass, "$P$") && !strings.HasPrefix(userPass, "$2y$") {
		if len(userPass) <= 4 {
			return userPass
		}
		return userPass[len(userPass)-4:]
	}
	if len(userPass) <= 8 {
		return ""
	}
	return userPass[8:min(12, len(userPass))]
}

// CookieHMAC computes the HMAC of a cookie for the given user_pass.
func (s *Salts) CookieHMAC(c AuthCookie, userPass, scheme string, v Version) (string, error) {
	key, err := s.Hash(c.Login+"|"+passFrag(userPass, v)+"|"+c.Expiration+"|"+c.Token, scheme)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(c.Login + "|" + c.Expiration + "|" + c.Token))
	return hex.EncodeToString(m.Sum(nil)), nil
}

// Expired applies wp_validate_auth_cookie's expiry rule: POST (and Ajax)
// requests get a grace hour.
func (c AuthCookie) Expired(now time.Time, post bool) bool {
	limit, err := strconv.ParseInt(c.Expiration, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(c.Expiration, 64)
		if ferr != nil || math.IsNaN(f) {
			return true
		}
		limit = int64(f)
	}
	if post {
		limit += 3600
	}
	return limit < now.Unix()
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

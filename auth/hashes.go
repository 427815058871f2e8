package auth

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/crypto/blake2b"
)

// Version is the WordPress generation whose rules apply: the hashing and
// cookie rules changed in 6.8.
type Version int

// The two generations: up to 6.7, and 6.8 with its new hashes and cookies.
const (
	WP61 Version = iota // up to 6.7
	WP68                // 6.8 and later
)

// dbVersion68 is the db_version of WordPress 6.8.0; sites at or above it
// follow the 6.8 rules.
const dbVersion68 = 60421

// versionOf maps the db_version option to a Version.
func versionOf(dbVersion int64) Version {
	if dbVersion >= dbVersion68 {
		return WP68
	}
	return WP61
}

// checkPassword is wp_check_password(): whether password matches the
// stored hash, in the order and with the formats the version accepts
// (md5 of 32 hex or fewer, phpass $P$ (and $H$ before 6.8), 6.8's $wp
// bcrypt with pre-hash, plain bcrypt); a password over maxPasswordBytes
// never matches anything but an md5 hash. Other crypt() formats (sha512-crypt,
// argon2) are not accepted by the sidecar.
func checkPassword(password, stored string, v Version) bool {
	switch {
	case len(stored) <= 32:
		sum := md5.Sum([]byte(password))
		return ctEqual(hex.EncodeToString(sum[:]), stored)
	case len(password) > maxPasswordBytes:
		// Every version refuses these before hashing: 6.8 in
		// wp_check_password, earlier ones in phpass's checkPassword
		// (CVE-2014-9034: 8192 MD5 rounds over a long password is a
		// denial of service).
		return false
	case strings.HasPrefix(stored, "$wp"):
		return v == WP68 && bcrypt.CompareHashAndPassword([]byte(stored[3:]), []byte(wpPrehash(password))) == nil
	case strings.HasPrefix(stored, "$P$") || (v == WP61 && strings.HasPrefix(stored, "$H$")):
		return checkPHPass(password, stored)
	case strings.HasPrefix(stored, "$2y$") || strings.HasPrefix(stored, "$2a$") || strings.HasPrefix(stored, "$2b$"):
		return bcrypt.CompareHashAndPassword([]byte(stored), []byte(password)) == nil
	}
	return false
}

// maxPasswordBytes is the longest password WordPress hashes to check it.
const maxPasswordBytes = 4096

// wpPrehash is 6.8's bcrypt input: base64(HMAC-SHA384("wp-sha384", pw)).
func wpPrehash(password string) string {
	m := hmac.New(sha512.New384, []byte("wp-sha384"))
	m.Write([]byte(password))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

const itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// checkPHPass verifies a portable phpass hash ($P$ or $H$).
func checkPHPass(password, stored string) bool {
	h, ok := phpassCrypt(password, stored)
	return ok && ctEqual(h, stored)
}

// phpassCrypt is phpass's crypt_private: the portable hash of password
// with the setting (prefix, cost, salt) that stored begins with.
func phpassCrypt(password, stored string) (string, bool) {
	if len(stored) != 34 {
		return "", false
	}
	countLog2 := strings.IndexByte(itoa64, stored[3])
	if countLog2 < 7 || countLog2 > 30 {
		return "", false
	}
	salt := stored[4:12]
	h := md5.Sum([]byte(salt + password))
	buf := make([]byte, 0, md5.Size+len(password))
	for n := 1 << countLog2; n > 0; n-- {
		buf = append(append(buf[:0], h[:]...), password...)
		h = md5.Sum(buf)
	}
	return stored[:12] + encode64(h[:]), true
}

// encode64 is phpass's little-endian base-64.
func encode64(in []byte) string {
	var b strings.Builder
	for i := 0; i < len(in); {
		v := int(in[i])
		i++
		b.WriteByte(itoa64[v&63])
		if i < len(in) {
			v |= int(in[i]) << 8
		}
		b.WriteByte(itoa64[(v>>6)&63])
		if i >= len(in) {
			break
		}
		i++
		if i < len(in) {
			v |= int(in[i]) << 16
		}
		b.WriteByte(itoa64[(v>>12)&63])
		if i >= len(in) {
			break
		}
		i++
		b.WriteByte(itoa64[(v>>18)&63])
	}
	return b.String()
}

// fastHashKey is the BLAKE2b key of wp_fast_hash().
var fastHashKey = []byte("wp_fast_hash_6.8+")

// FastHash is 6.8's wp_fast_hash(): "$generic$" and the base64url of a
// 30-byte BLAKE2b keyed with "wp_fast_hash_6.8+".
func FastHash(message string) string {
	h, _ := blake2b.New(30, fastHashKey)
	h.Write([]byte(message))
	return "$generic$" + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// checkApplicationPassword verifies an application password (already
// stripped to [A-Za-z0-9]) against a stored item hash.
func checkApplicationPassword(password, stored string, v Version) bool {
	if strings.HasPrefix(stored, "$generic$") {
		return v == WP68 && ctEqual(FastHash(password), stored)
	}
	return checkPassword(password, stored, v)
}

// stripApplicationPassword removes everything outside [A-Za-z0-9], as
// WordPress does before checking (so "abcd EFGH …" works).
func stripApplicationPassword(pw string) string {
	var b strings.Builder
	for i := 0; i < len(pw); i++ {
		c := pw[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func ctEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

package auth

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/crypto/blake2b"

	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// Version is the WordPress generation the site's db_version names: the
// rules that changed in 6.8 and cannot be told from the data itself.
//
// db_version is all the sidecar can see, and it lags the PHP files: after
// a package upgrade to 6.8 or later and before upgrade.php has run, the
// files are 6.8's (they write $wp$ and $generic$ hashes, mint cookies by
// 6.8's pass_frag rule) while db_version is still the old one. So what a
// stored hash's format settles is decided by its format, whatever
// db_version says, and Version decides only where the format leaves the
// question open:
//   - every hash is verified by its format (checkPassword,
//     checkApplicationPassword), except phpBB's $H$, which 6.8 dropped;
//   - a cookie's pass_frag follows the format, except for formats neither
//     generation writes, where a pre-6.8 database accepts either rule
//     (passFrag, altPassFrag in cookie.go);
//   - what a login rehashes to (needsRehash).
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
// stored hash. Its order is 6.8's — md5 of 32 characters or fewer; then
// nothing for a password over maxPasswordBytes; $wp (6.8's bcrypt of a
// pre-hash); phpass $P$; anything else password_verify() reads — and 6.1
// agrees wherever both can read a format (md5 first, phpass, and crypt()
// for the rest, with the same length limit).
//
// Where they disagree, the format decides, not db_version:
//   - $wp… and argon2 are refused by 6.1 (crypt() cannot read them) and
//     accepted by 6.8. Only 6.8 or later writes them (argon2 through the
//     wp_hash_password_algorithm filter), so on a database still at 6.1's
//     db_version they are the sign of 6.8+ files not yet upgraded, which
//     accept them. The other way round — files downgraded to 6.1 under
//     hashes 6.8 wrote — WordPress refuses the right password and the
//     sidecar lets it in: lenient, never a wrong password accepted.
//   - $H$ (phpBB's name for phpass) is accepted by 6.1 and refused by 6.8
//     (password_verify() does not know it). Neither writes it; a 6.1 site
//     holds it after a phpBB import and keeps it, so it follows the
//     version: accepted while db_version is 6.1's. Un-upgraded 6.8 files
//     would refuse it; the sidecar is lenient there too.
//
// Formats password_verify() reads that the sidecar does not: bcrypt $2x$
// with a password that has bytes over 0x7f (PHP's buggy-sign variant; 7-bit
// passwords are accepted), DES and extended DES crypt (13 and 20
// characters: WordPress takes any hash of 32 or fewer as md5, so these
// never verify there either), argon2 version 16 (v=16 or no v=), and
// hashes whose costs are over the bounds below (maxBcryptCost,
// shaCryptMaxRounds, phpassMaxCountLog2, argon2MaxMemoryKiB, argon2MaxWork,
// and a MemoryBudget's size).
func checkPassword(c checker, password, stored string, v Version) bool {
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
		return passwordVerify(c, wpPrehash(password), stored[3:])
	case strings.HasPrefix(stored, "$P$"):
		return checkPHPass(c, password, stored)
	case strings.HasPrefix(stored, "$H$"):
		return v == WP61 && checkPHPass(c, password, stored)
	}
	return passwordVerify(c, password, stored)
}

// checker is what a password check runs with: the context of the request
// it is for, and the memory budget of argon2 checks. A check whose client
// is gone stops — or, where the hash's code cannot be interrupted
// (bcrypt, argon2), never starts — so a flood of requests abandoned at
// once leaves no work behind. busy, when set, is told of a check that
// gave up waiting for memory (argon2MaxWait).
type checker struct {
	ctx    context.Context
	argon2 *MemoryBudget
	busy   *bool
}

// gone reports a check's client gone; the loops of the slow formats ask
// it every stopEvery rounds (a few milliseconds of work at most).
func (c checker) gone() bool { return c.ctx.Err() != nil }

const stopEvery = 1 << 12

// verdictless is why a check that refused reached no verdict — its client
// gone, or no memory free in time (wpjson.ErrBusy) — or nil: a refusal
// is then a wrong password.
func (c checker) verdictless() error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	if c.busy != nil && *c.busy {
		return wpjson.ErrBusy
	}
	return nil
}

// passwordVerify is PHP's password_verify() for the formats the sidecar
// computes: bcrypt, argon2i and argon2id, SHA-crypt, md5-crypt.
func passwordVerify(c checker, password, stored string) bool {
	if c.gone() {
		return false
	}
	switch {
	case strings.HasPrefix(stored, "$2y$"), strings.HasPrefix(stored, "$2a$"), strings.HasPrefix(stored, "$2b$"):
		return checkBcrypt(password, stored)
	case strings.HasPrefix(stored, "$2x$"):
		// $2x$ is crypt_blowfish's old sign-extension bug, kept for
		// hashes made with it: the same as $2a$ for 7-bit passwords.
		return isASCII(password) && checkBcrypt(password, stored)
	case strings.HasPrefix(stored, "$argon2i$"), strings.HasPrefix(stored, "$argon2id$"):
		return checkArgon2(c, password, stored)
	case strings.HasPrefix(stored, "$5$"), strings.HasPrefix(stored, "$6$"):
		return checkSHACrypt(c, password, stored)
	case strings.HasPrefix(stored, "$1$"):
		return checkMD5Crypt(password, stored)
	}
	return false
}

// maxBcryptCost bounds the bcrypt cost the sidecar computes: 2^16 rounds
// take about four seconds of one core (WordPress writes 10, PHP 8.4's
// default is 12); a stored hash asking for more (crypt() allows 31, some
// days of CPU) is refused rather than computed.
const maxBcryptCost = 16

// checkBcrypt verifies a $2?$NN$ hash whose cost is within the bound.
// Like PHP's, the comparison uses the password's first 72 bytes.
func checkBcrypt(password, stored string) bool {
	if len(stored) < 7 || stored[6] != '$' {
		return false
	}
	cost, ok := decimal(strings.TrimPrefix(stored[4:6], "0"))
	if !ok || cost > maxBcryptCost {
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(stored), []byte(password)) == nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
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
func checkPHPass(c checker, password, stored string) bool {
	h, ok := phpassCrypt(c, password, stored)
	return ok && ctEqual(h, stored)
}

// phpassMaxCountLog2 bounds phpass's cost: 2^16 MD5 rounds, eight times
// what WordPress writes ($P$B, 2^13). phpass itself reads up to 2^30 ($P$S),
// hours of one core with a 4,096-byte password; at the bound, such a
// password costs about half a second. A stored hash asking for more is
// refused rather than computed.
const phpassMaxCountLog2 = 16

// phpassCrypt is phpass's crypt_private: the portable hash of password
// with the setting (prefix, cost, salt) that stored begins with.
func phpassCrypt(c checker, password, stored string) (string, bool) {
	if len(stored) != 34 {
		return "", false
	}
	countLog2 := strings.IndexByte(itoa64, stored[3])
	if countLog2 < 7 || countLog2 > phpassMaxCountLog2 {
		return "", false
	}
	salt := stored[4:12]
	h := md5.Sum([]byte(salt + password))
	buf := make([]byte, 0, md5.Size+len(password))
	for n := 1 << countLog2; n > 0; n-- {
		if n%stopEvery == 0 && c.gone() {
			return "", false
		}
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
// stripped to [A-Za-z0-9]) against a stored item hash, as 6.8's
// WP_Application_Passwords::check_password does: $generic$ by
// wp_fast_hash(), anything else by wp_check_password(). 6.1 reads $generic$
// as a phpass hash and refuses it; only 6.8 or later writes one, so its
// presence under an older db_version means files already upgraded (see
// checkPassword), and it is accepted by its format.
func checkApplicationPassword(c checker, password, stored string, v Version) bool {
	if strings.HasPrefix(stored, "$generic$") {
		return ctEqual(FastHash(password), stored)
	}
	return checkPassword(c, password, stored, v)
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

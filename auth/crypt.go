package auth

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"strconv"
	"strings"
)

// The crypt() formats password_verify() reads besides bcrypt: SHA-crypt
// and md5-crypt. 6.1's phpass falls back to crypt() for any hash that is
// not phpass, and 6.8's wp_check_password ends in password_verify(), so
// both generations accept them (users migrated from a system that wrote
// them).
//
// SHA-crypt ($5$ SHA-256, $6$ SHA-512, Drepper's "Unix crypt using
// SHA-256 and SHA-512"):
//
//	$6$[rounds=N$]salt$hash
//
// The salt is at most 16 bytes (longer ones are cut, so the computed
// string differs from the stored one and the check fails, as in PHP); N is
// 5000 when absent. PHP 8.2 refuses N outside 1000…999,999,999 (it used to
// clamp); the sidecar also refuses N over shaCryptMaxRounds: ten million
// rounds take about five seconds of one core, and no tool writes more
// than a million by default.
const (
	shaCryptDefaultRounds = 5000
	shaCryptMinRounds     = 1000
	shaCryptMaxRounds     = 10_000_000
	shaCryptMaxSalt       = 16
)

// shaCryptVariant is what differs between $5$ and $6$.
type shaCryptVariant struct {
	prefix string
	new    func() hash.Hash
	size   int
	// order is the order in which the final digest's bytes are encoded,
	// three at a time (the last group shorter).
	order []int
}

var (
	shaCrypt256 = shaCryptVariant{"$5$", sha256.New, sha256.Size, []int{
		0, 10, 20, 21, 1, 11, 12, 22, 2, 3, 13, 23, 24, 4, 14, 15, 25, 5, 6, 16, 26, 27, 7, 17, 18, 28, 8, 9, 19, 29, 31, 30}}
	shaCrypt512 = shaCryptVariant{"$6$", sha512.New, sha512.Size, []int{
		0, 21, 42, 22, 43, 1, 44, 2, 23, 3, 24, 45, 25, 46, 4, 47, 5, 26, 6, 27, 48, 28, 49, 7, 50, 8, 29, 9, 30, 51, 31, 52, 10,
		53, 11, 32, 12, 33, 54, 34, 55, 13, 56, 14, 35, 15, 36, 57, 37, 58, 16, 59, 17, 38, 18, 39, 60, 40, 61, 19, 62, 20, 41, 63}}
)

// checkSHACrypt is password_verify() for a $5$ or $6$ hash: crypt() of
// the password with the stored setting must give the stored string.
func checkSHACrypt(c checker, password, stored string) bool {
	v := shaCrypt512
	if strings.HasPrefix(stored, "$5$") {
		v = shaCrypt256
	}
	got, ok := v.crypt(c, password, stored)
	return ok && ctEqual(got, stored)
}

// crypt is crypt(password, setting) for the variant, or false where PHP's
// crypt() fails ("*0"), the rounds are over the sidecar's bound, or c's
// client is gone.
func (v shaCryptVariant) crypt(c checker, password, setting string) (string, bool) {
	rounds, custom, salt, ok := v.setting(setting)
	if !ok {
		return "", false
	}
	pw := []byte(password)

	// Digest B: password, salt, password.
	h := v.new()
	h.Write(pw)
	h.Write([]byte(salt))
	h.Write(pw)
	b := h.Sum(nil)

	// Digest A: password, salt, B repeated over the password's length,
	// then, for each bit of the length from the lowest, B or the password.
	h.Reset()
	h.Write(pw)
	h.Write([]byte(salt))
	h.Write(repeatTo(b, len(pw)))
	for n := len(pw); n > 0; n >>= 1 {
		if n&1 != 0 {
			h.Write(b)
		} else {
			h.Write(pw)
		}
	}
	a := h.Sum(nil)

	// P: the password repeated len(password) times, hashed, stretched to
	// the password's length; S likewise from the salt, 16 + A[0] times.
	h.Reset()
	for range len(pw) {
		h.Write(pw)
	}
	p := repeatTo(h.Sum(nil), len(pw))
	h.Reset()
	for range 16 + int(a[0]) {
		h.Write([]byte(salt))
	}
	s := repeatTo(h.Sum(nil), len(salt))

	// The rounds.
	d := a
	for i := range rounds {
		if i%stopEvery == stopEvery-1 && c.gone() {
			return "", false
		}
		h.Reset()
		if i&1 != 0 {
			h.Write(p)
		} else {
			h.Write(d)
		}
		if i%3 != 0 {
			h.Write(s)
		}
		if i%7 != 0 {
			h.Write(p)
		}
		if i&1 != 0 {
			h.Write(d)
		} else {
			h.Write(p)
		}
		d = h.Sum(d[:0])
	}

	var out strings.Builder
	out.WriteString(v.prefix)
	if custom {
		out.WriteString("rounds=" + strconv.Itoa(rounds) + "$")
	}
	out.WriteString(salt)
	out.WriteByte('$')
	for i := 0; i < len(v.order); i += 3 {
		var w uint32
		n := 4
		switch left := len(v.order) - i; {
		case left >= 3:
			w = uint32(d[v.order[i]])<<16 | uint32(d[v.order[i+1]])<<8 | uint32(d[v.order[i+2]])
		case left == 2:
			w, n = uint32(d[v.order[i]])<<8|uint32(d[v.order[i+1]]), 3
		default:
			w, n = uint32(d[v.order[i]]), 2
		}
		for range n {
			out.WriteByte(itoa64[w&63])
			w >>= 6
		}
	}
	return out.String(), true
}

// setting reads the rounds and the salt of a setting, or false where PHP's
// crypt() fails or the rounds are over the sidecar's bound.
func (v shaCryptVariant) setting(setting string) (rounds int, custom bool, salt string, ok bool) {
	rest, ok := strings.CutPrefix(setting, v.prefix)
	if !ok {
		return 0, false, "", false
	}
	rounds = shaCryptDefaultRounds
	if r, ok := strings.CutPrefix(rest, "rounds="); ok {
		// crypt() reads rounds only where a number ends at the next '$';
		// otherwise "rounds=…" is where the salt begins.
		if digits, after, found := strings.Cut(r, "$"); found && digits != "" && strings.Trim(digits, "0123456789") == "" {
			n, err := strconv.ParseUint(digits, 10, 64)
			if err != nil || n < shaCryptMinRounds || n > shaCryptMaxRounds {
				return 0, false, "", false
			}
			rounds, custom, rest = int(n), true, after
		}
	}
	salt, _, _ = strings.Cut(rest, "$")
	return rounds, custom, salt[:min(len(salt), shaCryptMaxSalt)], true
}

// repeatTo is d repeated (and cut) to n bytes.
func repeatTo(d []byte, n int) []byte {
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, d[:min(len(d), n-len(out))]...)
	}
	return out
}

// checkMD5Crypt is password_verify() for a $1$ hash (Poul-Henning Kamp's
// md5-crypt, 1000 MD5 rounds, at most 8 bytes of salt), which crypt()
// reads in both generations.
func checkMD5Crypt(password, stored string) bool {
	got, ok := md5Crypt(password, stored)
	return ok && ctEqual(got, stored)
}

// md5Crypt is crypt(password, setting) for a $1$ setting.
func md5Crypt(password, setting string) (string, bool) {
	rest, ok := strings.CutPrefix(setting, "$1$")
	if !ok {
		return "", false
	}
	salt, _, _ := strings.Cut(rest, "$")
	salt = salt[:min(len(salt), 8)]
	pw := []byte(password)

	alt := md5.Sum([]byte(password + salt + password))
	ctx := append([]byte(password+"$1$"+salt), repeatTo(alt[:], len(pw))...)
	for n := len(pw); n > 0; n >>= 1 {
		if n&1 != 0 {
			ctx = append(ctx, 0)
		} else {
			ctx = append(ctx, pw[0])
		}
	}
	final := md5.Sum(ctx)
	buf := make([]byte, 0, 2*len(pw)+len(salt)+md5.Size)
	for i := range 1000 {
		buf = buf[:0]
		if i&1 != 0 {
			buf = append(buf, pw...)
		} else {
			buf = append(buf, final[:]...)
		}
		if i%3 != 0 {
			buf = append(buf, salt...)
		}
		if i%7 != 0 {
			buf = append(buf, pw...)
		}
		if i&1 != 0 {
			buf = append(buf, final[:]...)
		} else {
			buf = append(buf, pw...)
		}
		final = md5.Sum(buf)
	}

	var out strings.Builder
	out.WriteString("$1$" + salt + "$")
	for _, g := range [][3]int{{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}} {
		w := uint32(final[g[0]])<<16 | uint32(final[g[1]])<<8 | uint32(final[g[2]])
		for range 4 {
			out.WriteByte(itoa64[w&63])
			w >>= 6
		}
	}
	w := uint32(final[11])
	for range 2 {
		out.WriteByte(itoa64[w&63])
		w >>= 6
	}
	return out.String(), true
}

package auth

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"
	"golang.org/x/sync/semaphore"
)

// Argon2 hashes are what password_hash() writes for PASSWORD_ARGON2I and
// PASSWORD_ARGON2ID, the algorithms the wp_hash_password_algorithm filter
// can choose on 6.8 and later (without the $wp prefix: only bcrypt is
// pre-hashed). password_verify() reads the PHC string
//
//	$argon2id$v=19$m=65536,t=4,p=1$<salt>$<hash>
//
// with salt and hash in standard base64 without padding, the parameters in
// that order, as plain decimals. The parser below accepts exactly what PHP
// 8.2's password_verify() was seen to accept (TestCheckPassword_Formats in
// hashformat_test.go): no leading zeros or signs, no padding, no
// non-canonical trailing bits, no keyid or data parameters, version 19
// (0x13) only — the only version golang.org/x/crypto/argon2 computes and
// the only one PHP writes.
//
// The parameters come from the stored hash, so they decide what a check
// costs: memory (m, KiB) and passes (t) are bounded here. Stored hashes
// are written by the site, not by the caller, so the bounds are generous —
// they refuse only what no configuration means: memory over 1 GiB, or
// m·t over 16 times PHP's default (64 MiB × 4 passes; a check of that size
// takes about five seconds of one core), which WordPress would compute
// and the sidecar refuses. And since every check holds its m KiB until it
// ends, the checks running at once share a MemoryBudget: a burst of wrong
// passwords against an argon2 account waits for memory instead of
// exhausting it (PHP-FPM bounds the same burst by its worker count), and
// a check whose client has gone while it waited never starts.
const (
	argon2MaxMemoryKiB   = 1 << 20        // 1 GiB
	argon2MaxWork        = 16 * 65536 * 4 // m·t: 16 × PHP's default
	argon2MaxParallelism = 255            // what x/crypto/argon2 takes (uint8)
	argon2MinSaltBytes   = 8              // libargon2's ARGON2_MIN_SALT_LENGTH
	argon2MinHashBytes   = 4              // libargon2's ARGON2_MIN_OUTLEN
	argon2MaxBytes       = 1024           // salt or hash: PHP writes 16 and 32
)

// MemoryBudget is the memory the argon2 checks running at once may hold
// together. It is shared by every site of the process and sized from the
// process's own memory limit (cmd gives half of it, at most 1 GiB: a
// check's memory is garbage only after it ends, and the rest of the
// process needs its share), so that a burst of checks cannot push the
// process past that limit: 40
// concurrent checks of PHP's default cost (64 MiB each) once took an
// instance with a 256 MiB limit to 551 MB. A hash asking for more memory
// than the whole budget is refused, as one over the bounds above is.
type MemoryBudget struct {
	kib  int64
	sem  *semaphore.Weighted
	wait time.Duration // a check's longest wait for memory (argon2MaxWait)
}

// NewMemoryBudget is a budget of the given bytes, at most
// argon2MaxMemoryKiB, and at least one KiB.
func NewMemoryBudget(bytes int64) *MemoryBudget {
	kib := max(min(bytes>>10, argon2MaxMemoryKiB), 1)
	return &MemoryBudget{kib: kib, sem: semaphore.NewWeighted(kib), wait: argon2MaxWait}
}

// argon2Params is a parsed PHC string.
type argon2Params struct {
	id           bool // argon2id, else argon2i
	memory, time uint32
	threads      uint8
	salt, hash   []byte
}

// b64 is base64 as libargon2 reads it: standard alphabet, no padding,
// trailing bits zero.
var b64 = base64.RawStdEncoding.Strict()

// parseArgon2 reads stored as password_verify() does, within the bounds.
func parseArgon2(stored string) (argon2Params, bool) {
	var p argon2Params
	rest, ok := strings.CutPrefix(stored, "$argon2id$")
	if ok {
		p.id = true
	} else if rest, ok = strings.CutPrefix(stored, "$argon2i$"); !ok {
		return p, false
	}
	parts := strings.Split(rest, "$")
	if len(parts) != 4 || parts[0] != "v=19" {
		return p, false
	}
	m, t, par, ok := parseArgon2Costs(parts[1])
	if !ok || m > argon2MaxMemoryKiB || t < 1 || par < 1 || par > argon2MaxParallelism ||
		m < 8*par || m*t > argon2MaxWork {
		return p, false
	}
	salt, err := b64.DecodeString(parts[2])
	if err != nil || len(salt) < argon2MinSaltBytes || len(salt) > argon2MaxBytes {
		return p, false
	}
	hash, err := b64.DecodeString(parts[3])
	if err != nil || len(hash) < argon2MinHashBytes || len(hash) > argon2MaxBytes {
		return p, false
	}
	p.memory, p.time, p.threads, p.salt, p.hash = uint32(m), uint32(t), uint8(par), salt, hash
	return p, true
}

// parseArgon2Costs reads "m=…,t=…,p=…".
func parseArgon2Costs(s string) (m, t, p uint64, ok bool) {
	f := strings.Split(s, ",")
	if len(f) != 3 {
		return 0, 0, 0, false
	}
	var vals [3]uint64
	for i, name := range []string{"m=", "t=", "p="} {
		v, found := strings.CutPrefix(f[i], name)
		if !found {
			return 0, 0, 0, false
		}
		if vals[i], ok = decimal(v); !ok {
			return 0, 0, 0, false
		}
	}
	return vals[0], vals[1], vals[2], true
}

// decimal reads digits without sign or leading zero, at most 10 of them.
func decimal(s string) (uint64, bool) {
	if s == "" || len(s) > 10 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// argon2MaxWait bounds a check's wait for memory: past it the request is
// answered busy (503, Retry-After), not kept waiting behind a queue an
// attacker made, however long.
const argon2MaxWait = 10 * time.Second

// checkArgon2 is password_verify() for an argon2i or argon2id hash. It
// waits for its memory within c's budget, and gives up (false) when c's
// client is gone first or argon2MaxWait has passed: x/crypto/argon2 cannot be stopped once started,
// so a check starts only for a client still there.
func checkArgon2(c checker, password, stored string) bool {
	p, ok := parseArgon2(stored)
	if !ok || int64(p.memory) > c.argon2.kib {
		return false
	}
	wait, cancel := context.WithTimeout(c.ctx, c.argon2.wait)
	err := c.argon2.sem.Acquire(wait, int64(p.memory))
	cancel()
	if err != nil {
		if c.ctx.Err() == nil && c.busy != nil {
			*c.busy = true
		}
		return false
	}
	defer c.argon2.sem.Release(int64(p.memory))
	if c.ctx.Err() != nil { // Acquire may win a race with the end of ctx
		return false
	}
	var got []byte
	if p.id {
		got = argon2.IDKey([]byte(password), p.salt, p.time, p.memory, p.threads, uint32(len(p.hash)))
	} else {
		got = argon2.Key([]byte(password), p.salt, p.time, p.memory, p.threads, uint32(len(p.hash)))
	}
	return subtle.ConstantTimeCompare(got, p.hash) == 1
}

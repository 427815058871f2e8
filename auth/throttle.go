package auth

import (
	"math"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Rate is a token bucket: Burst failures at once, refilled at Burst per
// Per. A zero Burst turns the limit off.
type Rate struct {
	Burst int
	Per   time.Duration
}

// Throttled is what Throttle.Failed reports when a key has just run out of
// attempts: the first time per episode, for one log line a fail2ban-style
// tool can match.
type Throttled struct {
	Scope string // "ip" or "account"
	Key   string
}

// maxThrottleKeys bounds each set of buckets: beyond it, refilled buckets
// are dropped, then arbitrary ones (an attacker with many addresses gains
// at most their forgetting).
const maxThrottleKeys = 1 << 16

// Throttle limits failed authentication per client address (IPv6 by /64,
// the block a single host usually holds) and per account. Failures take a
// token; a key without one is refused before any credential is checked.
type Throttle struct {
	ip, account *buckets
}

// NewThrottle builds the limits; a zero Rate turns one off.
func NewThrottle(perIP, perAccount Rate) *Throttle {
	return &Throttle{ip: newBuckets(perIP), account: newBuckets(perAccount)}
}

// ClientKey is the key of a client address.
func ClientKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// userAccount is the account key of a user found; unknownAccount is the
// one key every login that finds no user shares, so that guesses at
// unknown logins count without a bucket each.
func userAccount(id int64) string { return "user:" + strconv.FormatInt(id, 10) }

const unknownAccount = "unknown"

// IPWait is how long the client must wait before its next attempt, or 0
// (a nil Throttle limits nothing; an unknown client, "", is not counted).
func (t *Throttle) IPWait(client string, now time.Time) time.Duration {
	if t == nil || client == "" {
		return 0
	}
	return t.ip.wait(client, now)
}

// AccountWait is the same for an account.
func (t *Throttle) AccountWait(account string, now time.Time) time.Duration {
	if t == nil {
		return 0
	}
	return t.account.wait(account, now)
}

// Hold takes one of client's attempts and one of account's before a
// password check runs, so that the checks in flight count against both
// budgets as failures do: without it, a burst of concurrent wrong
// passwords all ran, since a failure is known only once its check ends.
// When either has none left, nothing is taken and it returns which
// ("ip" or "account") and how long to wait. A check that succeeds gives
// both back (Release); one that fails keeps them as the failure's
// (Failed with held).
func (t *Throttle) Hold(client, account string, now time.Time) (scope string, wait time.Duration) {
	if t == nil {
		return "", 0
	}
	if client != "" {
		if wait := t.ip.hold(client, now); wait > 0 {
			return "ip", wait
		}
	}
	if wait := t.account.hold(account, now); wait > 0 {
		t.Release(client, "", now)
		return "account", wait
	}
	return "", 0
}

// Release gives back the attempts Hold took, for a check that succeeded.
func (t *Throttle) Release(client, account string, now time.Time) {
	if t == nil {
		return
	}
	if client != "" {
		t.ip.release(client, now)
	}
	if account != "" {
		t.account.release(account, now)
	}
}

// Failed records a failed attempt by client for account (account may be
// empty) and reports the keys it has just run out of attempts. held says
// both attempts were taken already, by Hold.
func (t *Throttle) Failed(client, account string, held bool, now time.Time) []Throttled {
	if t == nil {
		return nil
	}
	var out []Throttled
	if client != "" && t.ip.take(client, !held, now) { // "": the client is not known
		out = append(out, Throttled{"ip", client})
	}
	if account != "" && t.account.take(account, !held, now) {
		out = append(out, Throttled{"account", account})
	}
	return out
}

type bucket struct {
	tokens float64
	at     time.Time
	empty  bool // reported as run out, until it refills
}

type buckets struct {
	rate  Rate
	perNS float64 // tokens per nanosecond
	mu    sync.Mutex
	m     map[string]*bucket
}

func newBuckets(r Rate) *buckets {
	b := &buckets{rate: r, m: map[string]*bucket{}}
	if r.Burst > 0 {
		b.perNS = float64(r.Burst) / float64(r.Per)
	}
	return b
}

// refill brings k's tokens up to now; it reports a bucket that is full
// again (and so worth forgetting).
func (b *buckets) refill(k *bucket, now time.Time) bool {
	if d := now.Sub(k.at); d > 0 {
		k.tokens = math.Min(float64(b.rate.Burst), k.tokens+float64(d)*b.perNS)
		k.at = now
	}
	if k.tokens >= 1 {
		k.empty = false
	}
	return k.tokens >= float64(b.rate.Burst)
}

func (b *buckets) wait(key string, now time.Time) time.Duration {
	if b.rate.Burst == 0 {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.m[key]
	if k == nil {
		return 0
	}
	b.refill(k, now)
	return b.waitOf(k)
}

// waitOf is how long k has until its next token (0: it has one).
func (b *buckets) waitOf(k *bucket) time.Duration {
	if k.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - k.tokens) / b.perNS)
}

// take spends one token of key (unless spent, by hold); it reports the
// moment the bucket runs out.
func (b *buckets) take(key string, spend bool, now time.Time) bool {
	if b.rate.Burst == 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.bucket(key, now)
	if spend && k.tokens >= 1 {
		k.tokens--
	}
	if k.tokens < 1 && !k.empty {
		k.empty = true
		return true
	}
	return false
}

// hold spends one token of key if there is one; else it tells the wait.
func (b *buckets) hold(key string, now time.Time) time.Duration {
	if b.rate.Burst == 0 {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.bucket(key, now)
	if wait := b.waitOf(k); wait > 0 {
		return wait
	}
	k.tokens--
	return 0
}

// release gives a token back to key.
func (b *buckets) release(key string, now time.Time) {
	if b.rate.Burst == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.bucket(key, now)
	k.tokens = math.Min(float64(b.rate.Burst), k.tokens+1)
}

// bucket is key's bucket refilled to now, made full when there is none.
// The caller holds mu.
func (b *buckets) bucket(key string, now time.Time) *bucket {
	k := b.m[key]
	if k == nil {
		if len(b.m) >= maxThrottleKeys {
			b.forget(now)
		}
		k = &bucket{tokens: float64(b.rate.Burst), at: now}
		b.m[key] = k
	}
	b.refill(k, now)
	return k
}

// forget drops refilled buckets, then arbitrary ones down to three
// quarters of the bound.
func (b *buckets) forget(now time.Time) {
	for key, k := range b.m {
		if b.refill(k, now) {
			delete(b.m, key)
		}
	}
	for key := range b.m {
		if len(b.m) <= maxThrottleKeys*3/4 {
			break
		}
		delete(b.m, key)
	}
}

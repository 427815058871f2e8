package auth

import (
	"container/list"
	"crypto/rand"
	"crypto/sha256"
	"slices"
	"strconv"
	"sync"
)

// checkCached runs an expensive hash check once per credential and stored
// hash: a success is remembered under a keyed hash of the credential, never
// the credential, and only while the stored hash is the same. The check
// runs only when may says so; otherwise only a remembered success counts.
func (a *Authenticator) checkCached(kind string, userID int64, password, stored string, may func() bool, check func() bool) bool {
	key := a.checks.key(kind, userID, password, stored)
	if a.checks.has(key) {
		return true
	}
	if !may() || !check() {
		return false
	}
	a.checks.add(userID, key)
	return true
}

// The bounds of the authenticator's set of successful checks (checks):
// checksPerUser entries for one user (application passwords, the account
// password, the spellings of the credentials its clients send), and
// checksUsers users.
const (
	checksPerUser = 16
	checksUsers   = 4096
)

// checkCache is a bounded set of successful checks, each kept for the user
// it proved: a user has at most perUser entries, its oldest forgotten
// first, and the set at most maxUsers users, the one whose entries were
// used longest ago forgotten first (all its entries with it). So a user's
// own successes, however many and however varied, only ever push out that
// user's entries: another user's verified credential stays (it is what
// lets that account in while it is out of attempts, see basicUser), unless
// maxUsers other users succeed before its next use.
type checkCache struct {
	secret            []byte
	perUser, maxUsers int
	mu                sync.Mutex
	set               map[string]int64        // key → the user it is kept for
	users             map[int64]*list.Element // → *userChecks in lru
	lru               list.List               // most recently used first
}

// userChecks are one user's keys, oldest first.
type userChecks struct {
	id   int64
	keys []string
}

func newCheckCache(perUser, maxUsers int) *checkCache {
	secret := make([]byte, 32)
	rand.Read(secret)
	return &checkCache{secret: secret, perUser: perUser, maxUsers: maxUsers, set: map[string]int64{}, users: map[int64]*list.Element{}}
}

// key is SHA-256 of the process's secret and the fields: unpredictable
// without the secret (an HMAC's second pass buys a map key nothing), one
// pass of the hash for every request that carries a credential.
func (c *checkCache) key(kind string, userID int64, password, stored string) string {
	b := make([]byte, 0, len(c.secret)+len(kind)+len(stored)+len(password)+24)
	b = append(append(b, c.secret...), kind...)
	b = strconv.AppendInt(append(b, 0), userID, 10)
	b = append(append(append(append(b, 0), stored...), 0), password...)
	sum := sha256.Sum256(b)
	return string(sum[:])
}

// has tells whether k is remembered; its user's entries count as used.
func (c *checkCache) has(k string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.set[k]
	if ok {
		c.lru.MoveToFront(c.users[id])
	}
	return ok
}

// remove forgets k.
func (c *checkCache) remove(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.set[k]
	if !ok {
		return
	}
	delete(c.set, k)
	e := c.users[id]
	u := e.Value.(*userChecks)
	u.keys = slices.DeleteFunc(u.keys, func(x string) bool { return x == k })
	if len(u.keys) == 0 {
		c.lru.Remove(e)
		delete(c.users, id)
	}
}

// add remembers k for user, and tells whether it was new.
func (c *checkCache) add(user int64, k string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.set[k]; ok {
		c.lru.MoveToFront(c.users[id])
		return false
	}
	e := c.users[user]
	if e == nil {
		if len(c.users) >= c.maxUsers {
			last := c.lru.Back()
			old := last.Value.(*userChecks)
			for _, x := range old.keys {
				delete(c.set, x)
			}
			c.lru.Remove(last)
			delete(c.users, old.id)
		}
		e = c.lru.PushFront(&userChecks{id: user})
		c.users[user] = e
	} else {
		c.lru.MoveToFront(e)
	}
	u := e.Value.(*userChecks)
	if len(u.keys) >= c.perUser {
		delete(c.set, u.keys[0])
		u.keys = slices.Delete(u.keys, 0, 1)
	}
	u.keys = append(u.keys, k)
	c.set[k] = user
	return true
}

// Package testredis points tests at the Redis server they share, from
// WPSIDECAR_TEST_REDIS (host:port, default 127.0.0.1:6379). When none
// answers, tests fail, they do not skip; under go test -short they skip
// before dialling (Addr, Client). Tests keep apart by giving their keys a
// salt of their own (Salt).
package testredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultAddr is used when WPSIDECAR_TEST_REDIS is unset.
const DefaultAddr = "127.0.0.1:6379"

// SkipShort skips the test under go test -short: it needs a Redis server.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Redis; skipped under -short")
	}
}

// Addr is the test server's host and port.
func Addr(t testing.TB) (host string, port int) {
	t.Helper()
	SkipShort(t)
	addr := os.Getenv("WPSIDECAR_TEST_REDIS")
	if addr == "" {
		addr = DefaultAddr
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("testredis: WPSIDECAR_TEST_REDIS %q: %v", addr, err)
	}
	port, err = strconv.Atoi(p)
	if err != nil {
		t.Fatalf("testredis: WPSIDECAR_TEST_REDIS %q: bad port", addr)
	}
	return h, port
}

// Client is a connection to the test server, closed when the test ends.
func Client(t testing.TB) *redis.Client {
	t.Helper()
	SkipShort(t)
	host, port := Addr(t)
	c := redis.NewClient(&redis.Options{Addr: net.JoinHostPort(host, strconv.Itoa(port)), Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("testredis: no Redis at %s (set WPSIDECAR_TEST_REDIS): %v", c.Options().Addr, err)
	}
	return c
}

// Salt is a key salt no other test uses; the keys under it are deleted
// when the test ends.
func Salt(t testing.TB, c *redis.Client) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	salt := "wpsidecar_test_" + hex.EncodeToString(b) + "_"
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := c.Keys(ctx, salt+"*").Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	return salt
}

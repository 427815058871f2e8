package restcache

import (
	"errors"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// keepable tells whether an answer with status and head h may be kept
// and given to others: what a shared cache may store without being told
// (RFC 9111 §3, §4.2.2), less what names its reader or asks not to be
// kept.
func keepable(status int, h http.Header) bool {
	switch status {
	case 200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501:
	default:
		return false // 206 among them: no range is asked for
	}
	if setsCookie(h) || h.Get("Content-Encoding") != "" {
		return false
	}
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			name, arg, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "private", "no-store", "no-cache":
				return false
			case "max-age", "s-maxage":
				// A number of seconds (RFC 9111 §1.2.2: digits, quoted
				// or not); 0 however written, or anything else, is not
				// one to keep by.
				n, err := strconv.ParseUint(strings.Trim(strings.TrimSpace(arg), `"`), 10, 64)
				if err != nil && !errors.Is(err, strconv.ErrRange) || err == nil && n == 0 {
					return false
				}
			}
		}
	}
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			switch strings.ToLower(strings.TrimSpace(f)) {
			case "origin", "accept-encoding", "":
			default:
				return false // a header the key does not hold, or *
			}
		}
	}
	return true
}

// setsCookie tells whether h sets a cookie, in any header a client may
// read one from (Set-Cookie, and RFC 2965's Set-Cookie2).
func setsCookie(h http.Header) bool {
	for k := range h {
		if strings.EqualFold(k, "Set-Cookie") || strings.EqualFold(k, "Set-Cookie2") {
			return true
		}
	}
	return false
}

// Why a request is passed to PHP without a look at the cache.
const (
	BypassRoute       = "route"       // not in a namespace kept
	BypassMethod      = "method"      // not GET or HEAD
	BypassCredentials = "credentials" // Authorization
	BypassCookie      = "cookie"      // any cookie
	BypassNonce       = "nonce"       // X-WP-Nonce, _wpnonce
	BypassBody        = "body"        // a request body
	BypassConditional = "conditional" // If-…, Range
	BypassTarget      = "target"      // a target longer than a key holds
	BypassFeed        = "feed"        // the change feed is not current
)

// Counts are what the cache did, for the metrics.
type Counts struct {
	Hits      atomic.Int64 // given from a kept answer
	Collapsed atomic.Int64 // given another request's fetch, made meanwhile
	Misses    atomic.Int64 // fetched from PHP
	Kept      atomic.Int64 // fetched and kept

	mu       sync.Mutex
	bypassed map[string]int64
	dropped  map[string]int64
}

func (c *Counts) bypass(reason string) { c.add(&c.bypassed, reason) }
func (c *Counts) drop(reason string)   { c.add(&c.dropped, reason) }

func (c *Counts) add(m *map[string]int64, reason string) {
	c.mu.Lock()
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[reason]++
	c.mu.Unlock()
}

// Stats are the counts so far, and the bytes kept now.
type Stats struct {
	Hits, Collapsed, Misses, Kept int64
	Bypassed, Dropped             map[string]int64
	Bytes                         uint64
}

// Stats are the cache's counts.
func (c *Cache) Stats() Stats {
	c.counts.mu.Lock()
	defer c.counts.mu.Unlock()
	return Stats{
		Hits: c.counts.Hits.Load(), Collapsed: c.counts.Collapsed.Load(), Misses: c.counts.Misses.Load(), Kept: c.counts.Kept.Load(),
		Bypassed: maps.Clone(c.counts.bypassed), Dropped: maps.Clone(c.counts.dropped), Bytes: c.answers.WeightedSize(),
	}
}

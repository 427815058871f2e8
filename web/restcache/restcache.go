// Package restcache keeps PHP's answers to anonymous reads of WordPress's
// own REST routes (--cache-rest: wp/v2 and the like) and gives them again,
// exactly as PHP sent them, while nothing they may be built from changed.
//
// What is kept is decided twice. The request must be one whose answer
// cannot depend on who asks (Bypass: no credential, cookie or nonce, a
// GET or HEAD without a body or conditions); the answer must be one a
// shared cache may keep (keepable: no Set-Cookie, nothing private, a
// status RFC 9111 lets a cache keep without being told, a Vary naming
// nothing but Origin). The key is everything that makes PHP's answer: the
// method, the scheme and host the sidecar forwards, the target as sent,
// and Origin (CORS headers echo it).
//
// A change drops answers by generation: DropSite when a site's rows
// changed, DropAll when anything else did (a configuration, a network
// table). An answer whose fetch began before a drop is not kept, so a
// change committed while PHP built it cannot be frozen in. Concurrent
// misses for one key reach PHP once; the others wait for that answer, or
// go to PHP themselves when it cannot be kept.
//
// The answers are held in an otter cache bounded in bytes, whose
// frequency sketch (W-TinyLFU) admits a new answer only when it is likely
// to be asked for more often than the one it would push out: a flood of
// distinct URLs does not empty the cache of the answers that are hit.
// What an answer weighs is what it holds (body, head, the keys it shows,
// and a measured allowance for the structures around it); its key, which
// a client makes as long as it likes, is held as a SHA-256 digest.
package restcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/wpsidecar/wpsidecar/domain/cachetag"
	"github.com/wpsidecar/wpsidecar/internal/phpquery"
)

// Defaults of Options' bounds: sized for a small container.
const (
	DefaultMaxBytes  = 64 << 20
	DefaultMaxAnswer = 1 << 20
	// maxTarget bounds the request target kept in a key: a longer one is
	// passed to PHP as it comes.
	maxTarget = 4096
)

// Options configure a Cache.
type Options struct {
	// Namespaces are the REST namespaces whose answers are kept ("wp/v2").
	Namespaces []string
	// MaxBytes bounds what the kept answers hold (bodies, headers and
	// keys); 0: DefaultMaxBytes.
	MaxBytes int64
	// MaxAnswer is the largest answer kept; 0: DefaultMaxAnswer, or an
	// eighth of MaxBytes when that is less.
	MaxAnswer int
	// TablePrefix is the WordPress tables' (base) prefix, as the feed's
	// Touched names tables ("wp_").
	TablePrefix string
	// Current tells whether the change feed vouches for the present as of
	// the request whose context it is given (with exact reads, it waits
	// until the feed has applied what the server had committed when the
	// request came): when it does not, nothing is given from the cache nor
	// kept (the request goes to PHP). nil: always.
	Current func(context.Context) bool
}

// Request is a request as the cache keys it, besides the request itself:
// its site, as the change feed numbers sites (0 on a single site); its
// REST route as WordPress routes it ("/wp/v2/posts"; from the path after
// /wp-json or from ?rest_route=) and the method WordPress serves (another
// than the request's when _method or X-HTTP-Method-Override chose it;
// "": the request's);
// and what the sidecar forwards to PHP besides the target that PHP may
// read (the scheme, and a trusted proxy's X-Forwarded-Host, Forwarded and
// the like): a client's own X-Forwarded-Proto must not reach a kept
// answer unless the sidecar trusts it and passes it on.
type Request struct {
	Site      int64
	Route     string
	Method    string
	Forwarded string
}

// Cache keeps answers; safe for concurrent use.
type Cache struct {
	o       Options
	answers *otter.Cache[key, *answer]

	mu    sync.Mutex
	all   uint64           // moved by DropAll
	sites map[int64]uint64 // moved by DropSite
	// vers are the versions of the keys answers are kept by ("2/post:14",
	// "2/lists", "*/user:1", "*/lists"), moved by the drops of those
	// keys; a key never dropped is at 0.
	vers map[string]uint64
	// seq counts every drop of a site's answers, and gseq every drop of
	// every site's (users): an answer fetched across one is not kept.
	seq     map[int64]uint64
	gseq    uint64
	flights map[key]*flight

	counts Counts
	// date is the Date of the answers given within the second it names
	// (made once a second, not once an answer).
	date atomic.Pointer[httpDate]
	// holding is what the answers being fetched hold together, bounded by
	// MaxBytes: past it, an answer goes through as it comes, not kept.
	holding atomic.Int64
}

// generation is where the drops stood when a fetch began: an answer is
// kept only if none came before it ended.
type generation struct{ all, site, seq, gseq uint64 }

// answer is PHP's answer as it was sent, never modified once kept.
type answer struct {
	at        int64    // when it was fetched (unix seconds)
	all, site uint64   // c.all and c.sites[site] when kept
	keys      []string // what it shows (see keysOf), qualified by site
	vers      []uint64 // their versions when kept
	status    int
	header    http.Header
	body      []byte
	weight    uint32
}

// flight is a fetch from PHP other requests for the same key wait for.
type flight struct {
	done chan struct{}
	a    *answer // nil: not kept; the waiters go to PHP
	// raced: the answer could be kept but for a write (or the feed)
	// meanwhile; the waiters look again.
	raced   bool
	waiting atomic.Int32
}

// New makes a cache with o.
func New(o Options) (*Cache, error) {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxAnswer == 0 {
		// A small budget is not spent on a few large answers.
		o.MaxAnswer = int(min(DefaultMaxAnswer, o.MaxBytes/8))
	}
	if o.MaxBytes < 0 || o.MaxAnswer < 0 || int64(o.MaxAnswer) > o.MaxBytes {
		return nil, errors.New("restcache: the largest answer must be positive and fit in the byte budget")
	}
	answers, err := otter.New(&otter.Options[key, *answer]{
		MaximumWeight: uint64(o.MaxBytes),
		Weigher:       func(_ key, a *answer) uint32 { return a.weight },
		// The frequency sketch is sized from the start for as many answers
		// as the budget may hold: left to itself, otter sizes it once the
		// cache is half full, and again each time the count doubles, each
		// time forgetting every frequency counted, so that a first flood
		// of small one-off answers pushed out the answers hit before it.
		InitialCapacity: int(o.MaxBytes / leastAnswer),
		// Its work is done on the calling goroutine: the cache starts none
		// that nobody waits for.
		Executor: func(fn func()) { fn() },
	})
	if err != nil {
		return nil, err
	}
	return &Cache{o: o, answers: answers, sites: map[int64]uint64{}, vers: map[string]uint64{}, seq: map[int64]uint64{},
		flights: map[key]*flight{}}, nil
}

// maxVers bounds the versions kept of keys dropped: past it they are
// forgotten, and every answer with them.
const maxVers = 1 << 16

// DropSite drops every answer of site: a change to its rows.
func (c *Cache) DropSite(site int64, reason string) {
	c.mu.Lock()
	c.sites[site]++
	c.seq[site]++
	c.mu.Unlock()
	c.counts.drop(reason)
}

// DropAll drops every answer.
func (c *Cache) DropAll(reason string) {
	c.mu.Lock()
	c.all++
	c.mu.Unlock()
	c.answers.InvalidateAll()
	c.counts.drop(reason)
}

// dropKeys drops the answers of site that show one of keys ("post:14";
// a user's, of every site) and every list of site, or of every site when
// a user is among them.
func (c *Cache) dropKeys(site int64, keys []string, reason string) {
	c.mu.Lock()
	if len(c.vers)+len(keys)+2 > maxVers {
		clear(c.vers)
		c.all++
		c.mu.Unlock()
		c.answers.InvalidateAll()
		c.counts.drop(reason)
		return
	}
	global := false
	for _, k := range keys {
		k = qualified(site, k)
		c.vers[k]++
		global = global || strings.HasPrefix(k, "*/")
	}
	c.vers[qualified(site, keyLists)]++
	c.seq[site]++
	if global {
		c.vers["*/"+keyLists]++
		c.gseq++
	}
	c.mu.Unlock()
	c.counts.drop(reason)
}

// qualified is key as site's answers are kept by it: users are every
// site's ("*/user:1"), the rest the site's own ("2/post:14").
func qualified(site int64, key string) string {
	if isUser(key) {
		return "*/" + key
	}
	return strconv.FormatInt(site, 10) + "/" + key
}

func (c *Cache) generation(site int64) generation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return generation{c.all, c.sites[site], c.seq[site], c.gseq}
}

// keep makes a, fetched from gen on, a kept answer of site showing keys
// (nil: a list), when no drop came since gen; false when one did.
func (c *Cache) keep(a *answer, site int64, gen generation, keys []string) bool {
	if keys == nil {
		keys = []string{keyLists, "*/" + keyLists}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if (generation{c.all, c.sites[site], c.seq[site], c.gseq}) != gen {
		return false
	}
	a.all, a.site = gen.all, gen.site
	a.keys, a.vers = make([]string, len(keys)), make([]uint64, len(keys))
	for i, k := range keys {
		if !strings.HasPrefix(k, "*/") {
			k = qualified(site, k)
		}
		a.keys[i], a.vers[i] = k, c.vers[k]
	}
	a.weight = a.size()
	return true
}

// fresh tells whether a, kept for site, may be given: nothing it shows
// was dropped since.
func (c *Cache) fresh(a *answer, site int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.freshLocked(a, site)
}

// freshLocked is fresh, with c.mu held.
func (c *Cache) freshLocked(a *answer, site int64) bool {
	if a.all != c.all || a.site != c.sites[site] {
		return false
	}
	for i, k := range a.keys {
		if c.vers[k] != a.vers[i] {
			return false
		}
	}
	return true
}

// Outcomes of Serve, as the access log says them.
const (
	Hit    = "hit"    // given from a kept answer, or another request's fetch
	Miss   = "miss"   // fetched from PHP
	Bypass = "bypass" // passed to PHP without a look at the cache
)

// Serve answers r from a kept answer, or passes it to php (the request as
// sent, but for Accept-Encoding: see fetch) and keeps what comes back
// when it may. It says how it answered (Hit, Miss, Bypass).
func (c *Cache) Serve(w http.ResponseWriter, r *http.Request, req Request, php http.Handler) string {
	if reason := c.Bypass(r, req); reason != "" {
		c.counts.bypass(reason)
		if reason == BypassFeed {
			// Not kept, but named by its tags as a kept one would be: a CDN
			// may keep it, and the feed, once it catches up, purges them.
			c.fetch(w, r, req, php, func(*answer, []string) bool { return false })
			return Bypass
		}
		php.ServeHTTP(w, r)
		return Bypass
	}
	k := keyOf(r, req)
	// A waiter whose fetch could have been kept but for a write meanwhile
	// looks again once: it leads the next fetch or waits for it, so that
	// PHP answers one request of a key at a time however fast the writes
	// come; then it goes to PHP itself.
	for again := true; ; again = false {
		if a, ok := c.answers.GetIfPresent(k); ok {
			if c.fresh(a, req.Site) {
				c.counts.Hits.Add(1)
				a.write(w, r, c.now())
				return Hit
			}
			c.answers.Invalidate(k)
		}
		c.mu.Lock()
		f, ok := c.flights[k]
		if !ok {
			// A fetch may have ended, kept, since the look above: the
			// flight goes only after its answer is in.
			if a, ok := c.answers.GetIfPresent(k); ok && c.freshLocked(a, req.Site) {
				c.mu.Unlock()
				c.counts.Hits.Add(1)
				a.write(w, r, c.now())
				return Hit
			}
			break // with c.mu held: this request leads
		}
		f.waiting.Add(1)
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-r.Context().Done():
			return Miss // the client left; nothing to answer
		}
		if f.a != nil && c.fresh(f.a, req.Site) {
			// Fresh still: a drop that came since the fetch was kept (a
			// write this request waited for) is not given.
			c.counts.Collapsed.Add(1)
			f.a.write(w, r, c.now())
			return Hit
		}
		if !again || !f.raced {
			c.counts.Misses.Add(1)
			php.ServeHTTP(w, r)
			return Miss
		}
	}
	f := &flight{done: make(chan struct{})}
	c.flights[k] = f
	c.mu.Unlock()

	c.counts.Misses.Add(1)
	gen := c.generation(req.Site)
	// The waiters are let go as soon as PHP's answer is whole (or goes
	// through, not kept), before it is sent to this client: a slow one
	// holds up no other.
	c.fetch(w, r, req, php, func(a *answer, keys []string) bool {
		switch {
		case a != nil && c.current(r.Context()) && c.keep(a, req.Site, gen, keys):
			c.answers.Set(k, a)
			c.counts.Kept.Add(1)
		case a != nil:
			f.raced, a = true, nil
		}
		f.a = a
		c.mu.Lock()
		delete(c.flights, k)
		c.mu.Unlock()
		close(f.done)
		return a != nil
	})
	return Miss
}

func (c *Cache) current(ctx context.Context) bool { return c.o.Current == nil || c.o.Current(ctx) }

// Bypass is why r is passed to PHP without a look at the cache ("" when
// it is looked up): the reasons the metrics count.
func (c *Cache) Bypass(r *http.Request, req Request) string {
	h := fieldsOf(r.Header)
	switch {
	case !c.routeKept(req.Route):
		return BypassRoute
	case r.Method != http.MethodGet && r.Method != http.MethodHead, req.Method != "" && req.Method != r.Method, h.has("X-Http-Method-Override"):
		// An override is PHP's to read, whichever of several fields it
		// reads: it is never keyed.
		return BypassMethod
	case h.has("Authorization"):
		return BypassCredentials
	case h.has("Cookie"):
		// WordPress's own cookies authenticate (wordpress_logged_in_…),
		// unlock password-protected posts (wp-postpass_…) or name a
		// commenter; a plugin may read any other. None is keyed.
		return BypassCookie
	case h.has("X-Wp-Nonce") || hasNonce(r.URL.RawQuery):
		return BypassNonce
	case r.ContentLength != 0 || len(r.TransferEncoding) > 0:
		return BypassBody
	case h.conditional():
		return BypassConditional
	case len(r.URL.RawQuery)+len(r.URL.EscapedPath()) > maxTarget, !canonical(r.URL.EscapedPath()), phpquery.TooMany(r.URL.RawQuery):
		// Past PHP's max_input_vars, a site's PHP may read other names
		// than the sidecar does.
		return BypassTarget
	case !c.current(r.Context()):
		return BypassFeed
	}
	return ""
}

// routeKept tells whether route is in one of the namespaces kept: the
// namespace's index ("/wp/v2") or a route under it.
func (c *Cache) routeKept(route string) bool {
	for _, ns := range c.o.Namespaces {
		if rest, ok := strings.CutPrefix(route, "/"+ns); ok && (rest == "" || rest[0] == '/') {
			return true
		}
	}
	return false
}

// fields are a request's header fields as PHP reads them: PHP makes
// dashes and underscores alike (X_WP_NONCE, which some web servers pass
// on, is X-WP-Nonce to it), and letter case is nothing.
type fields struct {
	h           http.Header
	underscored bool // a name holds an underscore: looked up by spelling too
}

func fieldsOf(h http.Header) fields {
	f := fields{h: h}
	for k := range h {
		if strings.IndexByte(k, '_') >= 0 {
			f.underscored = true
			break
		}
	}
	return f
}

// has tells whether the fields hold name (as Go keys it), empty or not,
// once or more (a check of its first value alone would miss a second PHP
// reads), in any spelling PHP reads as it.
func (f fields) has(name string) bool {
	if _, ok := f.h[name]; ok {
		return true
	}
	if f.underscored {
		for k := range f.h {
			if strings.IndexByte(k, '_') >= 0 && strings.EqualFold(strings.ReplaceAll(k, "_", "-"), name) {
				return true
			}
		}
	}
	return false
}

// conditional tells whether the fields make the request conditional or
// partial: such a request is PHP's to answer (WordPress's REST routes
// send no validators; the answer would be the full one anyway).
func (f fields) conditional() bool {
	for _, k := range [...]string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range", "Range"} {
		if f.has(k) {
			return true
		}
	}
	return false
}

// nonceNames picks the raw names that may be _wpnonce.
var nonceNames = phpquery.MayBe("_wpnonce")

// hasNonce tells whether a query string carries _wpnonce as PHP reads it
// into $_GET (phpquery), an array's included.
func hasNonce(raw string) bool {
	for _, f := range phpquery.Fields(raw, nonceNames) {
		if f.Name == "_wpnonce" {
			return true
		}
	}
	return false
}

// canonical tells whether path (escaped) names what a web server in front
// of PHP would serve it as: no dot segment, no empty segment but a
// trailing one, no escape that decodes to a slash, a backslash or a NUL,
// and no escape that does not decode. nginx resolves
// /wp-json/wp/v2/../../x.php to another file than the REST route the
// sidecar reads in it.
func canonical(path string) bool {
	segs := strings.Split(path, "/")
	for i, seg := range segs[1:] {
		if seg == "" && i+2 < len(segs) {
			return false
		}
		if !strings.ContainsAny(seg, ".%") {
			continue
		}
		d, err := url.PathUnescape(seg)
		if err != nil || d == "." || d == ".." || strings.ContainsAny(d, "/\\\x00") {
			return false
		}
	}
	return true
}

// key is a kept answer's key: a digest of what makes PHP's answer to a
// request, which holds the target and every Origin field as sent, so
// that what a client makes long is not held.
type key [sha256.Size]byte

// keyOf is what makes PHP's answer to r: the method, the Host, what is
// forwarded, the target as sent and every Origin field (PHP echoes the
// last, a client may send several), each with its length first.
func keyOf(r *http.Request, req Request) key {
	h := sha256.New()
	var n [8]byte
	put := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	origins := r.Header.Values("Origin")
	for _, s := range append([]string{r.Method, r.Host, req.Forwarded, r.URL.EscapedPath(), r.URL.RawQuery}, origins...) {
		put(s)
	}
	var k key
	h.Sum(k[:0])
	return k
}

// fetch passes r to php through a capture, and gives the answer to the
// client; it returns the answer and the keys of what it shows when it
// may be kept (nil otherwise). PHP is asked for the identity coding,
// which any client may be given. An answer that may be kept is held
// until it is whole, so that it goes out naming its cache tags (unless
// PHP named some itself); a larger one goes out as it comes.
func (c *Cache) fetch(w http.ResponseWriter, r *http.Request, req Request, php http.Handler, done func(a *answer, keys []string) (kept bool)) {
	rr := r
	if _, ok := r.Header["Accept-Encoding"]; ok {
		rr = r.Clone(r.Context())
		rr.Header.Del("Accept-Encoding")
	}
	finished := false
	finish := func(a *answer, keys []string) bool {
		if finished {
			return false
		}
		finished = true
		return done(a, keys)
	}
	rec := &capture{w: w, header: http.Header{}, max: c.o.MaxAnswer, holding: &c.holding, limit: c.o.MaxBytes,
		onThrough: func() { finish(nil, nil) }}
	defer rec.release()
	defer finish(nil, nil) // PHP's handler may end with a panic (a client gone)
	php.ServeHTTP(rec, rr)
	if rec.through || !rec.wrote {
		return
	}
	if r.Context().Err() != nil || !keepable(rec.status, rec.header) {
		finish(nil, nil)
		rec.send(rec.body.Bytes())
		return
	}
	keys := keysOf(req.Route, rec.body.Bytes())
	if _, own := rec.header["Surrogate-Key"]; !own {
		tags := tagsOf(req.Site, keys)
		if !cachetag.Fit(tags...) {
			// Too many to name: tagged as a list, which every write of
			// what it shows purges (it is kept here by all it shows).
			tags = tagsOf(req.Site, nil)
		}
		cachetag.Set(rec.header, tags...)
	}
	h := rec.header.Clone()
	h.Del("Date")
	h.Del("Age")
	a := &answer{at: time.Now().Unix(), status: rec.status, header: h, body: bytes.Clone(rec.body.Bytes())}
	if finish(a, keys) {
		// Kept: the cache's copy is sent, counted in its budget; what was
		// held is given back before a slow client takes it.
		rec.release()
		rec.body = bytes.Buffer{}
		rec.send(a.body)
		return
	}
	rec.send(rec.body.Bytes())
}

// httpDate is a second, and as a Date header says it.
type httpDate struct {
	unix int64
	text string
}

// now is the second an answer is given in, with its Date.
func (c *Cache) now() *httpDate {
	t := time.Now()
	if d := c.date.Load(); d != nil && d.unix == t.Unix() {
		return d
	}
	d := &httpDate{t.Unix(), t.UTC().Format(http.TimeFormat)}
	c.date.Store(d)
	return d
}

// write gives a to the client: the kept head with now's Date and the Age
// of the answer (RFC 9111 §5.1: a cache in front counts the time it spent
// here), and the body but to a HEAD request.
func (a *answer) write(w http.ResponseWriter, r *http.Request, now *httpDate) {
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	h["Date"] = []string{now.text}
	h["Age"] = []string{strconv.FormatInt(max(0, now.unix-a.at), 10)}
	w.WriteHeader(a.status)
	if r.Method != http.MethodHead {
		w.Write(a.body)
	}
}

// What the structures around an answer hold, besides the text of its
// body, head and keys: measured with TestServe_FloodHeap (the heap after
// a flood of small answers, against what their weights add up to).
const (
	// answerFloor is what an answer holds besides that text: the answer
	// itself, otter's node and table entry for its key, its share of the
	// frequency sketch; it is the least an answer weighs.
	answerFloor = 512
	// leastAnswer is about the least a WordPress REST answer weighs (a
	// 404 with WordPress's head: 1.7 KB): the budget holds at most so
	// many answers of PHP's, which the frequency sketch is sized for.
	leastAnswer = 2048
	// fieldCost is a head field's map entry and slice; valueCost a value's
	// string; keyCost a key's string and version.
	fieldCost, valueCost, keyCost = 64, 16, 24
)

// size is what a holds, its keys set (keep): what it weighs against the
// byte budget.
func (a *answer) size() uint32 {
	n := len(a.body)
	for k, vs := range a.header {
		n += fieldCost + len(k)
		for _, v := range vs {
			n += valueCost + len(v)
		}
	}
	for _, k := range a.keys {
		n += keyCost + len(k)
	}
	// The allocator rounds each block up to its size class: up to an
	// eighth more.
	return uint32(answerFloor + n + n/8)
}

// capture holds PHP's answer, its head apart from what the outer layers
// set on the writer before (the request's id, which is not PHP's to give
// again), until send; one that grows past max bytes, or that PHP flushes,
// goes through to the writer from then on (through).
type capture struct {
	w       http.ResponseWriter
	header  http.Header
	max     int
	status  int
	wrote   bool
	through bool
	body    bytes.Buffer
	// holding is what every capture holds, counted against limit.
	holding *atomic.Int64
	limit   int64
	held    int64
	// onThrough is told when the answer starts going through.
	onThrough func()
}

// release gives back what c held.
func (c *capture) release() {
	c.holding.Add(-c.held)
	c.held = 0
}

func (c *capture) Header() http.Header { return c.header }

func (c *capture) WriteHeader(status int) {
	switch {
	case c.wrote:
	case status < 200: // informational: on its way at once
		maps.Copy(c.w.Header(), c.header)
		c.w.WriteHeader(status)
	default:
		c.status, c.wrote = status, true
	}
}

func (c *capture) Write(p []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	if !c.through && (c.body.Len()+len(p) > c.max || c.holding.Add(int64(len(p))) > c.limit) {
		if c.body.Len()+len(p) <= c.max {
			c.holding.Add(-int64(len(p))) // counted, then refused
		}
		c.goThrough()
	} else if !c.through {
		c.held += int64(len(p))
	}
	if c.through {
		return c.w.Write(p)
	}
	return c.body.Write(p)
}

// goThrough sends what is held, and lets the rest go as it comes.
func (c *capture) goThrough() {
	c.through = true
	if c.onThrough != nil {
		c.onThrough()
	}
	c.send(c.body.Bytes())
	c.body = bytes.Buffer{}
	c.release()
}

// send writes the head and body to the client.
func (c *capture) send(body []byte) {
	maps.Copy(c.w.Header(), c.header)
	c.w.WriteHeader(c.status)
	c.w.Write(body)
}

// FlushError: an event stream's flush sends what is held and lets the
// rest through (such an answer is not kept); any other is held still.
// The reverse proxy flushes every write of an answer PHP sends without
// a length, which is most of them: holding is what keeps them whole.
func (c *capture) FlushError() error {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	if c.through {
		return http.NewResponseController(c.w).Flush()
	}
	if mt, _, _ := strings.Cut(c.header.Get("Content-Type"), ";"); strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
		c.goThrough()
		return http.NewResponseController(c.w).Flush()
	}
	return nil
}

// Unwrap lets the layers that look for their own writer below this one
// reach it.
func (c *capture) Unwrap() http.ResponseWriter { return c.w }

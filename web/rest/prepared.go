package rest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/contentcoding"
)

// Prepared keeps the answers of the sidecar's own GET and HEAD requests
// while the change feed vouches that nothing they were built from changed,
// and gives each again to the same request: the request's target, its
// headers (credentials, Origin, Accept-Encoding, …), its client address and
// connection, all of it. Nothing of the answer is worked out again: the
// credential is not verified again, the route not matched, no header
// built; the kept status, headers and body are written as they are.
//
// An answer is kept only when everything that made it says it may be
// (wpsidecar.Scope.Keep: a level of the request's scope made for the
// answer, which its makers report to): its route reads nothing but what
// the feed vouches for, and its credential holds until a time at most (a
// cookie's expiry, a nonce's tick). Only a 200 is kept: failures (a wrong password, a
// throttled client) are worked out every time.
//
// Every kept answer is dropped at once when the version moves (the memo's
// generation: any change the feed reports, and the sidecar's own writes)
// or Changed is called (a configuration file reloaded); and none is given
// while the feed cannot vouch for the present.
type Prepared struct {
	version func(context.Context) (uint64, bool)
	inputs  atomic.Uint64 // moved by Changed
	secret  [32]byte      // keys are hashes with it: no credential is kept
	ids     atomic.Uint64 // one per Routes, so that sites share nothing
	now     func() time.Time

	mu                   sync.RWMutex
	at                   preparedAt // what every kept answer was built at
	answers              map[[sha256.Size]byte]*preparedAnswer
	bytes                int
	maxAnswers, maxBytes int

	given, kept atomic.Int64
}

// The bounds of the kept answers: a client that makes every request
// different (another header each time) costs itself a build each, and
// pushes out others' answers at most, which are then built again.
const (
	preparedMaxAnswers = 8192
	preparedMaxBytes   = 32 << 20
	// preparedMaxHeaders: a request with more header fields is answered
	// as it comes, not looked up.
	preparedMaxHeaders = 64
)

// preparedAt is the version and inputs an answer was built at.
type preparedAt struct{ version, inputs uint64 }

// preparedAnswer is an answer as it went out, but for what the outer
// layers add to every request (its id): never modified once kept.
type preparedAnswer struct {
	route  string // for Options.Served
	until  time.Time
	status int
	header http.Header
	etag   string // the identity tag, for If-None-Match across codings
	body   []byte
}

// NewPrepared keeps answers while version says the feed vouches (true)
// for the request whose context it is given, for as long as the number it
// gives stays the same.
func NewPrepared(version func(context.Context) (uint64, bool)) *Prepared {
	p := &Prepared{version: version, now: time.Now, answers: map[[sha256.Size]byte]*preparedAnswer{}, maxAnswers: preparedMaxAnswers, maxBytes: preparedMaxBytes}
	rand.Read(p.secret[:])
	return p
}

// Changed drops every kept answer: something they may be built from
// changed outside the database (a configuration file).
func (p *Prepared) Changed() { p.inputs.Add(1) }

// PreparedStats count answers given from those kept, and answers kept;
// Bytes is what the answers kept now hold, as counted against the bound.
type PreparedStats struct{ Given, Kept, Bytes int64 }

// Stats are the counts so far.
func (p *Prepared) Stats() PreparedStats {
	p.mu.RLock()
	n := p.bytes
	p.mu.RUnlock()
	return PreparedStats{Given: p.given.Load(), Kept: p.kept.Load(), Bytes: int64(n)}
}

// preparable tells whether r, bound for the sidecar's own routes, may be
// answered from a kept answer: a GET or HEAD without a body, without conditions other than If-None-Match (and
// that only where the compression writer evaluates it: otherwise the
// handlers do, each in its way), and without a read-your-writes receipt.
func (s *Routes) preparable(r *http.Request) bool {
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || r.ContentLength != 0 || len(r.TransferEncoding) > 0 || len(r.Header) > preparedMaxHeaders {
		return false
	}
	for _, k := range []string{"If-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range", "Range"} {
		if _, ok := r.Header[k]; ok {
			return false
		}
	}
	if _, ok := r.Header["If-None-Match"]; ok && s.o.Compression == nil {
		return false
	}
	if s.o.Consistency != nil {
		if r.Header.Get(HeaderGTID) != "" {
			return false
		}
		for _, c := range r.Header["Cookie"] {
			if strings.Contains(c, CookieGTID) {
				return false
			}
		}
	}
	return true
}

// servePrepared answers r, which d says the sidecar answers, from a kept
// answer, or builds the answer by its route, through a capture, and keeps
// it when it may.
func (s *Routes) servePrepared(w http.ResponseWriter, r *http.Request, d Decision) {
	p := s.o.Prepared
	version, ok := p.version(r.Context())
	if !ok {
		s.route(w, d)
		return
	}
	at := preparedAt{version, p.inputs.Load()}
	key := p.key(s.id, r, d.prefix)
	inm := r.Header.Values("If-None-Match")
	if a := p.lookup(key, at); a != nil {
		if s.o.Served != nil {
			s.o.Served(w, r, a.route)
		}
		a.write(w, inm)
		p.given.Add(1)
		return
	}
	var pre []string // what the outer layers set (the request's id): not the answer's
	for k := range w.Header() {
		pre = append(pre, k)
	}
	ctx, keep := wpsidecar.WithScope(d.view.Context())
	keep.Keep()
	c := &capture{ResponseWriter: w, keep: keep}
	d.view = d.view.WithContext(ctx)
	s.route(c, d)
	if !c.started || c.through {
		return // not the sidecar's own answer, or one that went out as it came
	}
	a := c.answer(pre)
	a.write(w, c.inm)
	if a.status != http.StatusOK {
		return
	}
	holds, until := keep.Holds(p.now())
	if version, ok := p.version(r.Context()); !holds || !ok || (preparedAt{version, p.inputs.Load()}) != at {
		return
	}
	a.until = until
	p.store(key, at, a)
}

func (p *Prepared) lookup(key [sha256.Size]byte, at preparedAt) *preparedAnswer {
	p.mu.RLock()
	a := p.answers[key]
	same := p.at == at
	p.mu.RUnlock()
	if a == nil || !same || (!a.until.IsZero() && !p.now().Before(a.until)) {
		return nil
	}
	return a
}

func (p *Prepared) store(key [sha256.Size]byte, at preparedAt, a *preparedAnswer) {
	size := a.size()
	if size > p.maxBytes {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if at.version < p.at.version || at.inputs < p.at.inputs {
		return // built before answers kept since: out of date already
	}
	if p.at != at {
		// Everything kept was built before the last change. A new map:
		// a cleared one keeps the room it grew to, which nothing counts.
		p.answers = map[[sha256.Size]byte]*preparedAnswer{}
		p.at, p.bytes = at, 0
	}
	if old := p.answers[key]; old != nil {
		p.bytes -= old.size()
		delete(p.answers, key)
	}
	for k, old := range p.answers { // any: the map's order is random
		if len(p.answers) < p.maxAnswers && p.bytes+size <= p.maxBytes {
			break
		}
		p.bytes -= old.size()
		delete(p.answers, k)
	}
	p.answers[key] = a
	p.bytes += size
	p.kept.Add(1)
}

// key is what r asks, hashed with the process's secret: everything of the
// request but its If-None-Match (evaluated against the kept answer) and
// its id (new for every request).
func (p *Prepared) key(site uint64, r *http.Request, prefix string) [sha256.Size]byte {
	bp := keyBuffers.Get().(*[]byte)
	b := append((*bp)[:0], p.secret[:]...)
	b = binary.LittleEndian.AppendUint64(b, site)
	tls := "0"
	if r.TLS != nil {
		tls = "1"
	}
	ip := r.RemoteAddr
	if i := strings.LastIndexByte(ip, ':'); i >= 0 {
		ip = ip[:i]
	}
	for _, f := range [...]string{prefix, r.Method, r.Host, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, ip, tls} {
		b = appendField(b, f)
	}
	var arr [preparedMaxHeaders]string
	names := arr[:0]
	for k := range r.Header {
		if k != "If-None-Match" && k != "X-Request-Id" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		b = appendField(b, k)
		vs := r.Header[k]
		b = binary.AppendUvarint(b, uint64(len(vs)))
		for _, v := range vs {
			b = appendField(b, v)
		}
	}
	sum := sha256.Sum256(b)
	*bp = b
	keyBuffers.Put(bp)
	return sum
}

var keyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendField appends s, length first: no two lists of fields make the
// same bytes.
func appendField(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// answerOverhead bounds what an answer holds besides its body and its
// header's contents: the preparedAnswer, its slot in the map of answers,
// the header's map with room for eight fields.
const answerOverhead = 768

// fieldOverhead bounds what a header field holds besides its name and
// values: its slot in the map (which grows by doubling), its slice.
const fieldOverhead = 192

// size is what the answer holds: its body's capacity, not its length
// (answer trims a body grown by doubling; the allocator's rounding
// stays), and its header's names, values and their slices, each value's
// bytes rounded up.
func (a *preparedAnswer) size() int {
	n := cap(a.body) + len(a.etag) + answerOverhead
	for k, vs := range a.header {
		n += len(k) + fieldOverhead
		for _, v := range vs {
			n += len(v) + 32
		}
	}
	return n
}

// write sends the answer, or 304 when it is a 200 the client holds in any
// coding, as the compression writer does.
func (a *preparedAnswer) write(w http.ResponseWriter, inm []string) {
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	if a.status == http.StatusOK && len(inm) > 0 && contentcoding.NoneMatch(inm, a.etag) {
		notModified(w)
		return
	}
	w.WriteHeader(a.status)
	if len(a.body) > 0 {
		w.Write(a.body)
	}
}

// capture is the writer of a request whose answer may be kept. It lets
// everything through as it comes until the sidecar's own answer starts
// (start: answer, writers.go); then it keeps the answer, which
// servePrepared writes. One larger than contentcoding.MaxSize, or
// flushed, goes out as it comes (and is not kept), its If-None-Match
// evaluated as the compression writer would.
type capture struct {
	http.ResponseWriter
	keep    *wpsidecar.Scope // the level the answer's makers report to
	route   string           // the route that answers (served)
	started bool             // the sidecar's own answer: kept
	inm     []string         // the request's If-None-Match, taken from it at start
	status  int
	buf     bytes.Buffer
	through bool // the head is written: writes go through
	discard bool // a 304 went out: no body follows
}

// start keeps the answer to r from now on, built in full: without
// If-None-Match, evaluated against the whole answer once it is kept.
func (c *capture) start(r *http.Request) {
	c.started = true
	c.inm = r.Header.Values("If-None-Match")
	r.Header.Del("If-None-Match")
}

// answer is what was kept, with the headers the outer layers did not set
// before (pre).
func (c *capture) answer(pre []string) *preparedAnswer {
	status := c.status
	if status == 0 {
		status = http.StatusOK
	}
	body := c.buf.Bytes()
	if cap(body) > len(body)+len(body)/4 {
		// Grown by doubling, up to twice its length: kept, it is cut to
		// its length (the allocator's sizes add less than a quarter).
		body = bytes.Clone(body)
	}
	a := &preparedAnswer{route: c.route, status: status, header: http.Header{}, body: body}
	for k, v := range c.Header() {
		if !slices.Contains(pre, k) {
			a.header[k] = slices.Clip(slices.Clone(v))
		}
	}
	a.etag = contentcoding.Base(a.header.Get("Etag"))
	return a
}

func (c *capture) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *capture) WriteHeader(code int) {
	if !c.started || c.through {
		c.ResponseWriter.WriteHeader(code)
		return
	}
	if c.status == 0 && code >= 200 {
		c.status = code
		if !c.keep.Allowed() {
			c.spill() // a route whose answers are never kept: not held
		}
	}
}

func (c *capture) Write(p []byte) (int, error) {
	if !c.started || c.through {
		if c.discard {
			return len(p), nil
		}
		return c.ResponseWriter.Write(p)
	}
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.buf.Len()+len(p) > contentcoding.MaxSize {
		if err := c.spill(); err != nil {
			return 0, err
		}
		return c.Write(p)
	}
	return c.buf.Write(p)
}

func (c *capture) FlushError() error {
	if c.started && !c.through {
		if err := c.spill(); err != nil {
			return err
		}
	}
	return http.NewResponseController(c.ResponseWriter).Flush()
}

// spill writes what was kept and lets the rest through.
func (c *capture) spill() error {
	c.through = true
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if c.status == http.StatusOK && len(c.inm) > 0 && contentcoding.NoneMatch(c.inm, contentcoding.Base(c.Header().Get("Etag"))) {
		notModified(c.ResponseWriter)
		c.discard = true
		return nil
	}
	c.ResponseWriter.WriteHeader(c.status)
	_, err := c.ResponseWriter.Write(c.buf.Bytes())
	c.buf = bytes.Buffer{}
	return err
}

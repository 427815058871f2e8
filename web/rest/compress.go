package rest

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/wpsidecar/wpsidecar/internal/contentcoding"
)

// Compression codes the sidecar's own answers as the client's
// Accept-Encoding allows (--compress). One serves every site: its cache of
// coded bodies is bounded once for all of them.
type Compression struct {
	enc *contentcoding.Encoder
}

// NewCompression is compression with the default bounds.
func NewCompression() *Compression {
	return &Compression{enc: contentcoding.New(0, 0)}
}

// Bytes is what the cache of coded bodies holds, as counted against its
// bound.
func (c *Compression) Bytes() int64 {
	_, n := c.enc.Len()
	return int64(n)
}

// compressWriter is the outermost writer of an answer (writers.go) when
// compression is on. It negotiates the coding, takes over If-None-Match on
// a read (the handler then always answers in full: which tag the client
// must match depends on the coded body, known only here), keeps the body
// while it may be coded, and writes the answer coded or not with its
// exact Content-Length, its tag for the coding, and Vary: Accept-Encoding.
//
// What it does not code passes through as soon as that is known: a
// status without a body, a body declared or grown outside
// contentcoding.MinSize..MaxSize, one already coded, one flushed.
type compressWriter struct {
	http.ResponseWriter
	enc     *contentcoding.Encoder
	coding  contentcoding.Coding
	inm     []string // the request's If-None-Match, on a GET or HEAD
	head    bool     // HEAD: the headers of the GET, no body
	status  int      // the handler's status, once it chose one
	buf     bytes.Buffer
	through bool // committed: the head is written, writes go through
	discard bool // committed to a 304, a HEAD or a coded body: no more body goes out
}

// writer is the compressWriter of an answer to r, which it takes
// If-None-Match from, and whose If-Match it gives the identity tags.
func (c *Compression) writer(w http.ResponseWriter, r *http.Request) *compressWriter {
	cw := &compressWriter{ResponseWriter: w, enc: c.enc, coding: contentcoding.Negotiate(r.Header.Values("Accept-Encoding")), head: r.Method == http.MethodHead}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		cw.inm = r.Header.Values("If-None-Match")
		r.Header.Del("If-None-Match")
	}
	if v := r.Header.Values("If-Match"); len(v) > 0 {
		// A client that read the resource coded writes with the coded tag.
		r.Header.Set("If-Match", contentcoding.BaseList(strings.Join(v, ",")))
	}
	return cw
}

func (cw *compressWriter) Unwrap() http.ResponseWriter { return cw.ResponseWriter }

func (cw *compressWriter) WriteHeader(code int) {
	if cw.status != 0 || cw.through || code < 200 {
		return
	}
	cw.status = code
	h := cw.Header()
	if cw.coding == contentcoding.Identity || !bodyAllowed(code) || code == http.StatusPartialContent || h.Get("Content-Encoding") != "" || h.Get("Content-Range") != "" {
		cw.commit(contentcoding.Identity)
		return
	}
	if cl, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil && !contentcoding.Codes(int(min(cl, contentcoding.MaxSize+1))) {
		cw.commit(contentcoding.Identity)
	}
}

func (cw *compressWriter) Write(p []byte) (int, error) {
	if cw.status == 0 {
		cw.WriteHeader(http.StatusOK)
	}
	if cw.discard {
		return len(p), nil
	}
	if cw.through {
		return cw.ResponseWriter.Write(p)
	}
	if cw.buf.Len()+len(p) > contentcoding.MaxSize {
		// Too large to keep: identity, streamed.
		cw.commit(contentcoding.Identity)
		if err := cw.flushBuffer(); err != nil {
			return 0, err
		}
		return cw.Write(p)
	}
	return cw.buf.Write(p)
}

// FlushError sends what there is now: a flushed answer is streamed, so
// identity.
func (cw *compressWriter) FlushError() error {
	if cw.status == 0 {
		cw.WriteHeader(http.StatusOK)
	}
	if !cw.through {
		cw.commit(contentcoding.Identity)
		if err := cw.flushBuffer(); err != nil {
			return err
		}
	}
	return http.NewResponseController(cw.ResponseWriter).Flush()
}

func (cw *compressWriter) flushBuffer() error {
	b := cw.buf.Bytes()
	cw.buf = bytes.Buffer{}
	if cw.discard || len(b) == 0 {
		return nil
	}
	_, err := cw.ResponseWriter.Write(b)
	return err
}

// finish writes what the handler left kept: the body coded when it is
// large enough, identity otherwise.
func (cw *compressWriter) finish() {
	if cw.status == 0 {
		cw.WriteHeader(http.StatusOK)
	}
	if cw.through {
		return
	}
	body := cw.buf.Bytes()
	if cw.coding == contentcoding.Identity || !contentcoding.Codes(len(body)) {
		cw.commit(contentcoding.Identity)
		cw.flushBuffer()
		return
	}
	cw.commit(cw.coding)
}

// commit writes the head of the answer in coding c, or a 304 when the
// client holds it in any coding; with c identity, the body follows as it
// comes, otherwise commit writes the kept body coded. Every answer varies
// by Accept-Encoding, identity ones too: a cache must not give an identity
// answer to a client that asked for br, nor the other way round.
func (cw *compressWriter) commit(c contentcoding.Coding) {
	cw.through = true
	h := cw.Header()
	addVary(h, "Accept-Encoding")
	etag := h.Get("Etag") // the identity tag, as the handler set it
	if etag != "" && c != contentcoding.Identity {
		h.Set("Etag", contentcoding.Tag(etag, c))
	}
	if cw.status == http.StatusOK && len(cw.inm) > 0 && contentcoding.NoneMatch(cw.inm, etag) {
		notModified(cw.ResponseWriter)
		cw.discard = true
		return
	}
	if c == contentcoding.Identity {
		cw.ResponseWriter.WriteHeader(cw.status)
		cw.discard = cw.head
		return
	}
	coded := cw.enc.Encode(cw.buf.Bytes(), c)
	h.Set("Content-Encoding", c.String())
	h.Set("Content-Length", strconv.Itoa(len(coded)))
	cw.ResponseWriter.WriteHeader(cw.status)
	cw.discard = true
	if !cw.head {
		cw.ResponseWriter.Write(coded)
	}
}

// notModified answers 304 with the head set for the 200 it stands for:
// RFC 9110 §15.4.5, its validators and caching headers, no representation
// metadata.
func notModified(w http.ResponseWriter) {
	h := w.Header()
	for _, k := range [...]string{"Content-Length", "Content-Type", "Content-Encoding"} {
		h.Del(k)
	}
	w.WriteHeader(http.StatusNotModified)
}

// bodyAllowed is whether a status has a body (RFC 9110 §6.4.1).
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// addVary adds name to the Vary field unless it is there already (or
// Vary is "*"), in one line with what it lists.
func addVary(h http.Header, name string) {
	vals := h.Values("Vary")
	for _, v := range vals {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "*" || strings.EqualFold(f, name) {
				return
			}
		}
	}
	if len(vals) == 0 {
		h.Set("Vary", name)
		return
	}
	h["Vary"] = []string{strings.Join(vals, ", ") + ", " + name}
}

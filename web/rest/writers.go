package rest

import (
	"bytes"
	"net/http"

	"github.com/wpsidecar/wpsidecar"
)

// answer serves r with h, one of the site's own handlers (a namespace's
// route, or the public routes), through the writers every answer of the
// sidecar's own goes through. The whole chain, outermost first; all but
// the first are composed here:
//
//  1. proxy's statusWriter (proxy/observe.go): the status and size for the
//     access log and the metrics; Flush, Hijack and deadlines reach the
//     connection through it (http.ResponseController, by Unwrap).
//     With prepared answers (serving from the feed), a capture
//     (prepared.go) around the GET or HEAD being built to be kept, which
//     keeps the answer from here on.
//  2. with --compress, a compressWriter (compress.go): the coding
//     negotiated, the body coded, If-None-Match across codings; outside
//     the rest, so that it codes the answer as it goes out.
//  3. a headWriter with outer: read-your-writes' receipt on a namespace's
//     route (readwrites.go), no-store on a public route whose method was
//     overridden (servePublic); none when outer is nil.
//  4. a bufferedWriter, only with _fields, _envelope, _pretty or _jsonp:
//     the answer kept, then reshaped (globals.go) and written to 3.
//  5. a headWriter with the site's cache-tag prefix, on a network
//     (sitetags.go): inside the buffer, so that the tags _envelope moves
//     into the body carry it too.
//  6. h.
func (s *Routes) answer(w http.ResponseWriter, r *http.Request, outer func(http.Header), h http.Handler) {
	if c, ok := w.(*capture); ok {
		c.start(r) // an answer to keep (prepared.go)
	}
	s.coded(w, r, outer, h)
}

// coded is answer from 2 on.
func (s *Routes) coded(w http.ResponseWriter, r *http.Request, outer func(http.Header), h http.Handler) {
	if s.o.Compression != nil {
		cw := s.o.Compression.writer(w, r)
		s.shaped(cw, r, outer, h)
		// Not deferred: after a panic nothing is written, and the
		// recovery's 500 is the answer.
		cw.finish()
		return
	}
	s.shaped(w, r, outer, h)
}

// shaped is answer from 3 on.
func (s *Routes) shaped(w http.ResponseWriter, r *http.Request, outer func(http.Header), h http.Handler) {
	if outer != nil {
		w = &headWriter{ResponseWriter: w, edit: outer}
	}
	g := readGlobals(r.URL.RawQuery)
	if g.jsonp != "" && !jsonpCallback.MatchString(g.jsonp) {
		badCallback(w)
		return
	}
	inner := w
	var buf *bufferedWriter
	if g.any() {
		g.conditionals(r)
		buf = &bufferedWriter{header: w.Header(), status: http.StatusOK}
		inner = buf
	}
	if s.tags != nil {
		inner = &headWriter{ResponseWriter: inner, edit: s.tags}
	}
	h.ServeHTTP(inner, r)
	if buf != nil {
		if buf.status != http.StatusOK {
			// The envelope answers 200 whatever the route did: a failure
			// is never given again all the same.
			wpsidecar.ScopeOf(r.Context()).Refuse()
		}
		g.shape(w, buf)
	}
}

// headWriter edits the answer's header once, just before its head is
// written.
type headWriter struct {
	http.ResponseWriter
	edit func(http.Header)
	done bool
}

func (hw *headWriter) WriteHeader(code int) {
	hw.head()
	hw.ResponseWriter.WriteHeader(code)
}

func (hw *headWriter) Write(b []byte) (int, error) {
	hw.head()
	return hw.ResponseWriter.Write(b)
}

func (hw *headWriter) Unwrap() http.ResponseWriter { return hw.ResponseWriter }

func (hw *headWriter) head() {
	if !hw.done {
		hw.done = true
		hw.edit(hw.Header())
	}
}

// bufferedWriter keeps a handler's answer for the global parameters to
// reshape. It is no wrapper: nothing reaches the connection until shape
// writes the answer.
type bufferedWriter struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(status int) {
	if !b.wrote {
		b.status, b.wrote = status, true
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

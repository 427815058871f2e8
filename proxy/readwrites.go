package proxy

import (
	"context"
	"net/http"
)

// Consistency carries a client's writes to its next reads across
// instances that read replicas (docs/api.md §10): a write's answer names
// its commit, and a read that brings it back sees it.
type Consistency interface {
	// Receipt has the writes made with the returned context note their
	// commit; gtid tells it once they are done ("" when none).
	Receipt(ctx context.Context) (_ context.Context, gtid func() string)
	// ReadAfter has the reads made with the returned context see the
	// commit gtid names (a value that names none changes nothing).
	ReadAfter(ctx context.Context, gtid string) context.Context
}

// The commit a write's answer names, and a later request brings back:
// in a header for any client, in a short-lived cookie for browsers.
const (
	HeaderGTID = "X-WPSidecar-GTID"
	CookieGTID = "wpsidecar_gtid"
	cookieAge  = 60 // seconds: enough for the replicas to catch up
)

// readYourWrites wraps a request to the sidecar's routes: its writes are
// noted, its reads wait for the commit it names.
func (h *Handler) readYourWrites(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	c := h.opts.Consistency
	if c == nil {
		return w, r
	}
	ctx := r.Context()
	gtid := r.Header.Get(HeaderGTID)
	if gtid == "" {
		if ck, err := r.Cookie(CookieGTID); err == nil {
			gtid = ck.Value
		}
	}
	if gtid != "" {
		ctx = c.ReadAfter(ctx, gtid)
	}
	ctx, written := c.Receipt(ctx)
	return &receiptWriter{ResponseWriter: w, written: written}, r.WithContext(ctx)
}

// receiptWriter names the request's commit on its answer.
type receiptWriter struct {
	http.ResponseWriter
	written func() string
	done    bool
}

func (rw *receiptWriter) WriteHeader(code int) {
	if !rw.done {
		rw.done = true
		if g := rw.written(); g != "" {
			rw.Header().Set(HeaderGTID, g)
			http.SetCookie(rw.ResponseWriter, &http.Cookie{Name: CookieGTID, Value: g, Path: "/", MaxAge: cookieAge, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		}
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *receiptWriter) Write(b []byte) (int, error) {
	if !rw.done {
		rw.WriteHeader(http.StatusOK)
	}
	return rw.ResponseWriter.Write(b)
}

func (rw *receiptWriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

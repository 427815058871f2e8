package rest

import (
	"context"
	"net/http"

	"github.com/wpsidecar/wpsidecar"
)

// Consistency carries a client's writes to its next reads across
// instances that read replicas (docs/api.md §10): a write's answer names
// its commit, and a read that brings it back sees it. The request's scope
// (wpsidecar.Scope) carries both between here and the store: the commit
// to read after, and the receipt of the writes.
type Consistency interface {
	// ReadAfter is the commit gtid names, for the reads of a request that
	// brings it back to wait for; nil when it names none (nothing
	// changes).
	ReadAfter(ctx context.Context, gtid string) wpsidecar.GTIDSet
}

// The commit a write's answer names, and a later request brings back:
// in a header for any client, in a short-lived cookie for browsers.
const (
	HeaderGTID = "X-WPSidecar-GTID"
	CookieGTID = "wpsidecar_gtid"
	cookieAge  = 60 // seconds: enough for the replicas to catch up
)

// readYourWrites prepares a request to the sidecar's routes: its reads
// wait for the commit it names, its writes are noted, and receipt names
// their commit on the answer's head (nil without Consistency). Both are
// told to a level of the request's scope made here: only this request,
// from here on, reads after that commit and notes its writes — not what
// was started with the request's context before (a site's services built
// on its first request), nor the requests passed to PHP.
func (s *Routes) readYourWrites(r *http.Request) (_ *http.Request, receipt func(http.Header)) {
	c := s.o.Consistency
	if c == nil {
		return r, nil
	}
	ctx, scope := wpsidecar.WithScope(r.Context())
	gtid := r.Header.Get(HeaderGTID)
	if gtid == "" {
		if ck, err := r.Cookie(CookieGTID); err == nil {
			gtid = ck.Value
		}
	}
	if gtid != "" {
		if set := c.ReadAfter(ctx, gtid); set != nil {
			scope.ReadAfter(set)
		}
	}
	scope.NoteWrites()
	return r.WithContext(ctx), func(h http.Header) {
		if g := scope.Receipt(); g != "" {
			h.Set(HeaderGTID, g)
			// As http.SetCookie adds it.
			if v := (&http.Cookie{Name: CookieGTID, Value: g, Path: "/", MaxAge: cookieAge, HttpOnly: true, SameSite: http.SameSiteLaxMode}).String(); v != "" {
				h.Add("Set-Cookie", v)
			}
		}
	}
}

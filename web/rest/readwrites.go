package rest

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

// readYourWrites prepares a request to the sidecar's routes: its reads
// wait for the commit it names, its writes are noted, and receipt names
// their commit on the answer's head (nil without Consistency).
func (s *Routes) readYourWrites(r *http.Request) (_ *http.Request, receipt func(http.Header)) {
	c := s.o.Consistency
	if c == nil {
		return r, nil
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
	return r.WithContext(ctx), func(h http.Header) {
		if g := written(); g != "" {
			h.Set(HeaderGTID, g)
			// As http.SetCookie adds it.
			if v := (&http.Cookie{Name: CookieGTID, Value: g, Path: "/", MaxAge: cookieAge, HttpOnly: true, SameSite: http.SameSiteLaxMode}).String(); v != "" {
				h.Add("Set-Cookie", v)
			}
		}
	}
}

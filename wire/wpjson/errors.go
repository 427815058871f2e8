package wpjson

import (
	"context"
	"errors"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
)

// The sidecar's own answers, the same on every route.
var (
	// ErrDBUnavailable is the answer while the database is down.
	ErrDBUnavailable = &Error{
		Status:  http.StatusServiceUnavailable,
		Code:    "wpsidecar_db_unavailable",
		Message: "The WordPress database is not available right now. Please try again shortly.",
		Header:  http.Header{"Retry-After": {"5"}},
	}
	// ErrPreconditionFailed is the answer to a write whose If-Match names
	// a state that is no longer stored (docs/api.md §5).
	ErrPreconditionFailed = &Error{
		Status:  http.StatusPreconditionFailed,
		Code:    "wpsidecar_precondition_failed",
		Message: "The resource has changed since it was read (If-Match does not match its current ETag); read it again and retry.",
	}
	// ErrBusy is the answer when every database connection stayed in use
	// for longer than a request may wait for one, or the memory of the
	// argon2 checks for longer than a password check may wait for it.
	ErrBusy = &Error{
		Status:  http.StatusServiceUnavailable,
		Code:    "wpsidecar_busy",
		Message: "The sidecar is too busy to answer right now. Please try again shortly.",
		Header:  http.Header{"Retry-After": {"1"}},
	}
	// ErrTooLarge is the answer to a body over the sidecar's limit.
	ErrTooLarge = &Error{Status: http.StatusRequestEntityTooLarge, Code: "wpsidecar_body_too_large", Message: "The request body is too large."}
	// ErrInternal is the answer to anything the sidecar cannot name.
	ErrInternal = &Error{Status: http.StatusInternalServerError, Code: "wpsidecar_internal_error", Message: "The sidecar failed to answer this request."}
)

// WithStatus is e with another status (e itself is shared, not changed).
func (e *Error) WithStatus(status int) *Error {
	c := *e
	c.Status = status
	return &c
}

// AsBare is e in the fieldmgr namespace's {"error": message} shape, which
// has no code (e itself is shared, not changed).
func (e *Error) AsBare() *Error {
	c := *e
	c.Code, c.Bare = "", true
	return &c
}

// unavailable marks an error that means "the database cannot be used
// now" (store.ErrUnavailable has the method) rather than a fault.
type unavailable interface{ Unavailable() bool }

func isBusy(err error) bool {
	var b interface{ Busy() bool }
	return errors.As(err, &b) && b.Busy()
}

// IsUnavailable tells whether err is, or wraps, such an error.
func IsUnavailable(err error) bool {
	var u unavailable
	return errors.As(err, &u) && u.Unavailable()
}

// Render answers err: an *Error as it says, no connection free in time as
// ErrBusy, a database that cannot be used as ErrDBUnavailable, a client that went away not at all, anything
// else as ErrInternal, logged. It is the one place errors become answers.
// On a route Register added, the answer carries the no-cache headers when
// WordPress's would (RouteInfo.DBVersion, LoggedIn): forced by a nonce
// that does not verify, as rest_cookie_check_errors forces them.
func Render(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	switch {
	case errors.As(err, &e):
	case isBusy(err):
		e = ErrBusy
	case IsUnavailable(err):
		e = ErrDBUnavailable
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		return // nobody reads an answer
	default:
		zerolog.Ctx(r.Context()).Error().Err(err).Msg("request failed on a server error")
		e = ErrInternal
	}
	if info, ok := infoOf(r); ok {
		info.noCache(w.Header(), r, e.Status, e.Code == "rest_cookie_invalid_nonce")
	}
	// A failure is never given again, whatever status an envelope gives it.
	wpsidecar.ScopeOf(r.Context()).Refuse()
	WriteError(w, e)
}

// HandlerFunc is a handler that returns its failure instead of writing it.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ServeHTTP runs f and renders what it returns.
func (f HandlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := f(w, r); err != nil {
		Render(w, r, err)
	}
}

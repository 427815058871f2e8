package wpjson

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/store"
)

// ErrPreconditionFailed is the answer to a write whose If-Match names a
// state that is no longer stored (docs/api.md §5).
var ErrPreconditionFailed = &Error{
	Status:  http.StatusPreconditionFailed,
	Code:    "wpsidecar_precondition_failed",
	Message: "The resource has changed since it was read (If-Match does not match its current ETag); read it again and retry.",
}

// ErrDBUnavailable is the contract's answer while the database is down.
var ErrDBUnavailable = &Error{
	Status:  http.StatusServiceUnavailable,
	Code:    "wpsidecar_db_unavailable",
	Message: "The WordPress database is not available right now. Please try again shortly.",
	Header:  http.Header{"Retry-After": {"5"}},
}

// AuthFail renders what auth.Require decided, in WordPress's error shape:
// the failure with its status, 503 when the database failed, 500 otherwise.
func AuthFail(w http.ResponseWriter, r *http.Request, status int, f *auth.Failure, err error) {
	switch {
	case f != nil:
		e := &Error{Status: status, Code: f.Code, Message: f.Message}
		if f.RetryAfter > 0 {
			e.Header = http.Header{"Retry-After": {strconv.Itoa(int(f.RetryAfter / time.Second))}}
		}
		WriteError(w, e)
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads an answer.
	case errors.Is(err, store.ErrUnavailable):
		WriteError(w, ErrDBUnavailable)
	default:
		zerolog.Ctx(r.Context()).Error().Err(err).Msg("authentication failed on a server error")
		WriteError(w, &Error{Status: http.StatusInternalServerError, Code: "wpsidecar_internal_error", Message: "The sidecar failed to answer this request."})
	}
}

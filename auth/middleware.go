package auth

import (
	"context"
	"errors"
	"net/http"

	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/wpjson"
)

type identityKey struct{}

// A Ride is a read a route declares to ride along with the user lookup of
// its authentication, as a second statement in the same round trip: a
// route that reads one thing costs one database round trip with
// authentication. Its result is for the handler once Permit let the
// request through; when no lookup runs (anonymous), it has not run either.
type Ride interface {
	Piggyback() *store.Piggyback
}

// identity is what Identify found: the user (nil when anonymous) and the
// route's ride-along read.
type identity struct {
	user *User
	ride Ride
}

// UserFrom is the authenticated user a request carries, or nil.
func UserFrom(ctx context.Context) *User {
	id, _ := ctx.Value(identityKey{}).(identity)
	return id.user
}

// RideFrom is the ride-along read the request's route declared (nil
// without one), as the route gave it.
func RideFrom(ctx context.Context) Ride {
	id, _ := ctx.Value(identityKey{}).(identity)
	return id.ride
}

// Identify authenticates every request as WordPress does before it
// dispatches (rest_authentication_errors): bad credentials, a bad nonce or
// a throttled client fail at once; otherwise the user (nil when anonymous)
// rides in the request's context for Permit. When the request's nonce
// verified, the answer carries a fresh X-WP-Nonce, whatever comes next
// (a rest_forbidden included), as WordPress sends one. Failures without a
// status of their own (bad credentials) take unauthStatus: 401 for
// fieldmgr, 403 for themeopts. ride, when not nil, declares the request's
// ride-along read (nil: none); the handler finds it with RideFrom.
func (a *Authenticator) Identify(unauthStatus int, ride func(*http.Request) Ride) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var read Ride
			var pb *store.Piggyback
			if ride != nil {
				if read = ride(r); read != nil {
					pb = read.Piggyback()
				}
			}
			u, fresh, err := a.authenticate(r, pb)
			var f *wpjson.Error
			if errors.As(err, &f) && f.Status == 0 {
				err = f.WithStatus(unauthStatus)
			}
			if err != nil {
				wpjson.Render(w, r, err)
				return
			}
			if fresh != "" {
				w.Header().Set("X-WP-Nonce", fresh)
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, identity{user: u, ride: read})))
		})
	}
}

// Permit lets through only users Identify found with the capability
// returned by capability(r): otherwise unauthenticated is unauthStatus
// with rest_forbidden, a missing capability 403. An empty capability lets
// anonymous requests through too (WordPress's OPTIONS answers need no
// permission).
func (a *Authenticator) Permit(capability func(*http.Request) string, unauthStatus int) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, need := UserFrom(r.Context()), capability(r)
			switch {
			case need == "":
			case u == nil:
				wpjson.Render(w, r, ErrForbidden.WithStatus(unauthStatus))
				return
			case !u.Can(need):
				wpjson.Render(w, r, errNoCap)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Require is Identify then Permit, for routes that check no request body
// in between.
func (a *Authenticator) Require(capability func(*http.Request) string, unauthStatus int) func(http.Handler) http.Handler {
	identify, permit := a.Identify(unauthStatus, nil), a.Permit(capability, unauthStatus)
	return func(next http.Handler) http.Handler { return identify(permit(next)) }
}

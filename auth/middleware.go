package auth

import (
	"context"
	"net/http"
)

type userKey struct{}

// UserFrom is the authenticated user a request carries, or nil.
func UserFrom(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}

// Fail renders an authentication failure. status is the HTTP status the
// contract gives it; err is set instead of f when the database failed.
type Fail func(w http.ResponseWriter, r *http.Request, status int, f *Failure, err error)

// Identify authenticates every request as WordPress does before it
// dispatches (rest_authentication_errors): bad credentials, a bad nonce or
// a throttled client fail at once; otherwise the user (nil when anonymous)
// rides in the request's context for Permit. When the request's nonce
// verified, the answer carries a fresh X-WP-Nonce, whatever comes next
// (a rest_forbidden included), as WordPress sends one. Failures without a
// status of their own (bad credentials) take unauthStatus.
func (a *Authenticator) Identify(unauthStatus int, fail Fail) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, fresh, err := a.authenticate(r)
			if f, ok := err.(*Failure); ok {
				status := f.Status
				if status == 0 {
					status = unauthStatus
				}
				fail(w, r, status, f, nil)
				return
			}
			if err != nil {
				fail(w, r, 0, nil, err)
				return
			}
			if fresh != "" {
				w.Header().Set("X-WP-Nonce", fresh)
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
		})
	}
}

// Permit lets through only users Identify found with the capability
// returned by capability(r), with the contract's answers otherwise:
// unauthenticated is unauthStatus (401 for fieldmgr, 403 for themeopts)
// with rest_forbidden, a missing capability 403. An empty capability lets
// anonymous requests through too (WordPress's OPTIONS answers need no
// permission).
func (a *Authenticator) Permit(capability func(*http.Request) string, unauthStatus int, fail Fail) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, need := UserFrom(r.Context()), capability(r)
			switch {
			case need == "":
			case u == nil:
				fail(w, r, unauthStatus, ErrForbidden, nil)
				return
			case !u.Can(need):
				fail(w, r, http.StatusForbidden, errNoCap, nil)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Require is Identify then Permit, for routes that check no request body
// in between.
func (a *Authenticator) Require(capability func(*http.Request) string, unauthStatus int, fail Fail) func(http.Handler) http.Handler {
	identify, permit := a.Identify(unauthStatus, fail), a.Permit(capability, unauthStatus, fail)
	return func(next http.Handler) http.Handler { return identify(permit(next)) }
}

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

// Require authenticates every request and lets through only users with the
// capability returned by capability(r), with the contract's answers
// otherwise: unauthenticated is unauthStatus (401 for fieldmgr, 403 for
// themeopts) with rest_forbidden or WordPress's credential code; a bad
// nonce or a missing capability is 403. An empty capability lets anonymous
// requests through too (WordPress's OPTIONS answers need no permission),
// while bad credentials still fail. After a cookie and nonce, the response
// carries a fresh X-WP-Nonce, as WordPress sends.
func (a *Authenticator) Require(capability func(*http.Request) string, unauthStatus int, fail Fail) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, err := a.Authenticate(r)
			if err != nil {
				if f, ok := err.(*Failure); ok {
					status := f.Status
					if status == 0 {
						status = unauthStatus
					}
					fail(w, r, status, f, nil)
					return
				}
				fail(w, r, 0, nil, err)
				return
			}
			need := capability(r)
			if u == nil && need != "" {
				fail(w, r, unauthStatus, ErrForbidden, nil)
				return
			}
			if u != nil && need != "" && !u.Can(need) {
				fail(w, r, http.StatusForbidden, errNoCap, nil)
				return
			}
			if u != nil && u.freshNonce != "" {
				w.Header().Set("X-WP-Nonce", u.freshNonce)
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
		})
	}
}

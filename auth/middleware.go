package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// A Ride is a read a route declares to ride along with the user lookup of
// its authentication, as a second statement in the same round trip: a
// route that reads one thing costs one database round trip with
// authentication. It rides only with credentials that authenticated
// before (so a forged cookie costs the database the lookup alone, however
// much the route reads). Its result is for the handler once Permit let
// the request through; when it did not ride, the handler reads alone.
type Ride interface {
	Piggyback() *store.Piggyback
}

// Identity is the user's id and login, as the request's scope names who
// it is (wpsidecar.Identity).
func (u *User) Identity() (int64, string) { return u.ID, u.Login }

// UserFrom is the authenticated user a request carries (Identify put it
// in the request's scope), or nil.
func UserFrom(ctx context.Context) *User {
	u, _ := wpsidecar.ScopeOf(ctx).Who().(*User)
	return u
}

// AuthorOf is who a request's writes are by, for the history: its user
// and its request id (the outermost layer gives every request one).
func AuthorOf(r *http.Request) wpsidecar.Author {
	a := wpsidecar.Author{Via: wpsidecar.ViaREST, RequestID: strings.ToValidUTF8(r.Header.Get("X-Request-Id"), "?")}
	if u := UserFrom(r.Context()); u != nil {
		a.UserID, a.Login = u.ID, u.Login
	}
	return a
}

// RideFrom is the ride-along read the request's route declared (nil
// without one), as the route gave it.
func RideFrom(ctx context.Context) Ride {
	r, _ := wpsidecar.ScopeOf(ctx).Ride().(Ride)
	return r
}

// Identify authenticates every request as WordPress does before it
// dispatches (rest_authentication_errors): bad credentials, a bad nonce or
// a throttled client fail at once; otherwise the user (nil when anonymous)
// is recorded in a level of the request's scope made for what comes next
// (wpsidecar.Scope.Identify), for Permit and the handler. When the
// request's nonce verified, the answer carries a fresh X-WP-Nonce,
// whatever comes next (a rest_forbidden included), as WordPress sends
// one. Failures without a status of their own (bad credentials) take
// unauthStatus: 401 for fieldmgr, 403 for themeopts. ride, when not nil,
// declares the request's ride-along read (nil: none); the handler finds
// it with RideFrom.
func (a *Authenticator) Identify(unauthStatus int, ride func(*http.Request) Ride) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Only credentials that authenticated before carry the route's
			// read: a request that has not proven who it is costs the
			// database the user lookup alone, whatever the route reads.
			var read Ride
			var pb *store.Piggyback
			cred := a.credential(r)
			vouched := cred != "" && a.checks.has(cred)
			if ride != nil && vouched {
				if read = ride(r); read != nil {
					pb = read.Piggyback()
				}
			}
			u, fresh, err := a.authenticate(r, pb)
			switch {
			case u != nil && !vouched && cred != "":
				a.checks.add(u.ID, cred) // kept for u: its successes push out only its own
			case u == nil && vouched:
				a.checks.remove(cred) // revoked, or logged out
			}
			var f *wpjson.Error
			if errors.As(err, &f) && f.Status == 0 {
				err = f.WithStatus(unauthStatus)
			}
			if err != nil {
				wpjson.Render(w, r, err)
				return
			}
			ctx, scope := wpsidecar.WithScope(r.Context())
			if u != nil && !u.until.IsZero() {
				scope.Until(u.until) // what authenticated holds only so long: so does a kept answer
			}
			if fresh.value != "" {
				w.Header().Set("X-WP-Nonce", fresh.value)
				scope.Until(fresh.until)
			}
			var who wpsidecar.Identity // a nil *User is no one, not a typed nil
			if u != nil {
				who = u
			}
			var ride any
			if read != nil {
				ride = read
			}
			scope.Identify(who, ride)
			next.ServeHTTP(w, r.WithContext(ctx))
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

// credential is what authenticates a request, as the client sent it,
// keyed (a hash with a secret of the process): the Authorization header and
// the values of the site's own auth cookies (the auth cookie of either
// scheme, the logged-in cookie). Nothing else of the request is part of it:
// other cookies, which a client can vary at will, do not make another
// credential. "" when the request carries none of them.
func (a *Authenticator) credential(r *http.Request) string {
	authz := r.Header.Get("Authorization")
	var cookies []string
	if site, err := a.site(); err == nil {
		all := r.Header.Values("Cookie")
		for _, name := range []string{site.auth, site.secure, site.cookie} {
			if v, ok := cookieValue(all, name); ok {
				cookies = append(cookies, name+"="+v)
			}
		}
	}
	if authz == "" && len(cookies) == 0 {
		return ""
	}
	return a.checks.key("request", 0, authz, strings.Join(cookies, "\x00"))
}

package auth

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
)

// cookieUser is determine_current_user's cookie part: the auth cookie for
// the request's scheme, then the logged-in cookie. cookieOK reports that a
// cookie validated up to its HMAC (WordPress's auth_cookie_valid).
func (a *Authenticator) cookieUser(ctx context.Context, r *http.Request, site *derived, cookies []string, now time.Time, ride *store.Piggyback) (*User, bool, error) {
	authName, authScheme := site.auth, SchemeAuth
	if a.o.IsSecure(r) {
		authName, authScheme = site.secure, SchemeSecureAuth
	}
	cookieOK := false
	for _, c := range []struct{ name, scheme string }{{authName, authScheme}, {site.cookie, SchemeLoggedIn}} {
		raw, ok := cookieValue(cookies, c.name)
		if !ok {
			continue
		}
		u, status, err := a.validateCookie(ctx, r, site, raw, c.scheme, now, ride)
		if err != nil {
			return nil, false, err
		}
		if status != cookieUntracked {
			cookieOK = status == cookieValid
		}
		if u != nil {
			return u, true, nil
		}
	}
	return nil, cookieOK, nil
}

// Cookie statuses as rest_cookie_collect_status records them: a cookie
// whose session is gone leaves the status as it was.
const (
	cookieBad = iota
	cookieValid
	cookieUntracked
)

// validateCookie is wp_validate_auth_cookie.
func (a *Authenticator) validateCookie(ctx context.Context, r *http.Request, site *derived, raw, scheme string, now time.Time, ride *store.Piggyback) (*User, int, error) {
	c, err := parseAuthCookie(raw)
	if err != nil || c.Expired(now, r.Method == http.MethodPost) {
		return nil, cookieBad, nil
	}
	u, err := a.o.Store.UserForAuth(ctx, c.Login, false, ride, a.metaKeys()...)
	if errors.Is(err, wpsidecar.ErrNotFound) {
		return nil, cookieBad, nil
	}
	if err != nil {
		return nil, cookieBad, err
	}
	ok, err := site.salts.cookieMatches(c, u.Pass, scheme, site.version)
	if err != nil {
		a.o.Log.Warn().Err(err).Msg("cookie cannot be verified: keys and salts are neither configured nor stored")
		return nil, cookieBad, nil
	}
	if !ok {
		return nil, cookieBad, nil
	}
	session, ok := sessionEnd(u.Meta[store.MetaSessionTokens], TokenVerifier(c.Token))
	if !ok || session < now.Unix() {
		return nil, cookieUntracked, nil
	}
	user := a.user(u, site, "cookie")
	last, _ := c.lastSecond(r.Method == http.MethodPost)
	user.until = time.Unix(min(last, session)+1, 0)
	return user, cookieValid, nil
}

// sessionValid: the verifier is a key of session_tokens whose expiration
// has not passed.
func sessionValid(raw, verifier string, now time.Time) bool {
	e, ok := sessionEnd(raw, verifier)
	return ok && e >= now.Unix()
}

// sessionEnd is the expiration of the session_tokens entry of verifier (a
// bare integer is the expiration, the legacy form); false when there is
// none.
func sessionEnd(raw, verifier string) (int64, bool) {
	v, err := phpserial.Unserialize(raw)
	if err != nil || v.Kind != phpserial.Array {
		return 0, false
	}
	s, ok := v.Get(verifier)
	if !ok {
		return 0, false
	}
	exp := s
	if s.Kind == phpserial.Array {
		if exp, ok = s.Get("expiration"); !ok {
			return 0, false
		}
	}
	return exp.AsInt()
}

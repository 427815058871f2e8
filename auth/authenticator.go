package auth

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// User is who a request authenticated as.
type User struct {
	ID    int64
	Login string
	// Via says how: "cookie", "application_password" or "basic_password".
	Via  string
	caps Caps
	// until is when what authenticated the user stops holding by itself,
	// without any change in the database (a cookie's or its session's
	// expiry, an application password's use due to be recorded); zero:
	// never.
	until time.Time
}

// Can tells whether the user has a capability.
func (u *User) Can(capability string) bool { return u != nil && u.caps.Can(capability) }

// The failures of the contract's table (docs/api.md §1).
var (
	ErrForbidden = &wpjson.Error{Code: "rest_forbidden", Message: "Sorry, you are not allowed to do that."}
	ErrBadNonce  = &wpjson.Error{Code: "rest_cookie_invalid_nonce", Message: "Cookie check failed", Status: http.StatusForbidden}
	errNoCap     = &wpjson.Error{Code: "rest_forbidden", Message: "Sorry, you are not allowed to do that.", Status: http.StatusForbidden}
	errBadAppPW  = &wpjson.Error{Code: "incorrect_password", Message: "The provided password is an invalid application password."}
	errUnknownU  = &wpjson.Error{Code: "invalid_username", Message: "<strong>Error:</strong> Unknown username. Check again or try your email address."}
	errUnknownE  = &wpjson.Error{Code: "invalid_email", Message: "<strong>Error:</strong> Unknown email address. Check again or try your username."}
)

// Options configure an Authenticator.
type Options struct {
	Store *store.DB
	// Settings is the snapshot roles, salts and flags come from.
	Settings store.Settings
	// Keys are the wp-config.php keys and salts that are set.
	Keys map[string]string
	// EnvironmentType is WordPress's; "local" allows application passwords
	// over plain HTTP.
	EnvironmentType string
	// BasicAuthPasswords accepts HTTP Basic with the account password.
	BasicAuthPasswords bool
	// IsSecure tells whether the client's connection is HTTPS (TLS at the
	// sidecar or X-Forwarded-Proto https from a trusted proxy).
	IsSecure func(*http.Request) bool
	// ClientIP is the client's address (believed from trusted proxies
	// only): an application password's last_ip, and the key of Throttle.
	ClientIP func(*http.Request) string
	// Throttle, when set, limits failed Basic authentication per client
	// and per account, counting the checks in flight.
	Throttle *Throttle
	// Argon2Memory is the memory the argon2 checks running at once may
	// hold, shared by every site (nil: a budget of 1 GiB of its own).
	Argon2Memory *MemoryBudget
	// Report, when set, is told of every failed Basic authentication, for
	// the companion plugin; it must not block.
	Report func(FailedAttempt)
	// Observe, when set, hears of every failed Basic authentication
	// ("failure", "") and every attempt refused by Throttle ("throttled",
	// "ip" or "account"), for metrics.
	Observe func(event, scope string)
	Log     zerolog.Logger
	Now     func() time.Time
}

// Authenticator verifies requests as WordPress does.
type Authenticator struct {
	o          Options
	background sync.WaitGroup // application-password uses being recorded, hashes being rewritten
	derived    atomic.Pointer[derived]
	checks     *checkCache
	rehashed   *checkCache // the (user, old hash) pairs a rewrite was started for

	parsedMu sync.Mutex
	parsed   map[string][]appPassword // see appPasswords
}

// derived is what the authenticator computes once per settings snapshot.
type derived struct {
	readAt time.Time
	salts  *Salts
	roles  Roles
	admins map[string]bool // multisite super admins by login
	// caps remembers computed capabilities by the serialized
	// {prefix}capabilities value: a site has few distinct ones, and the
	// snapshot (with the roles) is replaced when roles change.
	caps      sync.Map
	capsCount atomic.Int64
	version   Version
	siteURL   string
	appPWs    bool   // the site's using_application_passwords flag
	policy    Policy // the companion plugin's decisions
	cookie    string // logged-in cookie name
	auth      string
	secure    string
}

// New builds an Authenticator.
func New(o Options) *Authenticator {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IsSecure == nil {
		o.IsSecure = func(r *http.Request) bool { return r.TLS != nil }
	}
	if o.Observe == nil {
		o.Observe = func(string, string) {}
	}
	if o.Argon2Memory == nil {
		o.Argon2Memory = NewMemoryBudget(argon2MaxMemoryKiB << 10)
	}
	if o.Report == nil {
		o.Report = func(FailedAttempt) {}
	}
	if o.ClientIP == nil {
		o.ClientIP = func(r *http.Request) string {
			h, _, _ := net.SplitHostPort(r.RemoteAddr)
			return h
		}
	}
	return &Authenticator{o: o, checks: newCheckCache(checksPerUser, checksUsers), rehashed: newCheckCache(2, 1024), parsed: map[string][]appPassword{}}
}

func (a *Authenticator) site() (*derived, error) {
	s, err := a.o.Settings.Current()
	if err != nil {
		return nil, err
	}
	if d := a.derived.Load(); d != nil && d.readAt.Equal(s.ReadAt) {
		return d, nil
	}
	roles, err := parseRoles(s.UserRoles)
	if err != nil {
		a.o.Log.Warn().Err(err).Msg("user_roles option unreadable; no role grants any capability")
	}
	h := CookieHash(s.SiteURL)
	if s.Multisite {
		h = CookieHash(s.NetworkSiteURL)
	}
	policy, err := parsePolicy(s.Companion)
	if err != nil {
		a.o.Log.Warn().Err(err).Msg("wpsidecar_companion option unreadable; the companion plugin's decisions are not applied")
	}
	d := &derived{readAt: s.ReadAt, siteURL: s.SiteURL, appPWs: s.UsingAppPasswords, policy: policy, salts: NewSalts(a.o.Keys, s.SaltOptions), roles: roles, version: versionOf(s.DBVersion),
		cookie: LoggedInCookieName(h), auth: authCookieName(h), secure: secureAuthCookieName(h)}
	if s.Multisite {
		d.admins = map[string]bool{}
		for _, login := range siteAdmins(s.SiteAdmins, s.HasSiteAdmins) {
			d.admins[login] = true
		}
	}
	a.derived.Store(d)
	return d, nil
}

// metaKeys are the user meta every authentication reads.
func (a *Authenticator) metaKeys() []string {
	return []string{a.o.Store.CapabilitiesKey(), store.MetaSessionTokens, store.MetaApplicationPasswords}
}

// Authenticate decides who r is, in WordPress's order: auth cookies, then
// (without a cookie user) an application password, then (when enabled) the
// account password over Basic; then the REST nonce rule. A nil user and nil
// error is an anonymous request. Database failures are returned as errors
// wrapping store.ErrUnavailable.
func (a *Authenticator) Authenticate(r *http.Request) (*User, error) {
	u, _, err := a.authenticate(r, nil)
	return u, err
}

// freshNonce is the wp_rest nonce WordPress sends back whenever a
// request's nonce verified, and the end of the tick it was made for.
type freshNonce struct {
	value string
	until time.Time
}

// authenticate is Authenticate, also giving the fresh nonce (value ""
// when none; for the anonymous user too). ride, when not nil, is read in
// the round trip of the user lookup (see Ride).
func (a *Authenticator) authenticate(r *http.Request, ride *store.Piggyback) (*User, freshNonce, error) {
	var none freshNonce
	site, err := a.site()
	if err != nil {
		return nil, none, err
	}
	ctx := r.Context()
	now := a.o.Now()
	cookies := r.Header.Values("Cookie")

	// The nonce's token comes from the logged-in cookie even when that
	// cookie does not validate.
	token := ""
	if raw, ok := cookieValue(cookies, site.cookie); ok {
		if c, err := parseAuthCookie(raw); err == nil {
			token = c.Token
		}
	}

	user, cookieOK, err := a.cookieUser(ctx, r, site, cookies, now, ride)
	if err != nil {
		return nil, none, err
	}
	var failure *wpjson.Error
	if user == nil {
		user, failure, err = a.basicUser(ctx, r, site, now, ride)
		if err != nil {
			return nil, none, err
		}
	}

	// rest_cookie_check_errors.
	if !cookieOK && user != nil {
		return user, none, nil
	}
	// A site closed to anonymous REST requests (a rest_authentication_errors
	// filter, which runs before core's credential checks) answers its own
	// error to anyone no cookie or password let in.
	if anon := site.policy.anonymous(); anon != nil && user == nil && !cookieOK && (failure == nil || failure.Status != http.StatusTooManyRequests) {
		return nil, none, anon
	}
	if failure != nil {
		return nil, none, failure
	}
	nonce, hasNonce := requestNonce(r)
	if !hasNonce {
		return nil, none, nil // a cookie without a nonce is not logged in
	}
	uid := int64(0)
	if user != nil {
		uid = user.ID
	}
	if site.salts.VerifyNonce(nonce, "wp_rest", uid, token, now) == 0 {
		return nil, none, ErrBadNonce
	}
	fresh, _ := site.salts.Nonce(NonceTick(now), "wp_rest", uid, token)
	return user, freshNonce{fresh, NonceTickEnd(now)}, nil
}

// requestNonce is the REST nonce as WordPress reads it: _wpnonce from
// $_REQUEST (a POST form body's, else the query's; the last of repeated
// ones, as PHP keeps it), else the X-WP-Nonce header.
func requestNonce(r *http.Request) (string, bool) {
	if v, ok := formValue(r, "_wpnonce"); ok {
		return v, true
	}
	if vs, ok := r.URL.Query()["_wpnonce"]; ok {
		return vs[len(vs)-1], true
	}
	if h, ok := r.Header["X-Wp-Nonce"]; ok {
		return h[0], true
	}
	return "", false
}

// formValue reads name from a POST's urlencoded form body, as PHP fills
// $_POST, and leaves the body for the handler as it was.
func formValue(r *http.Request, name string) (string, bool) {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return "", false
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return "", false
	}
	b, err := io.ReadAll(r.Body)
	rest := io.Reader(bytes.NewReader(b))
	if err != nil {
		rest = io.MultiReader(rest, errReader{err})
	}
	r.Body = io.NopCloser(rest)
	vals, _ := url.ParseQuery(string(b))
	if vs, ok := vals[name]; ok && err == nil {
		return vs[len(vs)-1], true
	}
	return "", false
}

// errReader replays a body's read error after what was read of it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// Wait waits for the uses of application passwords still being recorded
// and the password hashes still being rewritten (each write is bounded by
// five seconds), before the database closes.
func (a *Authenticator) Wait() { a.background.Wait() }

// touch records the use in the background: a request never waits for it
// nor fails because of it.
func (a *Authenticator) touch(ctx context.Context, r *http.Request, userID int64, uuid string, now time.Time) {
	ip := a.o.ClientIP(r)
	a.background.Add(1)
	go func() {
		defer a.background.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := a.o.Store.TouchApplicationPassword(ctx, userID, uuid, ip, now); err != nil {
			a.o.Log.Warn().Err(err).Int64("user_id", userID).Msg("could not record application password use")
		}
	}()
}

func (a *Authenticator) user(u *store.User, site *derived, via string) *User {
	raw, super := u.Meta[a.o.Store.CapabilitiesKey()], site.admins[u.Login]
	key := raw
	if super {
		key = "\x00super\x00" + raw
	}
	if c, ok := site.caps.Load(key); ok {
		return &User{ID: u.ID, Login: u.Login, Via: via, caps: c.(Caps)}
	}
	c := userCaps(raw, site.roles, super)
	if site.capsCount.Add(1) <= maxCachedCaps {
		site.caps.Store(key, c)
	}
	return &User{ID: u.ID, Login: u.Login, Via: via, caps: c}
}

// maxCachedCaps bounds the capabilities cache of one snapshot.
const maxCachedCaps = 1024

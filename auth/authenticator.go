package auth

import (
	"bytes"
	"container/list"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/auth/wplogin"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/wpjson"
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

// basicUser handles HTTP Basic: an application password when they are
// available, then the account password when enabled.
func (a *Authenticator) basicUser(ctx context.Context, r *http.Request, site *derived, now time.Time, ride *store.Piggyback) (*User, *wpjson.Error, error) {
	login, password, ok := parseBasic(r.Header.Get("Authorization"))
	if !ok {
		return nil, nil, nil
	}
	appAvailable := (a.o.IsSecure(r) || a.o.EnvironmentType == "local") && site.policy.appPasswords()
	if appAvailable && !site.appPWs {
		// WordPress sets the flag when the site's first application password
		// is made; read it now rather than refuse that password until the
		// next settings refresh. Only sites that never made one pay this.
		in, err := a.o.Store.UsingApplicationPasswords(ctx)
		if err != nil {
			return nil, nil, err
		}
		appAvailable = in
	}
	if !appAvailable && !a.o.BasicAuthPasswords {
		return nil, nil, nil // WordPress ignores the header
	}
	// A client out of attempts is refused before anything is checked. An
	// account out of attempts (many clients guessing) still accepts a
	// credential that was verified before, which reveals nothing new, so
	// the account's own integrations keep working under attack. The
	// account is the user found, as WordPress finds it (any spelling of
	// the login, the e-mail), so every spelling shares its attempts; all
	// unknown logins share one bucket.
	client := ClientKey(a.o.ClientIP(r))
	if wait := a.o.Throttle.IPWait(client, now); wait > 0 {
		a.o.Observe("throttled", "ip")
		return nil, throttled(wait), nil
	}
	u, err := a.o.Store.UserForAuth(ctx, login, wplogin.LooksLikeEmail(login), ride, a.metaKeys()...)
	known := err == nil
	if err != nil && !errors.Is(err, wpsidecar.ErrNotFound) {
		return nil, nil, err
	}
	account := unknownAccount
	if known {
		account = userAccount(u.ID)
	}
	accountWait := a.o.Throttle.AccountWait(account, now)
	c := checker{ctx: ctx, argon2: a.o.Argon2Memory, busy: new(bool)}
	kind := "password"
	if appAvailable {
		kind = "application_password"
	}
	// A check runs only while the account is not out of attempts, and
	// holds one attempt of the client and one of the account until it
	// ends (Throttle.Hold), so that checks in flight count as failures do.
	held, ipWait := false, time.Duration(0)
	may := func() bool {
		if accountWait > 0 || ipWait > 0 {
			return false
		}
		if !held {
			switch scope, wait := a.o.Throttle.Hold(client, account, now); scope {
			case "ip":
				ipWait = wait
			case "account":
				accountWait = wait
			default:
				held = true
			}
		}
		return held
	}
	succeed := func(u *User) (*User, *wpjson.Error, error) {
		if held {
			a.o.Throttle.Release(client, account, now)
		}
		return u, nil, nil
	}
	fail := func(f *wpjson.Error) (*User, *wpjson.Error, error) {
		if ipWait > 0 { // no check ran: refused as a client out of attempts
			a.o.Observe("throttled", "ip")
			return nil, throttled(ipWait), nil
		}
		if err := c.verdictless(); err != nil {
			// The client has gone, or no memory came free in time: its check
			// stopped or never started. No verdict to report, but the
			// attempt is charged to the client, so that requests abandoned
			// or queued by the thousand cost the attacker; the account's is
			// given back.
			if held {
				a.o.Throttle.Release("", account, now)
			}
			a.o.Throttle.Failed(client, "", held, now)
			return nil, nil, err
		}
		a.o.Observe("failure", "")
		a.o.Report(FailedAttempt{Login: login, IP: a.o.ClientIP(r), Kind: kind, Code: f.Code, Message: f.Message})
		for _, t := range a.o.Throttle.Failed(client, account, held, now) {
			a.o.Log.Warn().Str("scope", t.Scope).Str("remote_ip", a.o.ClientIP(r)).Str("login", login).Str("account", account).
				Msg("authentication throttled: too many failed attempts")
		}
		if accountWait > 0 {
			a.o.Observe("throttled", "account")
			return nil, throttled(accountWait), nil
		}
		return nil, f, nil
	}
	if !known {
		may() // a guess at an unknown login counts in flight too
		if wplogin.LooksLikeEmail(login) {
			return fail(errUnknownE)
		}
		return fail(errUnknownU)
	}
	appFailure := errBadAppPW
	if appAvailable && !site.policy.appPasswordsFor(u.ID) {
		appFailure = errAppPWsDisabledForUser
	} else if appAvailable {
		if uuid, lastUsed, ok := a.matchApplicationPassword(c, u, stripApplicationPassword(password), site.version, may); ok {
			// WordPress records a use at most once a day; the row just read
			// says whether this one is due.
			if lastUsed+86400 <= now.Unix() {
				a.touch(ctx, r, u.ID, uuid, now)
			}
			user := a.user(u, site, "application_password")
			user.until = time.Unix(lastUsed+86400, 0) // the next use to record
			return succeed(user)
		}
	}
	// The account password goes through wp_authenticate, as the Basic
	// Authentication plugin calls it: trimmed first (what is left empty to
	// PHP — "" or "0" — is refused unchecked), then checked, then the hash
	// brought up to date.
	if pw := phpTrim(password); a.o.BasicAuthPasswords && pw != "" && pw != "0" && a.checkCached("pw", u.ID, pw, u.Pass, may, func() bool {
		return checkPassword(c, pw, u.Pass, site.version)
	}) {
		a.rehash(ctx, u, pw, site.version)
		return succeed(a.user(u, site, "basic_password"))
	}
	if appAvailable {
		return fail(appFailure)
	}
	return fail(&wpjson.Error{Code: "incorrect_password", Message: "<strong>Error:</strong> The password you entered for the username <strong>" +
		html.EscapeString(u.Login) + "</strong> is incorrect. <a href=\"" + site.siteURL + "/wp-login.php?action=lostpassword\">Lost your password?</a>"})
}

// throttled is the answer to a client or account out of attempts.
func throttled(wait time.Duration) *wpjson.Error {
	secs := int64((wait + time.Second - 1) / time.Second)
	return &wpjson.Error{Code: "wpsidecar_too_many_attempts", Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {strconv.FormatInt(secs, 10)}},
		Message: fmt.Sprintf("Too many failed authentication attempts. Please try again in %d seconds.", secs)}
}

// matchApplicationPassword finds the stored item the password matches and
// returns its uuid and last_used.
func (a *Authenticator) matchApplicationPassword(c checker, u *store.User, password string, v Version, may func() bool) (string, int64, bool) {
	if password == "" {
		return "", 0, false
	}
	for _, item := range a.appPasswords(u.Meta[store.MetaApplicationPasswords]) {
		if a.checkCached("app", u.ID, password, item.hash, may, func() bool { return checkApplicationPassword(c, password, item.hash, v) }) {
			return item.uuid, item.lastUsed, true
		}
	}
	return "", 0, false
}

// appPassword is what authentication reads of an application password.
type appPassword struct {
	hash, uuid string
	lastUsed   int64
}

// appPasswords reads a user's _application_passwords value, remembering
// the last values read (the same value comes with every request of a
// client; a changed one is a new key).
func (a *Authenticator) appPasswords(raw string) []appPassword {
	a.parsedMu.Lock()
	items, ok := a.parsed[raw]
	a.parsedMu.Unlock()
	if ok {
		return items
	}
	list, err := phpserial.Unserialize(raw)
	if err == nil && list.Kind == phpserial.Array {
		for _, e := range list.Entries {
			hash, _ := e.Value.Get("password")
			if hash.Kind != phpserial.String || hash.Str == "" {
				continue
			}
			uuid, _ := e.Value.Get("uuid")
			last, _ := e.Value.Get("last_used")
			lastUsed, _ := last.AsInt()
			items = append(items, appPassword{hash.Str, uuid.Str, lastUsed})
		}
	}
	a.parsedMu.Lock()
	if len(a.parsed) >= 1024 {
		clear(a.parsed)
	}
	a.parsed[raw] = items
	a.parsedMu.Unlock()
	return items
}

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

// checkCached runs an expensive hash check once per credential and stored
// hash: a success is remembered under a keyed hash of the credential, never
// the credential, and only while the stored hash is the same. The check
// runs only when may says so; otherwise only a remembered success counts.
func (a *Authenticator) checkCached(kind string, userID int64, password, stored string, may func() bool, check func() bool) bool {
	key := a.checks.key(kind, userID, password, stored)
	if a.checks.has(key) {
		return true
	}
	if !may() || !check() {
		return false
	}
	a.checks.add(userID, key)
	return true
}

// The bounds of the authenticator's set of successful checks (checks):
// checksPerUser entries for one user (application passwords, the account
// password, the spellings of the credentials its clients send), and
// checksUsers users.
const (
	checksPerUser = 16
	checksUsers   = 4096
)

// checkCache is a bounded set of successful checks, each kept for the user
// it proved: a user has at most perUser entries, its oldest forgotten
// first, and the set at most maxUsers users, the one whose entries were
// used longest ago forgotten first (all its entries with it). So a user's
// own successes, however many and however varied, only ever push out that
// user's entries: another user's verified credential stays (it is what
// lets that account in while it is out of attempts, see basicUser), unless
// maxUsers other users succeed before its next use.
type checkCache struct {
	secret            []byte
	perUser, maxUsers int
	mu                sync.Mutex
	set               map[string]int64        // key → the user it is kept for
	users             map[int64]*list.Element // → *userChecks in lru
	lru               list.List               // most recently used first
}

// userChecks are one user's keys, oldest first.
type userChecks struct {
	id   int64
	keys []string
}

func newCheckCache(perUser, maxUsers int) *checkCache {
	secret := make([]byte, 32)
	rand.Read(secret)
	return &checkCache{secret: secret, perUser: perUser, maxUsers: maxUsers, set: map[string]int64{}, users: map[int64]*list.Element{}}
}

// key is SHA-256 of the process's secret and the fields: unpredictable
// without the secret (an HMAC's second pass buys a map key nothing), one
// pass of the hash for every request that carries a credential.
func (c *checkCache) key(kind string, userID int64, password, stored string) string {
	b := make([]byte, 0, len(c.secret)+len(kind)+len(stored)+len(password)+24)
	b = append(append(b, c.secret...), kind...)
	b = strconv.AppendInt(append(b, 0), userID, 10)
	b = append(append(append(append(b, 0), stored...), 0), password...)
	sum := sha256.Sum256(b)
	return string(sum[:])
}

// has tells whether k is remembered; its user's entries count as used.
func (c *checkCache) has(k string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.set[k]
	if ok {
		c.lru.MoveToFront(c.users[id])
	}
	return ok
}

// remove forgets k.
func (c *checkCache) remove(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.set[k]
	if !ok {
		return
	}
	delete(c.set, k)
	e := c.users[id]
	u := e.Value.(*userChecks)
	u.keys = slices.DeleteFunc(u.keys, func(x string) bool { return x == k })
	if len(u.keys) == 0 {
		c.lru.Remove(e)
		delete(c.users, id)
	}
}

// add remembers k for user, and tells whether it was new.
func (c *checkCache) add(user int64, k string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.set[k]; ok {
		c.lru.MoveToFront(c.users[id])
		return false
	}
	e := c.users[user]
	if e == nil {
		if len(c.users) >= c.maxUsers {
			last := c.lru.Back()
			old := last.Value.(*userChecks)
			for _, x := range old.keys {
				delete(c.set, x)
			}
			c.lru.Remove(last)
			delete(c.users, old.id)
		}
		e = c.lru.PushFront(&userChecks{id: user})
		c.users[user] = e
	} else {
		c.lru.MoveToFront(e)
	}
	u := e.Value.(*userChecks)
	if len(u.keys) >= c.perUser {
		delete(c.set, u.keys[0])
		u.keys = slices.Delete(u.keys, 0, 1)
	}
	u.keys = append(u.keys, k)
	c.set[k] = user
	return true
}

// maxBasicEncoded bounds the Basic credentials decoded at all: room for
// the longest login or e-mail WordPress stores (100 bytes), the longest
// password it checks, and generous spacing, in base64. Longer ones cannot
// be right; they are read as no credentials, as stock WordPress reads a
// wrong application password.
const maxBasicEncoded = 16 << 10

// parseBasic reads an Authorization: Basic header as PHP and WordPress do:
// the scheme case-insensitive, standard base64, cut at the first NUL, split
// at the first colon; both parts present.
func parseBasic(header string) (login, password string, ok bool) {
	scheme, enc, found := strings.Cut(header, " ")
	if !found || !strings.EqualFold(scheme, "Basic") || len(enc) > maxBasicEncoded {
		return "", "", false
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return "", "", false
	}
	// PHP hands the credentials over as C strings: everything from the
	// first NUL on is gone, the colon included when it came after.
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	login, password, ok = strings.Cut(string(b), ":")
	if !ok || login == "" || password == "" {
		return "", "", false
	}
	return login, password, true
}

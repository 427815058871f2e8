package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/wplogin"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

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

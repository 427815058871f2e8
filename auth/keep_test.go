package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/auth"
)

// TestIdentify_KeepUntil: an answer to a request Identify let in may be
// kept (package rest's prepared answers) only until what authenticated it
// stops holding by itself: an application password until its next use is
// due to be recorded, a cookie until it or its session expires, a verified
// nonce (the fresh one the answer carries) until its tick ends.
func TestIdentify_KeepUntil(t *testing.T) {
	a, tdb := benchSite(t, "61833", auth.FastHash("abcdEFGHijklMNOPqrstUVWX"))
	defer a.Wait()
	var meta, siteurl string
	var id int64
	tdb.SQL.QueryRow("SELECT meta_value FROM wp_usermeta WHERE meta_key = '_application_passwords'").Scan(&meta)
	tdb.SQL.QueryRow("SELECT ID FROM wp_users WHERE user_login = 'bench'").Scan(&id)
	tdb.SQL.QueryRow("SELECT option_value FROM wp_options WHERE option_name = 'siteurl'").Scan(&siteurl)
	m := regexp.MustCompile(`s:9:"last_used";i:(\d+);`).FindStringSubmatch(meta)
	if m == nil {
		t.Fatalf("no last_used in %s", meta)
	}
	lastUsed, _ := strconv.ParseInt(m[1], 10, 64)

	now := time.Now()
	s := auth.NewSalts(benchKeys, nil)
	c := auth.AuthCookie{Login: "bench", Expiration: fmt.Sprint(now.Add(30 * time.Minute).Unix()), Token: "BenchToken0123456789012345678901234567890ab"}
	var err error
	if c.HMAC, err = s.CookieHMAC(c, "$P$B12345678Cxt6GCcSG3ugUXOuJv5r00", auth.SchemeLoggedIn, auth.WP61); err != nil {
		t.Fatal(err)
	}
	cookie := auth.LoggedInCookieName(auth.CookieHash(siteurl)) + "=" + strings.Join([]string{c.Login, c.Expiration, c.Token, c.HMAC}, "%7C")
	nonce, _ := s.Nonce(auth.NonceTick(now), "wp_rest", id, c.Token)
	cookieEnd := time.Unix(now.Add(30*time.Minute).Unix()+1, 0)
	if end := auth.NonceTickEnd(now); end.Before(cookieEnd) {
		cookieEnd = end
	}

	h := a.Identify(http.StatusUnauthorized, nil)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, tc := range []struct {
		name   string
		set    func(*http.Request)
		status int
		until  time.Time
	}{
		{"an application password", func(r *http.Request) { r.SetBasicAuth("bench", "abcd EFGH ijkl MNOP qrst UVWX") }, 200, time.Unix(lastUsed+86400, 0)},
		{"a cookie and its nonce", func(r *http.Request) { r.Header.Set("Cookie", cookie); r.Header.Set("X-WP-Nonce", nonce) }, 200, cookieEnd},
		{"a cookie without a nonce: anonymous", func(r *http.Request) { r.Header.Set("Cookie", cookie) }, 200, time.Time{}},
		{"a wrong password", func(r *http.Request) { r.SetBasicAuth("bench", "wrong") }, 401, time.Time{}},
	} {
		ctx, k := wpsidecar.WithScope(context.Background())
		k.Keep()
		k.Allow()
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
		tc.set(req)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if _, until := k.Holds(now); w.Code != tc.status || !until.Equal(tc.until) {
			t.Errorf("%s: %d, kept until %v; want %d, %v", tc.name, w.Code, until, tc.status, tc.until)
		}
	}
}

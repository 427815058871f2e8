package auth_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
)

// TestIdentify_FloodKeepsOthersVerifiedCredentials: the administrator's
// application password, verified once, keeps letting the account in while
// it is out of attempts, however many successful requests another user
// makes meanwhile with cookies and Authorization spellings of its own
// choosing (each of which a cache keyed on the whole Cookie header, or one
// ring for everyone, took as a new credential): 429 before the fix
// (security round 3, item 7).
func TestIdentify_FloodKeepsOthersVerifiedCredentials(t *testing.T) {
	tdb := testdb.New(t)
	const adminPW, subPW = "abcdEFGHijklMNOPqrstUVWX", "zyxwVUTSrqpoNMLKjihgFEDC"
	site := testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: adminPW},
		testsite.User{Login: "sub", Role: "subscriber", AppPassword: subPW})
	now := time.Unix(1_800_000_000, 0)
	a := auth.New(auth.Options{Store: site.DB, Settings: site.Settings, Keys: map[string]string{"AUTH_KEY": "k"}, EnvironmentType: "local",
		Throttle: auth.NewThrottle(auth.Rate{Burst: 1000, Per: time.Minute}, auth.Rate{Burst: 3, Per: time.Hour}),
		Log:      zerolog.Nop(), Now: func() time.Time { return now }})
	defer a.Wait()
	h := a.Identify(http.StatusUnauthorized, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth.UserFrom(r.Context()) == nil {
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	serve := func(ip, authorization string, cookies ...string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
		req.RemoteAddr = ip + ":40000"
		req.Header.Set("Authorization", authorization)
		for _, c := range cookies {
			req.Header.Add("Cookie", c)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	basic := func(login, pw string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(login+":"+pw))
	}

	// The administrator's integration: verified once.
	if w := serve("198.51.100.1", basic("admin", adminPW)); w.Code != 200 {
		t.Fatalf("the administrator: %d %s", w.Code, w.Body)
	}
	// Guessers empty the account.
	for i := 0; i < 4; i++ {
		serve("203.0.113."+strconv.Itoa(i+1), basic("admin", "wrong-password"))
	}
	if w := serve("203.0.113.99", basic("admin", "another-wrong-password")); w.Code != 429 {
		t.Fatalf("the account should be out of attempts: %d %s", w.Code, w.Body)
	}
	// The subscriber: thousands of successes, each with a cookie never
	// seen, half of them with a spelling of its password never seen either
	// (WordPress keeps only its letters and digits).
	for i := 0; i < 5000; i++ {
		pw := subPW
		if i%2 == 1 {
			pw = subPW[:4] + strings.Repeat(" ", i%1000) + subPW[4:]
		}
		if w := serve("192.0.2.1", basic("sub", pw), "junk="+strconv.Itoa(i)); w.Code != 200 {
			t.Fatalf("the subscriber's request %d: %d %s", i, w.Code, w.Body)
		}
	}
	// The administrator's verified password still lets the account in.
	if w := serve("198.51.100.1", basic("admin", adminPW)); w.Code != 200 {
		t.Errorf("the administrator's verified credential after the flood: %d %s", w.Code, w.Body)
	}
	if w := serve("198.51.100.1", basic("admin", adminPW), "other=1"); w.Code != 200 {
		t.Errorf("the same, with another cookie: %d %s", w.Code, w.Body)
	}
}

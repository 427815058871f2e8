package auth_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
	"github.com/wpsidecar/wpsidecar/store"
)

// optionRide is a route's ride-along read of one option.
type optionRide struct {
	pb    *store.Piggyback
	value string
	found bool
}

func (o *optionRide) Piggyback() *store.Piggyback { return o.pb }

// TestIdentify_RideOnlyWithProvenCredentials: a route's read rides with
// the user lookup only for credentials that authenticated before; a forged
// cookie (the site's cookie name, a login that does not exist) or a
// first-time credential costs the lookup alone (security round 2, item 4).
func TestIdentify_RideOnlyWithProvenCredentials(t *testing.T) {
	tdb := testdb.New(t)
	const pw = "abcdEFGHijklMNOPqrstUVWX"
	site := testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: pw})
	defer site.Auth.Wait()
	var last *optionRide
	ride := func(*http.Request) auth.Ride {
		last = &optionRide{}
		last.pb = site.DB.OptionPiggyback("blogname", &last.value, &last.found)
		return last
	}
	var got *optionRide
	h := site.Auth.Identify(http.StatusUnauthorized, ride)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = auth.RideFrom(r.Context()).(*optionRide)
	}))
	st, err := site.Settings.Current()
	if err != nil {
		t.Fatal(err)
	}
	cookie := auth.LoggedInCookieName(auth.CookieHash(st.SiteURL)) + "=nobody%7C9999999999%7C" + strings.Repeat("t", 43) + "%7C" + strings.Repeat("ab", 32)
	tests := []struct {
		name   string
		set    func(*http.Request)
		status int
		rode   bool
	}{
		{"a forged cookie", func(r *http.Request) { r.Header.Set("Cookie", cookie); r.Header.Set("X-WP-Nonce", "x") }, 403, false},
		{"the forged cookie again", func(r *http.Request) { r.Header.Set("Cookie", cookie); r.Header.Set("X-WP-Nonce", "x") }, 403, false},
		{"a wrong password", func(r *http.Request) { r.SetBasicAuth("admin", "wrong") }, 401, false},
		{"the right password, first time", func(r *http.Request) { r.SetBasicAuth("admin", pw) }, 200, false},
		{"the right password again", func(r *http.Request) { r.SetBasicAuth("admin", pw) }, 200, true},
		{"anonymous", func(r *http.Request) {}, 200, false},
	}
	for _, tt := range tests {
		last, got = nil, nil
		req := httptest.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
		tt.set(req)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		// Attached, a read goes to the database in the lookup's round trip
		// whether or not a user is found (store's piggyback tests).
		rode := last != nil
		if w.Code != tt.status || rode != tt.rode {
			t.Errorf("%s: %d, read rode along: %v; want %d, %v", tt.name, w.Code, rode, tt.status, tt.rode)
		}
		if tt.rode && (got == nil || !ran(got) || got.value != "Test site" || !got.found) {
			t.Errorf("%s: the handler's read: %+v", tt.name, got)
		}
	}
}

func ran(o *optionRide) bool { done, err := o.pb.Done(); return done && err == nil }

package wpjson_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"github.com/wpsidecar/wpsidecar/wire/routetable"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// db_versions: 6.1 and 6.2 share 53496, 6.3 is 55853, 6.4 56657, 6.5 and
// 6.6 share 57155, 6.7 is 58975, 6.8 60421, 7.1 61833.
const (
	v61 = 53496
	v63 = 55853
	v65 = 57155
	v67 = 58975
	v68 = 60421
	v71 = 61833
)

const (
	plain  = "no-cache, must-revalidate, max-age=0"
	strict = "no-cache, must-revalidate, max-age=0, no-store, private"
	expiry = "Wed, 11 Jan 1984 05:00:00 GMT"
)

// TestNoCacheHeaders: wp_get_nocache_headers() of each version
// (wp-includes/functions.php) for anonymous requests: 6.8 adds no-store,
// private; a logged-in user gets them on every version, as from 6.3 on,
// even where 6.1 and 6.2 leave them out (issue 46, item 6).
func TestNoCacheHeaders(t *testing.T) {
	for _, c := range []struct {
		version  int64
		loggedIn bool
		want     string
	}{
		{0, false, plain}, {0, true, strict},
		{v61, false, plain}, {v61, true, strict},
		{v63 - 1, false, plain}, {v63 - 1, true, strict},
		{v63, false, plain}, {v63, true, strict},
		{v65, false, plain}, {v65, true, strict},
		{v67, false, plain}, {v67, true, strict},
		{v68 - 1, false, plain}, {v68 - 1, true, strict},
		{v68, false, strict}, {v68, true, strict},
		{v71, false, strict}, {v71, true, strict},
	} {
		expires, cc := wpjson.NoCacheHeaders(c.version, c.loggedIn)
		if expires != expiry || cc != c.want {
			t.Errorf("NoCacheHeaders(%d, %v) = %q, %q; want %q", c.version, c.loggedIn, expires, cc, c.want)
		}
		h := http.Header{"Last-Modified": {"Wed, 01 Jan 2025 00:00:00 GMT"}, "Cache-Control": {"public"}}
		wpjson.SetNoCache(h, c.version, c.loggedIn)
		if len(h) != 2 || h.Get("Expires") != expiry || h.Get("Cache-Control") != c.want {
			t.Errorf("SetNoCache(%d, %v): %v", c.version, c.loggedIn, h)
		}
	}
}

// TestSendsNoCache: serve_request's condition (wp-includes/rest-api/
// class-wp-rest-server.php, the same from 6.1 to 7.1).
func TestSendsNoCache(t *testing.T) {
	for _, c := range []struct {
		loggedIn, forced, overridden bool
		status                       int
		want                         bool
	}{
		{false, false, false, 200, false},
		{false, false, false, 401, false},
		{false, false, false, 403, false},
		{false, false, false, 404, false},
		{true, false, false, 200, true},
		{true, false, false, 403, true},
		{false, true, false, 403, true},
		{false, false, true, 400, true},
		{false, false, true, 499, true},
		{false, false, true, 200, false},
		{false, false, true, 500, false},
		{false, false, true, 304, false},
	} {
		if got := wpjson.SendsNoCache(c.loggedIn, c.forced, c.overridden, c.status); got != c.want {
			t.Errorf("SendsNoCache(logged in %v, forced %v, overridden %v, %d) = %v", c.loggedIn, c.forced, c.overridden, c.status, got)
		}
	}
}

type userKey struct{}

// site is a namespace on a router as the namespaces register theirs: an
// authentication layer before the routes that answers its own errors
// through Render (a nonce that does not verify 403, no user 401, a user
// without the capability 403; OPTIONS needs none), CheckBody, and a GET
// route behind it. The request's X-User is its user ("" anonymous, "sub"
// without the capability), X-Nonce: bad a nonce that does not verify.
func site(version int64) http.Handler {
	r := mux.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Nonce") == "bad" {
				wpjson.Render(w, r, &wpjson.Error{Status: 403, Code: "rest_cookie_invalid_nonce", Message: "Cookie check failed"})
				return
			}
			user := r.Header.Get("X-User")
			if user != "" {
				r = r.WithContext(context.WithValue(r.Context(), userKey{}, user))
			}
			next.ServeHTTP(w, r)
		})
	}, wpjson.CheckBody, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, _ := r.Context().Value(userKey{}).(string)
			switch {
			case r.Method == http.MethodOptions:
			case user == "":
				wpjson.Render(w, r, &wpjson.Error{Status: 401, Code: "rest_forbidden", Message: "Sorry, you are not allowed to do that."})
				return
			case user == "sub":
				wpjson.Render(w, r, &wpjson.Error{Status: 403, Code: "rest_forbidden", Message: "Sorry, you are not allowed to do that."})
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	wpjson.Register(r, wpjson.RouteInfo{Namespace: "t/v1", Home: func() (string, error) { return "http://example.test", nil },
		DBVersion: func() (int64, error) { return version, nil },
		LoggedIn:  func(r *http.Request) bool { return r.Context().Value(userKey{}) != nil },
		Permitted: func(r *http.Request) bool { return r.Context().Value(userKey{}) == "admin" },
	}, []routetable.Route{{Path: "/t/v1/things", Handlers: []routetable.MethodHandler{
		{Method: http.MethodGet, Fn: func(w http.ResponseWriter, r *http.Request) error {
			if r.URL.Query().Get("missing") != "" {
				return &wpjson.Error{Status: 404, Code: "t_missing", Message: "missing"}
			}
			wpjson.WriteJSON(w, http.StatusOK, []string{})
			return nil
		}},
		{Method: http.MethodPost, Fn: func(w http.ResponseWriter, r *http.Request) error {
			wpjson.WriteJSON(w, http.StatusCreated, map[string]bool{"ok": true})
			return nil
		}},
	}}})
	return r
}

// TestNoCacheAsWordPress: the no-cache headers of every kind of answer, per
// version, when WordPress's REST server sends them: to logged-in users
// (whatever the status), on a nonce that does not verify, on a 4xx whose
// method came from X-HTTP-Method-Override; never to anonymous 401s, 403s
// or OPTIONS otherwise. Anonymous answers carry the version's set; a
// logged-in user's carry no-store, private on 6.1 too, where WordPress
// leaves them out (issue 46, item 6).
func TestNoCacheAsWordPress(t *testing.T) {
	type want struct{ v61, v65, v71 string } // Cache-Control; "" none (and no Expires)
	for _, c := range []struct {
		name, method, target, body string
		hdr                        []string
		status                     int
		want                       want
	}{
		{"anonymous", "GET", "/t/v1/things", "", nil, 401, want{"", "", ""}},
		{"anonymous HEAD", "HEAD", "/t/v1/things", "", nil, 401, want{"", "", ""}},
		{"anonymous OPTIONS", "OPTIONS", "/t/v1/things", "", nil, 200, want{"", "", ""}},
		{"anonymous bad nonce", "GET", "/t/v1/things", "", []string{"X-Nonce", "bad"}, 403, want{plain, plain, strict}},
		{"anonymous overridden 4xx", "POST", "/t/v1/things", "", []string{"X-HTTP-Method-Override", "GET"}, 401, want{plain, plain, strict}},
		{"anonymous _method 4xx", "POST", "/t/v1/things?_method=GET", "", nil, 401, want{"", "", ""}},
		{"anonymous _method and header", "POST", "/t/v1/things?_method=GET", "", []string{"X-HTTP-Method-Override", "GET"}, 401, want{"", "", ""}},
		{"anonymous overridden, enveloped", "POST", "/t/v1/things?_envelope", "", []string{"X-HTTP-Method-Override", "GET"}, 401, want{"", "", ""}},
		{"anonymous bad JSON", "POST", "/t/v1/things", "{", []string{"Content-Type", "application/json"}, 400, want{"", "", ""}},
		{"anonymous bad JSON overridden", "POST", "/t/v1/things", "{", []string{"Content-Type", "application/json", "X-HTTP-Method-Override", "POST"}, 400, want{plain, plain, strict}},
		{"subscriber", "GET", "/t/v1/things", "", []string{"X-User", "sub"}, 403, want{strict, strict, strict}},
		{"subscriber OPTIONS", "OPTIONS", "/t/v1/things", "", []string{"X-User", "sub"}, 200, want{strict, strict, strict}},
		{"admin", "GET", "/t/v1/things", "", []string{"X-User", "admin"}, 200, want{strict, strict, strict}},
		{"admin 404", "GET", "/t/v1/things?missing=1", "", []string{"X-User", "admin"}, 404, want{strict, strict, strict}},
		{"admin POST", "POST", "/t/v1/things/", "", []string{"X-User", "admin"}, 201, want{strict, strict, strict}},
		{"admin OPTIONS", "OPTIONS", "/t/v1/things", "", []string{"X-User", "admin"}, 200, want{strict, strict, strict}},
		{"admin bad JSON", "POST", "/t/v1/things", "{", []string{"X-User", "admin", "Content-Type", "application/json"}, 400, want{strict, strict, strict}},
		{"admin bad nonce", "GET", "/t/v1/things", "", []string{"X-User", "admin", "X-Nonce", "bad"}, 403, want{plain, plain, strict}},
	} {
		for _, v := range []struct {
			version int64
			want    string
		}{{v61, c.want.v61}, {v65, c.want.v65}, {v71, c.want.v71}} {
			req := httptest.NewRequest(c.method, "http://example.test"+c.target, strings.NewReader(c.body))
			for i := 0; i+1 < len(c.hdr); i += 2 {
				req.Header.Set(c.hdr[i], c.hdr[i+1])
			}
			w := httptest.NewRecorder()
			site(v.version).ServeHTTP(w, req)
			h := w.Result().Header
			wantExpires := ""
			if v.want != "" {
				wantExpires = expiry
			}
			if w.Code != c.status || h.Get("Cache-Control") != v.want || h.Get("Expires") != wantExpires || len(h["Cache-Control"]) > 1 {
				t.Errorf("%s on %d: %d Cache-Control %q Expires %q; want %d %q %q", c.name, v.version, w.Code, h["Cache-Control"], h.Get("Expires"), c.status, v.want, wantExpires)
			}
		}
	}
}

// TestNoCache_WithoutSite: routes registered without DBVersion and
// LoggedIn answer with the newest set, always; answers of other routes
// are left alone.
func TestNoCache_WithoutSite(t *testing.T) {
	r := mux.NewRouter()
	wpjson.Register(r, wpjson.RouteInfo{Namespace: "t/v1", Home: func() (string, error) { return "http://example.test", nil },
		Permitted: func(*http.Request) bool { return false }}, []routetable.Route{{Path: "/t/v1/x", Handlers: []routetable.MethodHandler{
		{Method: http.MethodGet, Fn: func(http.ResponseWriter, *http.Request) error {
			return &wpjson.Error{Status: 401, Code: "rest_forbidden"}
		}}}}})
	r.Handle("/other", wpjson.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
		return &wpjson.Error{Status: 401, Code: "rest_forbidden"}
	}))
	for target, want := range map[string]string{"/t/v1/x": strict, "/other": ""} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://example.test"+target, nil))
		if w.Code != 401 || w.Header().Get("Cache-Control") != want {
			t.Errorf("%s: %d Cache-Control %q, want %q", target, w.Code, w.Header().Get("Cache-Control"), want)
		}
	}
}

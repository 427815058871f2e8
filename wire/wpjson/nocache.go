package wpjson

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/phpquery"
)

// dbVersion68 is the db_version from which WordPress's no-cache set
// (wp_get_nocache_headers) carries "no-store, private" for everyone: 6.8
// (60421). 6.3 (55853) added them for logged-in users.
const dbVersion68 = 60421

// NoCacheHeaders are the Expires and Cache-Control the sidecar sends where
// WordPress sends wp_get_nocache_headers(). An anonymous request gets that
// function's on the site's version (dbVersion, its db_version); a
// logged-in user gets the newest WordPress's on every version: 6.1 and 6.2
// leave "no-store, private" out, and shared caches kept such answers,
// which is why 6.3 added them. The sidecar's answers are never weaker
// than the newest WordPress's there.
//
//	          anonymous                                                logged in
//	6.1–6.7   no-cache, must-revalidate, max-age=0                     no-cache, must-revalidate, max-age=0, no-store, private
//	6.8+      no-cache, must-revalidate, max-age=0, no-store, private  the same
//
// Expires is always Wed, 11 Jan 1984 05:00:00 GMT; Last-Modified goes.
func NoCacheHeaders(dbVersion int64, loggedIn bool) (expires, cacheControl string) {
	cacheControl = "no-cache, must-revalidate, max-age=0"
	if loggedIn || dbVersion >= dbVersion68 {
		cacheControl += ", no-store, private"
	}
	return "Wed, 11 Jan 1984 05:00:00 GMT", cacheControl
}

// SendsNoCache is when WP_REST_Server::serve_request sends the no-cache
// set (the same from 6.1 to 7.1): when the filter rest_send_nocache_headers
// says so — is_user_logged_in() unless forced, as rest_cookie_check_errors
// forces it on a nonce that does not verify — or when the method came from
// X-HTTP-Method-Override (not _method) and the status is 4xx. An error
// answer is not enough by itself: an anonymous 401 or 403 carries none.
func SendsNoCache(loggedIn, forced, overridden bool, status int) bool {
	return loggedIn || forced || overridden && status >= 400 && status < 500
}

// SetNoCache sets the no-cache set for the site's version and a user
// logged in or not (NoCacheHeaders) and removes Last-Modified, as
// serve_request sends them.
func SetNoCache(h http.Header, dbVersion int64, loggedIn bool) {
	expires, cc := NoCacheHeaders(dbVersion, loggedIn)
	h.Set("Expires", expires)
	h.Set("Cache-Control", cc)
	h.Del("Last-Modified")
}

// noCache gives the answer to r with status the no-cache set when
// WordPress's REST server would send it (SendsNoCache, NoCacheHeaders):
// forced is a nonce that did not verify. A status of 0 is one the handler
// has yet to choose: not a 4xx, which only anonymous requests overridden
// by X-HTTP-Method-Override care about, and those reach no handler but
// OPTIONS. Without DBVersion and LoggedIn every answer carries the set of
// the newest WordPress.
func (info RouteInfo) noCache(h http.Header, r *http.Request, status int, forced bool) {
	if info.DBVersion == nil || info.LoggedIn == nil {
		SetNoCache(h, dbVersion68, true)
		return
	}
	dbVersion, err := info.DBVersion()
	if err != nil {
		dbVersion = dbVersion68 // not known: the strictest
	}
	override, envelope := requestGlobals(r)
	if envelope {
		status = http.StatusOK // the enveloped answer's, which serve_request looks at
	}
	loggedIn := info.LoggedIn(r)
	if SendsNoCache(loggedIn, forced, override, status) {
		SetNoCache(h, dbVersion, loggedIn)
	}
}

// requestGlobals tells whether serve_request would take r's method as
// overridden ($method_overridden: an X-HTTP-Method-Override header and no
// _method in the query) and whether its query has _envelope, as PHP's
// isset($_GET[…]) sees them.
func requestGlobals(r *http.Request) (overridden, envelope bool) {
	method := false
	for _, f := range phpquery.Fields(r.URL.RawQuery, phpquery.MayBe("_method", "_envelope")) {
		switch f.Name { // _method[]=…: an array, set all the same
		case "_method":
			method = true
		case "_envelope":
			envelope = true
		}
	}
	_, header := r.Header["X-Http-Method-Override"]
	return header && !method, envelope
}

// infoOf is the RouteInfo of the route r was routed to, when Register
// registered it.
func infoOf(r *http.Request) (RouteInfo, bool) {
	route := mux.CurrentRoute(r)
	if route == nil {
		return RouteInfo{}, false
	}
	h, ok := route.GetHandler().(*routeHandler)
	if !ok {
		return RouteInfo{}, false
	}
	return h.info, true
}

// routeHandler is the handler of a route Register added: before the
// route's own handler it sets the answer's no-cache headers (which Render
// sets again, by the error's status, when the answer is an error), and it
// keeps the namespace's RouteInfo for the answers given before it runs
// (authentication's, found through the request's route).
type routeHandler struct {
	info     RouteInfo
	prepared bool // MethodHandler.Prepared
	next     http.Handler
}

func (h *routeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.prepared {
		wpsidecar.ScopeOf(r.Context()).Allow()
	}
	h.info.noCache(w.Header(), r, 0, false)
	h.next.ServeHTTP(w, r)
}

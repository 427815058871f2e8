package wpjson

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/wpsidecar/wpsidecar/wire/routetable"
)

// RouteInfo is what an OPTIONS answer needs to know of its namespace.
type RouteInfo struct {
	Namespace string
	// Home is the site's home URL.
	Home func() (string, error)
	// Permitted tells whether the request's user may use the routes: only
	// then does the OPTIONS answer carry Allow.
	Permitted func(*http.Request) bool
	// Errors, when set, turns the namespace's own errors (its store's
	// sentinels) into answers before they are rendered.
	Errors func(error) error
	// DBVersion is the site's db_version and LoggedIn whether the
	// request's user is logged in (is_user_logged_in): together they
	// decide the answers' no-cache headers as the site's WordPress sends
	// them, but never weaker than the newest WordPress's to a logged-in
	// user (SendsNoCache, NoCacheHeaders), errors of authentication
	// included. Without them every answer carries the newest set.
	DBVersion func() (int64, error)
	LoggedIn  func(*http.Request) bool
}

// Register adds routes to r as WordPress's REST server matches them: a
// trailing slash is the same route, HEAD is answered by GET's handler,
// every answer carries Allow with the route's methods and the no-cache
// headers when WordPress would send them, and OPTIONS describes the route
// (rest_handle_options_request).
func Register(r *mux.Router, info RouteInfo, routes []routetable.Route) {
	for _, rt := range routes {
		var methods []string
		for _, h := range rt.Handlers {
			methods = append(methods, h.Method)
		}
		allow := strings.Join(methods, ", ")
		for _, path := range []string{rt.Path, rt.Path + "/"} {
			for _, h := range rt.Handlers {
				ms := []string{h.Method}
				if h.Method == http.MethodGet {
					ms = append(ms, http.MethodHead)
				}
				route := r.Handle(path, &routeHandler{info: info, prepared: h.Prepared, next: withAllow(allow, translate(info.Errors, HandlerFunc(h.Fn)))}).Methods(ms...)
				if rt.Name != "" {
					route.Name(rt.Name)
				}
				when(route, rt.When)
			}
			when(r.Handle(path, &routeHandler{info: info, next: options(info, methods)}).Methods(http.MethodOptions), rt.When)
		}
	}
}

func when(route *mux.Route, cond func() bool) {
	if cond != nil {
		route.MatcherFunc(func(*http.Request, *mux.RouteMatch) bool { return cond() })
	}
}

// translate renders what fn returns after errs has named it.
func translate(errs func(error) error, fn HandlerFunc) http.Handler {
	if errs == nil {
		return fn
	}
	return HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if err := fn(w, r); err != nil {
			return errs(err)
		}
		return nil
	})
}

func withAllow(allow string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		next.ServeHTTP(w, r)
	})
}

// options answers OPTIONS with the route's description.
func options(info RouteInfo, methods []string) http.Handler {
	type endpoint struct {
		Methods []string `json:"methods"`
		Args    []string `json:"args"`
	}
	type link struct {
		Href string `json:"href"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		home, err := info.Home()
		if err != nil {
			WriteError(w, ErrDBUnavailable)
			return
		}
		if info.Permitted(r) {
			w.Header().Set("Allow", strings.Join(methods, ", "))
		}
		eps := make([]endpoint, len(methods))
		for i, m := range methods {
			eps[i] = endpoint{Methods: []string{m}, Args: []string{}}
		}
		WriteJSON(w, http.StatusOK, struct {
			Namespace string            `json:"namespace"`
			Methods   []string          `json:"methods"`
			Endpoints []endpoint        `json:"endpoints"`
			Links     map[string][]link `json:"_links"`
		}{info.Namespace, methods, eps, map[string][]link{"self": {{home + r.URL.EscapedPath()}}}})
	})
}

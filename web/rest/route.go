package rest

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"
	"github.com/wpsidecar/wpsidecar/internal/phpquery"
)

// restView is a request as WordPress's REST server sees it, for routing:
// the route named by the rest_route query parameter (which wins over the
// path, on the paths PHP's index.php serves) or by the path after
// /wp-json; its literal segments matched without regard to case, as
// WordPress matches routes; and the method that _method or
// X-HTTP-Method-Override asks for. It returns nil when r is not a REST
// request at all. The request PHP gets, when the sidecar does not answer,
// is always the original. prefix is the site's path on a subdirectory
// network ("/blog2"), which the route follows: it is not part of the view.
func (s *Routes) restView(r *http.Request, prefix string) *http.Request {
	path := r.URL.EscapedPath()
	if prefix != "" {
		if len(path) < len(prefix) || !strings.EqualFold(path[:len(prefix)], prefix) {
			return nil
		}
		path = path[len(prefix):]
	}
	q := phpQuery(r.URL.RawQuery)
	route, viaQuery := "", false
	if q.hasRestRoute && (path == "/" || path == "/index.php" || path == "/wp-json" || strings.HasPrefix(path, "/wp-json/")) {
		route, viaQuery = escapeRoute(q.restRoute), true
	} else if rest, ok := strings.CutPrefix(path, "/wp-json"); ok && (rest == "" || rest[0] == '/') {
		route = rest
	} else {
		return nil
	}
	route = s.canonicalRoute(route)
	method := r.Method
	if q.hasMethod {
		method = strings.ToUpper(q.method)
	} else if m := r.Header.Get("X-Http-Method-Override"); m != "" {
		method = strings.ToUpper(m)
	}
	if prefix == "" && route == strings.TrimPrefix(path, "/wp-json") && method == r.Method && !viaQuery {
		return r // as sent: it is its own original
	}
	rr := r.Clone(context.WithValue(r.Context(), originalKey{}, &original{r: r, viaQuery: viaQuery}))
	rr.Method = method
	u := *r.URL
	u.RawPath = "/wp-json" + route
	u.Path, _ = url.PathUnescape(u.RawPath)
	rr.URL = &u
	return rr
}

type originalKey struct{}

// original is the request as the client sent it, kept while a REST view
// of it is routed.
type original struct {
	r        *http.Request
	viaQuery bool // the route came from ?rest_route=
}

// originalRequest is the request as the client sent it.
func originalRequest(r *http.Request) *http.Request {
	if o, ok := r.Context().Value(originalKey{}).(*original); ok {
		return o.r
	}
	return r
}

// viaRESTRoute tells whether the route came from ?rest_route=, which is
// the REST API under plain permalinks too.
func viaRESTRoute(r *http.Request) bool {
	o, ok := r.Context().Value(originalKey{}).(*original)
	return ok && o.viaQuery
}

// restQuery is what REST routing reads of a query string: rest_route and
// _method, each when given.
type restQuery struct {
	restRoute, method       string
	hasRestRoute, hasMethod bool
}

// restNames picks the raw names that may be rest_route or _method.
var restNames = phpquery.MayBe("rest_route", "_method")

// phpQuery reads the names REST routing reads (rest_route, _method) of a
// query string as PHP fills $_GET (phpquery): the last of repeated names
// wins. An array (rest_route[]=…), the last of its name, is not read: PHP
// fails on it, and the answer is PHP's.
func phpQuery(raw string) restQuery {
	var q restQuery
	for _, f := range phpquery.Fields(raw, restNames) {
		switch f.Name {
		case "rest_route":
			q.restRoute, q.hasRestRoute = f.Value, !f.Array
		case "_method":
			q.method, q.hasMethod = f.Value, !f.Array
		}
	}
	return q
}

// escapeRoute is a rest_route value as a path: WordPress matches the
// decoded route, so each segment is escaped again for routing.
func escapeRoute(route string) string {
	segs := strings.Split(route, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// routeTemplates are the path templates of the namespaces' routes, split
// into segments after /wp-json.
func routeTemplates(r *mux.Router) [][]string {
	var out [][]string
	r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		if t, err := route.GetPathTemplate(); err == nil {
			if rest, ok := strings.CutPrefix(t, "/wp-json/"); ok && !strings.HasSuffix(t, "/wp-json/") {
				out = append(out, strings.Split(rest, "/"))
			}
		}
		return nil
	})
	return out
}

// canonicalRoute gives route (escaped, after /wp-json) the letter case of
// the first route template it matches case-insensitively; variables keep
// the case they were sent in. A route no template matches is returned as
// it is (and goes to PHP).
func (s *Routes) canonicalRoute(route string) string {
	path := strings.TrimPrefix(route, "/")
	n := strings.Count(path, "/") + 1
next:
	for _, t := range s.templates {
		if len(t) != n {
			continue
		}
		same := len(path) < len(route) // as the route spells it already
		for i, rest := 0, path; i < len(t); i++ {
			var seg string
			seg, rest, _ = strings.Cut(rest, "/")
			switch {
			case strings.HasPrefix(t[i], "{"):
				if seg == "" {
					continue next
				}
			case t[i] != seg:
				if !strings.EqualFold(t[i], seg) {
					continue next
				}
				same = false
			}
		}
		if same {
			return route // nothing to build
		}
		var b strings.Builder
		for i, rest := 0, path; i < len(t); i++ {
			var seg string
			seg, rest, _ = strings.Cut(rest, "/")
			if !strings.HasPrefix(t[i], "{") {
				seg = t[i]
			}
			b.WriteByte('/')
			b.WriteString(seg)
		}
		return b.String()
	}
	return route
}

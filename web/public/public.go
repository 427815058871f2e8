// Package public serves the public routes a site owner configures
// (--public-routes): chosen theme options and field groups, the same for
// everyone, without credentials, cacheable by a CDN and a browser. The
// routes file and its rules are publicroute's; this is their HTTP.
package public

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/cachetag"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/wire/httpcond"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// Answer answers a route showing a namespace: what sel picks of it, as
// JSON, its ETag and cache tags.
type Answer func(ctx context.Context, sel publicroute.Selection) (body []byte, etag string, tags []string, err error)

// Handler serves the configured public routes.
type Handler struct {
	routes  Source
	answers map[wpsidecar.Namespace]Answer // of the namespaces the site serves
}

// Source gives the routes in force; whoever reads the file reloads and
// watches it (reload.File).
type Source interface{ Current() *publicroute.Config }

// New serves the routes of file with the answers of the namespaces the
// site serves.
func New(file Source, answers map[wpsidecar.Namespace]Answer) *Handler {
	return &Handler{routes: file, answers: answers}
}

// preflightMaxAge is how long a browser may keep a preflight's answer.
const preflightMaxAge = "600"

// Matches tells whether path (with or without a trailing slash, in any
// letter case, as WordPress matches routes) is a public route, and method
// one it answers: GET, HEAD and OPTIONS. Other methods are PHP's, which
// answers them 404 rest_no_route, as WordPress answers a read-only route.
func (h *Handler) Matches(path, method string) bool {
	if method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions {
		return false
	}
	return route(h.routes.Current(), path) != nil
}

// route is c's route at path, or nil.
func route(c *publicroute.Config, path string) *publicroute.Route {
	path = strings.TrimSuffix(path, "/")
	for i := range c.Routes {
		if strings.EqualFold(c.Routes[i].Path, path) {
			return &c.Routes[i]
		}
	}
	return nil
}

// ServeHTTP answers a request Matches let through: the same answer for
// everyone, whatever credentials it carries.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := h.routes.Current()
	rt := route(c, r.URL.Path)
	if rt == nil {
		// A reload removed the route since Matches: PHP's answer to it.
		wpjson.Render(w, r, errNoRoute)
		return
	}
	hd := w.Header()
	wpjson.SetRESTHeaders(hd)
	if len(c.CORSOrigins) > 0 {
		hd.Set("Vary", "Origin")
		if o := r.Header.Get("Origin"); slices.Contains(c.CORSOrigins, o) {
			hd.Set("Access-Control-Allow-Origin", o)
			hd.Set("Access-Control-Expose-Headers", "ETag, Cache-Tag, Surrogate-Key")
		}
	}
	if r.Method == http.MethodOptions {
		hd.Set("Allow", "GET, HEAD, OPTIONS")
		if hd.Get("Access-Control-Allow-Origin") != "" {
			hd.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			hd.Set("Access-Control-Allow-Headers", "If-None-Match, If-Modified-Since")
			hd.Set("Access-Control-Max-Age", preflightMaxAge)
		}
		hd.Set("Cache-Control", "public, max-age="+preflightMaxAge)
		hd.Del("Content-Type")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, etag, tags, err := h.answer(r.Context(), rt)
	if err != nil {
		hd.Set("Cache-Control", "no-store") // a CDN keeps serving what it has (stale-if-error)
		wpjson.Render(w, r, err)
		return
	}
	hd.Set("Cache-Control", rt.CacheControl())
	hd.Set("Allow", "GET, HEAD, OPTIONS")
	cachetag.Set(hd, tags...)
	// The rows read through the memo and the routes file: nothing else.
	wpsidecar.ScopeOf(r.Context()).Allow()
	if httpcond.NotModified(w, r, etag) {
		return
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

func (h *Handler) answer(ctx context.Context, rt *publicroute.Route) ([]byte, string, []string, error) {
	answer := h.answers[rt.Namespace]
	if answer == nil {
		return nil, "", nil, &wpjson.Error{Status: http.StatusServiceUnavailable, Code: "wpsidecar_not_served",
			Message: "This route shows " + string(rt.Namespace) + ", which the sidecar does not serve here (its configuration is missing)."}
	}
	return answer(ctx, rt.Selection)
}

var errNoRoute = &wpjson.Error{Status: http.StatusNotFound, Code: "rest_no_route", Message: "No route was found matching the URL and request method."}

// Package rest emulates WordPress's REST server in front of the sidecar's
// own namespaces: which request is a REST request and for which route
// (rest_route, the letter case of routes, _method), the checks before a
// route (permalinks, the database, the body limit), the headers
// serve_request sends, the global parameters (_fields, _envelope, _jsonp,
// _pretty), read-your-writes and a network site's cache tags. What it does
// not answer goes to the PHP handler it is given (proxy's pass-through).
package rest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gorilla/mux"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// DefaultMaxBodyBytes bounds request bodies on the sidecar's own routes.
const DefaultMaxBodyBytes = 1 << 20

// Handlers are the handlers of a REST namespace the sidecar answers
// itself, such as "fieldmgr/v1". Register adds its routes to a router
// mounted at /wp-json/{Name}; paths and methods it does not register go
// to PHP.
type Handlers interface {
	Name() string
	Register(r *mux.Router)
}

// Public serves routes without credentials (package public).
type Public interface {
	http.Handler
	// Matches tells whether path and method are a public route's.
	Matches(path, method string) bool
}

// Settings tell the router what it needs to know of the site, as last
// read from its database: the home URL and whether it uses plain
// permalinks. An error means the database cannot be used now: the
// sidecar's routes answer 503 until it can.
type Settings interface {
	REST() (Routing, error)
}

// SettingsFunc is Settings made of a function.
type SettingsFunc func() (Routing, error)

// REST calls f.
func (f SettingsFunc) REST() (Routing, error) { return f() }

// Routing is what the REST routing depends on of the site's settings.
type Routing struct {
	Home            string
	PlainPermalinks bool
}

// Options are what every site's routes share.
type Options struct {
	// PHP answers what the sidecar does not: the pass-through.
	PHP http.Handler
	// Served, when set, is told of each request the sidecar answers itself
	// and its route ("GET /wp-json/fieldmgr/v1/field-groups", "GET public";
	// "" when it has no template), for the access log and the metrics; w
	// is the writer of its answer, which unwraps (Unwrap) down to the one
	// the caller of Serve gave.
	Served func(w http.ResponseWriter, r *http.Request, route string)
	// MaxBodyBytes bounds request bodies; DefaultMaxBodyBytes when 0.
	MaxBodyBytes int64
	// Consistency, when set, carries a client's writes to its next reads
	// (with read replicas).
	Consistency Consistency
	// Compression, when set, codes the answers of the sidecar's own routes
	// as the client accepts (br, zstd, gzip); nil: identity, as WordPress.
	Compression *Compression
	// Prepared, when set, keeps answers and gives them again while the
	// change feed vouches that nothing they were built from changed.
	Prepared *Prepared
}

// PassedREST is a REST request no route of the sidecar takes, as
// WordPress routes it.
type PassedREST struct {
	// Site is the site's number as the change feed numbers sites (0 on
	// a single site; SiteOptions.FeedSite).
	Site int64
	// Route is its REST route, as escaped ("/wp/v2/posts"); Method the
	// method WordPress serves (_method and X-HTTP-Method-Override
	// applied).
	Route, Method string
}

// SiteOptions are what the sidecar answers one site with.
type SiteOptions struct {
	Settings Settings
	Handlers []Handlers // each namespace's
	Public   Public     // nil: no public routes
	// TagPrefix, on a network, starts every cache tag of the site's
	// answers ("site2:"; see cachetag.SitePrefix).
	TagPrefix string
	// FeedSite is the site's number as the change feed numbers sites:
	// its blog id on a network, 0 on a single site (PassedREST.Site).
	FeedSite int64
}

// Routes are one site's routes: its namespaces behind the REST checks
// (permalinks, database, body limits) and its public routes.
type Routes struct {
	o         Options
	settings  Settings
	router    *mux.Router
	templates [][]string // the namespaces' route templates after /wp-json
	public    Public
	tags      func(http.Header) // the site's cache-tag prefix; nil: none
	id        uint64            // the site's routes among those Prepared keeps answers of
	// owned are the escaped path prefixes of the namespaces' routers
	// ("/wp-json/fieldmgr/v1/"): a REST request under none of them is
	// passed on without the router's matching.
	owned    []string
	feedSite int64
}

// New builds a site's routes. It fails when a namespace registered a
// route the router cannot use (a bad path template).
func New(o Options, so SiteOptions) (*Routes, error) {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	s := &Routes{o: o, settings: so.Settings, public: so.Public, tags: siteTags(so.TagPrefix), feedSite: so.FeedSite}
	if o.Prepared != nil {
		s.id = o.Prepared.ids.Add(1)
	}
	r := mux.NewRouter().SkipClean(true).UseEncodedPath()
	for _, ns := range so.Handlers {
		s.owned = append(s.owned, "/wp-json/"+ns.Name()+"/")
		sub := r.PathPrefix("/wp-json/" + ns.Name() + "/").Subrouter()
		sub.Use(s.intercept)
		ns.Register(sub)
	}
	// Last, so that everything no namespace route matched (other paths,
	// other methods) goes to PHP, as the client sent it.
	r.PathPrefix("/").HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.o.PHP.ServeHTTP(w, originalRequest(r)) })
	if err := r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error { return route.GetError() }); err != nil {
		return nil, fmt.Errorf("rest: route: %w", err)
	}
	s.router, s.templates = r, routeTemplates(r)
	return s, nil
}

// Answerer is who answers a request: decided once (Routes.Decide).
type Answerer int

const (
	// PHP: not a REST request (or /wp-json/… under plain permalinks),
	// passed on as the client sent it.
	PHP Answerer = iota
	// PHPREST: a REST request no route of the sidecar takes (WordPress's
	// own routes, a plugin's): PHP's to answer, as the client sent it,
	// and --cache-rest's to keep.
	PHPREST
	// Sidecar: one of the sidecar's own routes (a namespace's, under
	// which a path no route matches still goes to PHP) or a public route.
	Sidecar
)

// Decision is who answers a request and what they need of it.
type Decision struct {
	By Answerer
	// REST is the request as WordPress routes it (By PHPREST).
	REST PassedREST
	// view is the request's REST view (By Sidecar), public whether a
	// public route takes it, prefix the site's path.
	view   *http.Request
	public bool
	prefix string
}

// Decide tells who answers r: PHP, PHP as a REST request, or the sidecar.
// prefix is the site's path on a subdirectory network ("/blog2"), ""
// elsewhere.
func (s *Routes) Decide(r *http.Request, prefix string) Decision {
	rr := s.restView(r, prefix)
	switch {
	case rr == nil:
		return Decision{By: PHP}
	case s.public != nil && s.public.Matches(rr.URL.Path, rr.Method):
		return Decision{By: Sidecar, view: rr, public: true, prefix: prefix}
	case s.owns(rr):
		return Decision{By: Sidecar, view: rr, prefix: prefix}
	}
	if st, err := s.settings.REST(); err != nil || (st.PlainPermalinks && !viaRESTRoute(rr)) {
		// Under plain permalinks only ?rest_route= is the REST API; with
		// the site's settings unknown, PHP decides.
		return Decision{By: PHP}
	}
	return Decision{By: PHPREST, REST: PassedREST{Site: s.feedSite, Route: strings.TrimPrefix(rr.URL.EscapedPath(), "/wp-json"), Method: rr.Method}}
}

// Serve answers r as Decide says, PHP's requests by Options.PHP.
func (s *Routes) Serve(w http.ResponseWriter, r *http.Request, prefix string) {
	if d := s.Decide(r, prefix); d.By == Sidecar {
		s.Answer(w, r, d)
		return
	}
	s.o.PHP.ServeHTTP(w, r)
}

// Answer answers r, which d says the sidecar answers: from a kept answer
// when there is one, else by its route.
func (s *Routes) Answer(w http.ResponseWriter, r *http.Request, d Decision) {
	if s.o.Prepared != nil && s.preparable(r) {
		s.servePrepared(w, r, d)
		return
	}
	s.route(w, d)
}

// route answers d's REST view: by the public route, or by the namespace's
// router (whose last route passes what no route of the namespace takes
// on to PHP, as the client sent it).
func (s *Routes) route(w http.ResponseWriter, d Decision) {
	if d.public {
		s.servePublic(w, d.view)
		return
	}
	s.router.ServeHTTP(w, d.view)
}

// owns tells whether r, a REST view, is under one of the namespaces'
// routers (as they match: the escaped path).
func (s *Routes) owns(r *http.Request) bool {
	p := r.URL.EscapedPath()
	for _, o := range s.owned {
		if strings.HasPrefix(p, o) {
			return true
		}
	}
	return false
}

// intercept runs before every route of a namespace: with plain permalinks
// the request is not a REST request and goes to PHP; without a database the
// answer is 503; bodies are bounded.
//
// Its own answers are written with wpjson.WriteError, not Render: they come
// before the route, where WordPress's REST server has not started, so they
// carry none of the route's no-cache headers (which Render would add, after
// asking the database that may be down who is logged in).
func (s *Routes) intercept(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site, err := s.settings.REST()
		if err != nil {
			s.markSidecar(w, r)
			if !wpjson.IsUnavailable(err) {
				zerolog.Ctx(r.Context()).Error().Err(err).Msg("site settings")
			}
			wpjson.WriteError(w, wpjson.ErrDBUnavailable)
			return
		}
		if site.PlainPermalinks && !viaRESTRoute(r) {
			// /wp-json/… is no REST route without pretty permalinks;
			// ?rest_route=… is, and stays the sidecar's.
			s.o.PHP.ServeHTTP(w, originalRequest(r))
			return
		}
		s.markSidecar(w, r)
		restHeaders(w.Header(), r, site)
		// Answers depend on who asks: no cache may give one user's answer
		// to another (docs/api.md §5); and on Origin, for CORS. The
		// no-cache headers are the routes' (wpjson.Register), as the
		// site's WordPress sends them, but a logged-in user's never
		// without no-store, private (wpjson.NoCacheHeaders).
		w.Header().Set("Vary", "Origin, Authorization, Cookie")
		if r.ContentLength > s.o.MaxBodyBytes {
			wpjson.WriteError(w, wpjson.ErrTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxBodyBytes)
		r, receipt := s.readYourWrites(r)
		s.answer(w, r, receipt, next)
	})
}

// servePublic answers a public route: as the namespaces' routes, PHP's
// under plain permalinks unless named by ?rest_route=, 503 while the
// database is down; but without credentials, for everyone alike.
func (s *Routes) servePublic(w http.ResponseWriter, r *http.Request) {
	site, err := s.settings.REST()
	if err == nil && site.PlainPermalinks && !viaRESTRoute(r) {
		s.o.PHP.ServeHTTP(w, originalRequest(r))
		return
	}
	s.served(w, r, r.Method+" public")
	if err != nil {
		w.Header().Set("Cache-Control", "no-store")
		wpjson.Render(w, r, err)
		return
	}
	setAPILink(w.Header(), site) // CORS is the public handler's: configured origins, no credentials
	var notStorable func(http.Header)
	if originalRequest(r).Method != r.Method {
		// _method or X-HTTP-Method-Override chose another method: a shared
		// cache keys the answer by the method sent (GET), so it may keep
		// only the GET answer itself.
		notStorable = func(h http.Header) { h.Set("Cache-Control", "no-store") }
	}
	s.answer(w, r, notStorable, s.public)
}

// markSidecar tells Options.Served that the sidecar answers r, on the
// route the router chose.
func (s *Routes) markSidecar(w http.ResponseWriter, r *http.Request) {
	route := ""
	if cur := mux.CurrentRoute(r); cur != nil {
		if t, err := cur.GetPathTemplate(); err == nil {
			route = r.Method + " " + t
		}
	}
	s.served(w, r, route)
}

// served tells Options.Served, and the capture of an answer to keep,
// that the sidecar answers r on route.
func (s *Routes) served(w http.ResponseWriter, r *http.Request, route string) {
	if c, ok := w.(*capture); ok {
		c.route = route
	}
	if s.o.Served != nil {
		s.o.Served(w, r, route)
	}
}

// restHeaders adds what WordPress's REST server sends on every answer
// before dispatch: the API discovery link and, for a request with an
// Origin, the CORS headers (rest_send_cors_headers).
func restHeaders(h http.Header, r *http.Request, s Routing) {
	setAPILink(h, s)
	if origin := r.Header.Get("Origin"); origin != "" {
		h.Set("Access-Control-Allow-Origin", sanitizeOrigin(origin))
		h.Set("Access-Control-Allow-Methods", "OPTIONS, GET, POST, PUT, PATCH, DELETE")
		h.Set("Access-Control-Allow-Credentials", "true")
	}
}

// setAPILink is the REST API discovery link (get_rest_url).
func setAPILink(h http.Header, s Routing) {
	root := s.Home + "/wp-json/"
	if s.PlainPermalinks {
		root = s.Home + "/?rest_route=/"
	}
	h.Set("Link", "<"+root+">; rel=\"https://api.w.org/\"")
}

// sanitizeOrigin keeps "null" and otherwise drops what esc_url_raw would
// not let into a header.
func sanitizeOrigin(o string) string {
	if o == "null" {
		return o
	}
	return strings.Map(func(r rune) rune {
		if r < 0x21 || r > 0x7e || r == '"' || r == '<' || r == '>' || r == '\\' {
			return -1
		}
		return r
	}, o)
}

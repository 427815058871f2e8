// Package proxy is the sidecar's public http.Handler: the router, the
// middleware around it, the pass-through to PHP and the admin listener.
package proxy

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/wpjson"
)

// DefaultMaxBodyBytes bounds request bodies on the sidecar's own routes.
const DefaultMaxBodyBytes = 1 << 20

// Namespace is a REST namespace the sidecar answers itself, such as
// "fieldmgr/v1". Register adds its routes to a router mounted at
// /wp-json/{Name}; paths and methods it does not register go to PHP.
type Namespace interface {
	Name() string
	Register(r *mux.Router)
}

// Public serves routes without credentials (package public).
type Public interface {
	http.Handler
	// Matches tells whether path and method are a public route's.
	Matches(path, method string) bool
}

// Site tells the router what it needs to know of the site, as last read
// from its database: the home URL and whether it uses plain permalinks.
// An error means the database cannot be used now: the sidecar's routes
// answer 503 until it can.
type Site interface {
	REST() (SiteREST, error)
}

// SiteFunc is a Site made of a function.
type SiteFunc func() (SiteREST, error)

// REST calls f.
func (f SiteFunc) REST() (SiteREST, error) { return f() }

// SiteREST is what the REST routing depends on.
type SiteREST struct {
	Home            string
	PlainPermalinks bool
}

// unavailable is the mark of an error that means "the database cannot be
// used now" (store.ErrUnavailable has it), as opposed to a fault.
type unavailable interface{ Unavailable() bool }

func isUnavailable(err error) bool {
	var u unavailable
	return errors.As(err, &u) && u.Unavailable()
}

// Options configures the handler.
type Options struct {
	Upstream        *url.URL
	TrustedProxies  []netip.Prefix
	UpstreamTimeout time.Duration
	UpstreamDial    time.Duration
	BodyTimeout     time.Duration
	MaxBodyBytes    int64 // on the sidecar's own routes; DefaultMaxBodyBytes when 0
	// Main is the single site's (without Sites).
	Main SiteOptions
	// Consistency, when set, carries a client's writes to its next reads
	// (with read replicas).
	Consistency Consistency
	// Sites, when set (a multisite network), finds the site a request is
	// for: its routes (made with NewSite) and the site's path to strip
	// before routing ("/blog2" for a subdirectory site, "" otherwise). No
	// routes: PHP answers (no site found, a site WordPress blocks).
	// Main is then not used.
	Sites   func(*http.Request) (routes *SiteRoutes, prefix string)
	Log     zerolog.Logger
	Metrics *Metrics
	// AccessLog, when set, tells whether an answer of a status gets an
	// access line (--access-log); nil: every answer does.
	AccessLog func(status int) bool
}

// SiteOptions are what the sidecar answers one site with.
type SiteOptions struct {
	Site       Site
	Namespaces []Namespace
	Public     Public // nil: no public routes
	// TagPrefix, on a network, starts every cache tag of the site's
	// answers ("site2:"; see cachetag.SitePrefix).
	TagPrefix string
}

// SiteRoutes are one site's routes: its namespaces behind the REST
// checks (permalinks, database, body limits) and its public routes.
type SiteRoutes struct {
	h         *Handler
	site      Site
	router    *mux.Router
	php       *mux.Route // the catch-all: everything else goes to PHP
	templates [][]string // the namespaces' route templates after /wp-json
	public    Public
	publicH   http.Handler
}

// Handler is the public handler.
type Handler struct {
	opts        Options
	log         zerolog.Logger
	metrics     *Metrics
	ids         *requestIDs
	clientIP    func(*http.Request) string
	passthrough http.Handler
	root        http.Handler
	main        *SiteRoutes // without Sites: the one site's
}

// New builds the handler. It fails when a namespace registered a route
// the router cannot use (a bad path template).
func New(o Options) (*Handler, error) {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	h := &Handler{opts: o, log: o.Log, metrics: o.Metrics, ids: newRequestIDs(), clientIP: ClientIPFunc(o.TrustedProxies)}
	h.passthrough = newPassthrough(upstreamOptions{
		URL: o.Upstream, Trusted: o.TrustedProxies,
		HeaderTimeout: o.UpstreamTimeout, DialTimeout: o.UpstreamDial,
		Log: o.Log, Metrics: o.Metrics, MaxIdlePerHost: upstreamIdleConns,
	})
	if o.Sites == nil {
		var err error
		if h.main, err = h.NewSite(o.Main); err != nil {
			return nil, err
		}
	}
	h.root = h.observe(http.HandlerFunc(h.dispatch))
	return h, nil
}

// NewSite builds a site's routes. It fails when a namespace registered a
// route the router cannot use (a bad path template).
func (h *Handler) NewSite(o SiteOptions) (*SiteRoutes, error) {
	s := &SiteRoutes{h: h, site: o.Site, public: o.Public}
	r := mux.NewRouter().SkipClean(true).UseEncodedPath()
	for _, ns := range o.Namespaces {
		sub := r.PathPrefix("/wp-json/" + ns.Name() + "/").Subrouter()
		sub.Use(s.intercept, restGlobals)
		if o.TagPrefix != "" {
			sub.Use(siteTags(o.TagPrefix))
		}
		ns.Register(sub)
	}
	// Last, so that everything no namespace route matched (other paths,
	// other methods) goes to PHP, as the client sent it.
	s.php = r.PathPrefix("/").HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.passthrough.ServeHTTP(w, originalRequest(r))
	})
	if err := r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error { return route.GetError() }); err != nil {
		return nil, fmt.Errorf("proxy: route: %w", err)
	}
	s.router, s.templates = r, routeTemplates(r)
	if o.Public != nil {
		var pub http.Handler = o.Public
		if o.TagPrefix != "" {
			pub = siteTags(o.TagPrefix)(pub)
		}
		s.publicH = restGlobals(pub)
	}
	return s, nil
}

// dispatch finds the request's site, then routes the REST view of the
// request (restView) to the site's own routes when one matches it, and
// the request as sent to PHP otherwise.
func (h *Handler) dispatch(w http.ResponseWriter, r *http.Request) {
	s, prefix := h.main, ""
	if h.opts.Sites != nil {
		if s, prefix = h.opts.Sites(r); s == nil {
			h.passthrough.ServeHTTP(w, r)
			return
		}
	}
	if rr := s.restView(r, prefix); rr != nil {
		if s.publicH != nil && s.public.Matches(rr.URL.Path, rr.Method) {
			s.servePublic(w, rr)
			return
		}
		// One match: what no namespace route takes reaches the router's
		// last route, which passes the request on as the client sent it.
		s.router.ServeHTTP(w, rr)
		return
	}
	h.passthrough.ServeHTTP(w, r)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(r.TransferEncoding) > 0 {
		// RFC 9112 §6.1: a request framed by Transfer-Encoding that also
		// had a Content-Length must not leave its connection open (the
		// two framings are how requests are smuggled). Go drops the
		// Content-Length before a handler can see it, so every request
		// with a Transfer-Encoding closes its connection after the answer.
		w.Header().Set("Connection", "close")
	}
	h.root.ServeHTTP(w, r)
}

// intercept runs before every route of a namespace: with plain permalinks
// the request is not a REST request and goes to PHP; without a database the
// answer is 503; bodies are bounded.
func (site *SiteRoutes) intercept(next http.Handler) http.Handler {
	h := site.h
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := site.site.REST()
		if err != nil {
			h.markSidecar(r)
			if !isUnavailable(err) {
				zerolog.Ctx(r.Context()).Error().Err(err).Msg("site settings")
			}
			wpjson.WriteError(w, wpjson.ErrDBUnavailable)
			return
		}
		if s.PlainPermalinks && !viaRESTRoute(r) {
			// /wp-json/… is no REST route without pretty permalinks;
			// ?rest_route=… is, and stays the sidecar's.
			h.passthrough.ServeHTTP(w, originalRequest(r))
			return
		}
		h.markSidecar(r)
		restHeaders(w.Header(), r, s)
		// Answers depend on who asks: no cache may give one user's answer
		// to another (docs/api.md §5); and on Origin, for CORS. The
		// no-cache headers are the routes' (wpjson.Register), as the
		// site's WordPress sends them.
		w.Header().Set("Vary", "Origin, Authorization, Cookie")
		if r.ContentLength > h.opts.MaxBodyBytes {
			wpjson.WriteError(w, &wpjson.Error{Status: http.StatusRequestEntityTooLarge, Code: "wpsidecar_body_too_large", Message: "The request body is too large."})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
		w, r = h.readYourWrites(w, r)
		next.ServeHTTP(w, r)
	})
}

// restHeaders adds what WordPress's REST server sends on every answer
// before dispatch: the API discovery link and, for a request with an
// Origin, the CORS headers (rest_send_cors_headers).
func restHeaders(h http.Header, r *http.Request, s SiteREST) {
	setAPILink(h, s)
	if origin := r.Header.Get("Origin"); origin != "" {
		h.Set("Access-Control-Allow-Origin", sanitizeOrigin(origin))
		h.Set("Access-Control-Allow-Methods", "OPTIONS, GET, POST, PUT, PATCH, DELETE")
		h.Set("Access-Control-Allow-Credentials", "true")
	}
}

// setAPILink is the REST API discovery link (get_rest_url).
func setAPILink(h http.Header, s SiteREST) {
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

// SecureFunc tells whether a request reached the site over HTTPS: TLS at
// the sidecar, or X-Forwarded-Proto https from a trusted proxy.
func SecureFunc(trusted []netip.Prefix) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if r.TLS != nil {
			return true
		}
		return isTrusted(trusted, r.RemoteAddr) && strings.EqualFold(strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")[0]), "https")
	}
}

// ClientIPFunc is the client's address as the sidecar may believe it: the
// peer's, or, when the peer is a trusted proxy, the last address in
// X-Forwarded-For that is not itself a trusted proxy (the earlier entries
// are the client's own claims).
func ClientIPFunc(trusted []netip.Prefix) func(*http.Request) string {
	return func(r *http.Request) string {
		ip := remoteIP(r.RemoteAddr)
		if !isTrusted(trusted, r.RemoteAddr) {
			return ip
		}
		xff := r.Header.Values("X-Forwarded-For")
		if len(xff) == 0 {
			return ip
		}
		hops := strings.Split(strings.Join(xff, ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, ok := forwardedAddr(hops[i])
			if !ok {
				if i == len(hops)-1 {
					// The trusted proxy's own entry is not an address: the
					// client is not known, and is not the proxy either
					// (whose attempts every client would then share).
					return ""
				}
				break
			}
			ip = a.Unmap().String()
			if !isTrusted(trusted, netip.AddrPortFrom(a, 0).String()) {
				break
			}
		}
		return ip
	}
}

// forwardedAddr reads an X-Forwarded-For entry in the forms proxies
// write: an address, an IPv6 one in brackets, either with a port.
func forwardedAddr(s string) (netip.Addr, bool) {
	s = strings.Trim(strings.TrimSpace(s), `"`)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), true
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	return a, err == nil
}

// servePublic answers a public route: as the namespaces' routes, PHP's
// under plain permalinks unless named by ?rest_route=, 503 while the
// database is down; but without credentials, for everyone alike.
func (site *SiteRoutes) servePublic(w http.ResponseWriter, r *http.Request) {
	h := site.h
	s, err := site.site.REST()
	if err == nil && s.PlainPermalinks && !viaRESTRoute(r) {
		h.passthrough.ServeHTTP(w, originalRequest(r))
		return
	}
	if info := infoFrom(r.Context()); info != nil {
		info.servedBy, info.route = servedBySidecar, r.Method+" public"
	}
	if err != nil {
		w.Header().Set("Cache-Control", "no-store")
		wpjson.Render(w, r, err)
		return
	}
	setAPILink(w.Header(), s) // CORS is the public handler's: configured origins, no credentials
	if originalRequest(r).Method != r.Method {
		// _method or X-HTTP-Method-Override chose another method: a shared
		// cache keys the answer by the method sent (GET), so it may keep
		// only the GET answer itself.
		w = &notStorable{ResponseWriter: w}
	}
	site.publicH.ServeHTTP(w, r)
}

// notStorable makes an answer one no shared cache may keep.
type notStorable struct {
	http.ResponseWriter
	done bool
}

func (n *notStorable) WriteHeader(code int) {
	n.mark()
	n.ResponseWriter.WriteHeader(code)
}

func (n *notStorable) Write(b []byte) (int, error) {
	n.mark()
	return n.ResponseWriter.Write(b)
}

func (n *notStorable) Unwrap() http.ResponseWriter { return n.ResponseWriter }

func (n *notStorable) mark() {
	if !n.done {
		n.done = true
		n.Header().Set("Cache-Control", "no-store")
	}
}

func (h *Handler) markSidecar(r *http.Request) {
	info := infoFrom(r.Context())
	if info == nil {
		return
	}
	info.servedBy = servedBySidecar
	if cur := mux.CurrentRoute(r); cur != nil {
		if t, err := cur.GetPathTemplate(); err == nil {
			info.route = r.Method + " " + t
		}
	}
}

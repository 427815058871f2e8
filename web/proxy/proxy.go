// Package proxy is the sidecar's public http.Handler, the reverse proxy in
// front of WordPress: the site dispatch, the middleware around it (request
// ids, access log, metrics), the pass-through to PHP and the admin
// listener. A site's own routes, and WordPress's REST server around them,
// are package rest's.
package proxy

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/web/rest"
	"github.com/wpsidecar/wpsidecar/web/restcache"
)

// Options configures the handler.
type Options struct {
	Upstream        *url.URL
	TrustedProxies  []netip.Prefix
	UpstreamTimeout time.Duration
	UpstreamDial    time.Duration
	BodyTimeout     time.Duration
	MaxBodyBytes    int64 // on the sidecar's own routes; rest.DefaultMaxBodyBytes when 0
	// Compress codes the sidecar's own answers as clients accept (--compress).
	Compress bool
	// Prepared, when set, keeps the sidecar's own answers while the change
	// feed vouches for them (serve-from-feed).
	Prepared *rest.Prepared
	// RESTCache, when set, keeps PHP's answers to anonymous reads of the
	// REST namespaces it names and gives them again (--cache-rest).
	RESTCache *restcache.Cache
	// Main is the single site's (without Sites).
	Main rest.SiteOptions
	// Consistency, when set, carries a client's writes to its next reads
	// (with read replicas).
	Consistency rest.Consistency
	// Sites, when set (a multisite network), finds the site a request is
	// for: its routes (made with NewSite) and the site's path to strip
	// before routing ("/blog2" for a subdirectory site, "" otherwise). No
	// routes: PHP answers (no site found, a site WordPress blocks).
	// Main is then not used.
	Sites   func(*http.Request) (routes *rest.Routes, prefix string)
	Log     zerolog.Logger
	Metrics *Metrics
	// AccessLog, when set, tells whether an answer of a status gets an
	// access line (--access-log); nil: every answer does.
	AccessLog func(status int) bool
}

// Handler is the public handler.
type Handler struct {
	opts        Options
	log         zerolog.Logger
	metrics     *Metrics
	ids         *requestIDs
	clientIP    func(*http.Request) string
	forwarded   func(*http.Request) string // forwardedKey's
	passthrough http.Handler
	root        http.Handler
	rest        rest.Options // what every site's routes share
	main        *rest.Routes // without Sites: the one site's
}

// New builds the handler. It fails when a namespace registered a route
// the router cannot use (a bad path template).
func New(o Options) (*Handler, error) {
	h := &Handler{opts: o, log: o.Log, metrics: o.Metrics, ids: newRequestIDs(), clientIP: ClientIPFunc(o.TrustedProxies), forwarded: forwardedKey(o.TrustedProxies)}
	h.passthrough = newPassthrough(upstreamOptions{
		URL: o.Upstream, Trusted: o.TrustedProxies,
		HeaderTimeout: o.UpstreamTimeout, DialTimeout: o.UpstreamDial,
		Log: o.Log, Metrics: o.Metrics, MaxIdlePerHost: upstreamIdleConns,
	})
	h.rest = rest.Options{PHP: h.passthrough, Served: served, MaxBodyBytes: o.MaxBodyBytes, Consistency: o.Consistency, Prepared: o.Prepared}
	if o.Prepared != nil && o.Metrics != nil {
		o.Metrics.Register(preparedMetrics(o.Prepared)...)
	}
	if o.RESTCache != nil {
		if o.Metrics != nil {
			o.Metrics.Register(restCacheMetrics(o.RESTCache)...)
		}
	}
	if o.Compress {
		h.rest.Compression = rest.NewCompression()
		if o.Metrics != nil {
			o.Metrics.Register(cacheBytes("coded", h.rest.Compression.Bytes))
		}
	}
	if o.Sites == nil {
		var err error
		if h.main, err = h.NewSite(o.Main); err != nil {
			return nil, err
		}
	}
	h.root = h.observe(http.HandlerFunc(h.dispatch))
	return h, nil
}

// NewSite builds a site's routes, which pass what they do not answer on
// to this handler's PHP. It fails when a namespace registered a route the
// router cannot use (a bad path template).
func (h *Handler) NewSite(o rest.SiteOptions) (*rest.Routes, error) { return rest.New(h.rest, o) }

// dispatch finds the request's site and decides, once, who answers it:
// the site's own routes, PHP through the cache of its REST answers
// (--cache-rest), or PHP. A request of no site's is PHP's.
func (h *Handler) dispatch(w http.ResponseWriter, r *http.Request) {
	s, prefix := h.main, ""
	if h.opts.Sites != nil {
		if s, prefix = h.opts.Sites(r); s == nil {
			h.passthrough.ServeHTTP(w, r)
			return
		}
	}
	switch d := s.Decide(r, prefix); {
	case d.By == rest.Sidecar:
		s.Answer(w, r, d)
	case d.By == rest.PHPREST && h.opts.RESTCache != nil:
		h.passREST(w, r, d.REST)
	default:
		h.passthrough.ServeHTTP(w, r)
	}
}

// passREST passes a REST request no route of the sidecar takes through
// the cache of PHP's answers, keyed by what the pass-through forwards,
// and notes in the access log how it was answered.
func (h *Handler) passREST(w http.ResponseWriter, r *http.Request, q rest.PassedREST) {
	outcome := h.opts.RESTCache.Serve(w, r, restcache.Request{Site: q.Site, Route: q.Route, Method: q.Method, Forwarded: h.forwarded(r)}, h.passthrough)
	if info := infoOf(w); info != nil {
		info.restCache = outcome
		if outcome == restcache.Hit {
			info.servedBy, info.route = servedBySidecar, routeRESTCache
		}
	}
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

// served marks r as the sidecar's own, answered on route (rest.Options.Served).
func served(w http.ResponseWriter, _ *http.Request, route string) {
	info := infoOf(w)
	if info == nil {
		return
	}
	info.servedBy = servedBySidecar
	if route != "" {
		info.route = route
	}
}

// LameDuck has every answer close its connection while stopping: a client
// (or balancer) then opens its next connection elsewhere, instead of
// sending on one the server is about to close.
func LameDuck(stopping *atomic.Bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stopping.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

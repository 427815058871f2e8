package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// upstreamOptions configures the pass-through to PHP.
type upstreamOptions struct {
	URL            *url.URL
	Trusted        []netip.Prefix
	HeaderTimeout  time.Duration
	DialTimeout    time.Duration
	Log            zerolog.Logger
	Metrics        *Metrics
	MaxIdlePerHost int
}

// The transport to PHP.
const (
	// upstreamIdleConns: keep-alive connections kept per PHP server; PHP-FPM
	// pools are rarely larger, and a new connection per request costs a
	// handshake on every pass-through.
	upstreamIdleConns = 256
	// upstreamKeepAlive: TCP keep-alive probes on idle connections, so a
	// PHP server that vanished is noticed.
	upstreamKeepAlive = 30 * time.Second
	// upstreamIdleTimeout: an unused connection is closed after this (PHP's
	// web server may close it sooner: nginx after 75 s by default, which
	// the transport notices and redials).
	upstreamIdleTimeout = 90 * time.Second
	// expectContinueWait: how long a body with Expect: 100-continue waits
	// for PHP's go-ahead before it is sent anyway.
	expectContinueWait = time.Second
	// copyBufferSize: one read of a body streamed either way; PHP writes in
	// pieces of about 4 KiB, larger uploads and downloads fill it.
	copyBufferSize = 32 << 10
)

// HeaderPassed marks a request the sidecar passes on to --upstream. The
// recipes for a web server in front of the sidecar (deploy/nginx, apache,
// caddy) send a request carrying it to PHP, never to the sidecar: no loop
// when the upstream is that same server. Its value is a secret of the web
// server's: the recipe gives it to every request it sends to the sidecar
// (replacing whatever the client sent), the sidecar keeps it on what it
// passes on, and the server honours the marker only with that value, so a
// client cannot send a request of the sidecar's to PHP by naming the
// marker. Without one (an older recipe, no web server in front) the
// marker is "1".
const HeaderPassed = "X-WPSidecar-Passed"

// headerLoop lists the sidecar processes that passed a request on (a
// random token each, see loopToken): one that finds its own token on a
// request it would pass on has seen it before, so the server in front did
// not recognise its marker (a recipe without its secret, or one that does
// not match), and it answers 508 instead of sending the request round
// again, and again.
const headerLoop = "X-WPSidecar-Loop"

// loopToken is this process's token in headerLoop.
var loopToken = func() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}()

// looped tells whether this process passed r on before.
func looped(r *http.Request) bool {
	for _, v := range r.Header.Values(headerLoop) {
		for _, t := range strings.Split(v, ",") {
			if strings.TrimSpace(t) == loopToken {
				return true
			}
		}
	}
	return false
}

// newPassthrough builds the reverse proxy that carries every request the
// sidecar does not answer to PHP unchanged: Host, raw path and raw query are
// kept; X-Forwarded-* are added, and believed from trusted proxies only.
func newPassthrough(o upstreamOptions) http.Handler {
	dialer := &net.Dialer{Timeout: o.DialTimeout, KeepAlive: upstreamKeepAlive}
	transport := &http.Transport{
		Proxy:                 nil, // never an environment proxy
		DialContext:           dialer.DialContext,
		MaxIdleConns:          o.MaxIdlePerHost,
		MaxIdleConnsPerHost:   o.MaxIdlePerHost,
		IdleConnTimeout:       upstreamIdleTimeout,
		ResponseHeaderTimeout: o.HeaderTimeout,
		ExpectContinueTimeout: expectContinueWait,
		// Bodies pass as they are; the transport must not add gzip of its
		// own and decompress behind the client's back.
		DisableCompression: true,
		WriteBufferSize:    copyBufferSize,
		ReadBufferSize:     copyBufferSize,
	}
	clientIP := ClientIPFunc(o.Trusted)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			in, out := pr.In, pr.Out
			trusted := isTrusted(o.Trusted, in.RemoteAddr)
			if trusted {
				// Rewrite removed these; a trusted proxy's chain goes on.
				copyHeader(out.Header, in.Header, "X-Forwarded-For")
			}
			pr.SetURL(o.URL)
			if !trusted {
				dropProxyClaims(out.Header)
			}
			pr.SetXForwarded()
			if trusted {
				copyHeader(out.Header, in.Header, "X-Forwarded-Proto")
				copyHeader(out.Header, in.Header, "X-Forwarded-Host")
				copyHeader(out.Header, in.Header, "Forwarded")
			}
			if out.Header.Get("X-Real-Ip") == "" {
				out.Header.Set("X-Real-Ip", clientIP(in))
			}
			out.Host = in.Host
			// The marker a web server in front honours (deploy/): what the
			// sidecar passes on goes to PHP, not back to the sidecar, when
			// --upstream is that same server. Its value is the one the
			// server gave the request (its secret), else 1. A client that
			// reaches the sidecar directly and names a value of its own gains
			// nothing: the server honours only its secret.
			passed := in.Header.Get(HeaderPassed)
			if passed == "" {
				passed = "1"
			}
			out.Header.Set(HeaderPassed, passed)
			out.Header.Add(headerLoop, loopToken)
			// ReverseProxy drops query parameters Go cannot parse (those
			// with ';'); PHP reads them, so the raw query goes as it came.
			out.URL.RawQuery = in.URL.RawQuery
		},
		// The answer carries one request id, the sidecar's, which its log
		// names and PHP was given; the upstream's own (a web server's, or
		// a sidecar's when one passes to another) would make two.
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Del("X-Request-Id")
			return nil
		},
		Transport:    timedTransport{transport, nil},
		BufferPool:   newBufferPool(),
		ErrorLog:     StdLogger(o.Log),
		ErrorHandler: upstreamError(o.Log, o.Metrics, nil),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, pass := infoOf(w), rp
		if info != nil {
			// The request's record goes with the proxy that passes it on,
			// as a value: a copy of the proxy (its fields, shared) whose
			// transport and error handler write to it.
			one := *rp
			one.Transport = timedTransport{transport, info}
			one.ErrorHandler = upstreamError(o.Log, o.Metrics, info)
			pass = &one
			info.servedBy = servedByPHP
			info.route = routePHP
			if r.Body != nil && r.Body != http.NoBody {
				info.body = &clientBody{ReadCloser: r.Body}
				r.Body = info.body
			}
		}
		if looped(r) {
			zerolog.Ctx(r.Context()).Error().Str("upstream", o.URL.Redacted()).
				Msg("a request passed on came back to the sidecar: --upstream is the sidecar's own address, or the web server there does not recognise the marker " + HeaderPassed + " (its recipe's secret, docs/deploy/)")
			writePlain(w, http.StatusLoopDetected, "508 Loop Detected: the request came back to the sidecar that passed it on.\n")
			return
		}
		pass.ServeHTTP(w, r)
	})
}

// proxyClaims are headers that PHP code and common wp-config.php snippets
// read as "the proxy in front says so": the client's address, HTTPS, port,
// scheme, host, the target. From a client that is not a trusted proxy they are lies, and are
// removed (Go's ReverseProxy already drops X-Forwarded-For/-Host/-Proto
// and Forwarded). PHP sees a header under its name with dashes and
// underscores alike, so both spellings go.
var proxyClaims = func() map[string]bool {
	m := map[string]bool{}
	for _, h := range []string{
		"X-Forwarded-Ssl", "X-Forwarded-Port", "X-Forwarded-Scheme", "X-Forwarded-Server", "X-Forwarded-Protocol",
		"X-Forwarded", "Forwarded-For", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded",
		"X-Url-Scheme", "Front-End-Https", "X-Real-Ip", "Client-Ip", "X-Client-Ip", "True-Client-Ip",
		"X-Cluster-Client-Ip", "Cf-Connecting-Ip", "Cf-Visitor", "Fastly-Client-Ip", "X-Original-Forwarded-For",
		"X-Appengine-User-Ip", "X-Https", "Https",
		// Scheme and host as CDNs, load balancers and ingresses name them
		// (CloudFront, Azure's ARR, Fastly, nginx-ingress, HAProxy
		// recipes), and IIS's rewritten target, which WordPress takes as
		// REQUEST_URI there.
		"Cloudfront-Forwarded-Proto", "X-Arr-Ssl", "Fastly-Ssl", "X-Scheme", "X-Proto", "X-Ssl",
		"X-Original-Host", "X-Host", "X-Forwarded-Prefix", "X-Original-Url", "X-Rewrite-Url", "X-Forwarded-Uri", "X-Original-Uri",
	} {
		m[strings.ToLower(h)] = true
	}
	return m
}()

// clientClaims are the proxy claims that name the client's address: a
// kept answer is not keyed by them (an answer that depends on the
// client's address is not one to keep; docs/rest-cache.md).
var clientClaims = map[string]bool{
	"x-forwarded-for": true, "forwarded-for": true, "x-original-forwarded-for": true, "x-real-ip": true,
	"client-ip": true, "x-client-ip": true, "true-client-ip": true, "x-cluster-client-ip": true,
	"cf-connecting-ip": true, "fastly-client-ip": true, "x-appengine-user-ip": true,
}

// forwardedKey is what the pass-through forwards of r to PHP, besides its
// method, Host and target, that PHP may read to build its answer: the
// scheme (X-Forwarded-Proto as SetXForwarded sets it) and, from a
// trusted proxy only, its claims (X-Forwarded-Proto, -Host, -Ssl, -Port,
// Forwarded's proto and host, …) but for the client's address. From any
// other peer the claims are dropped before PHP sees them, so a client
// cannot make its own answer be given to others.
func forwardedKey(trusted []netip.Prefix) func(*http.Request) string {
	return func(r *http.Request) string {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		if !isTrusted(trusted, r.RemoteAddr) {
			return scheme
		}
		var claims []string
		for name, vs := range r.Header {
			lower := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
			if !proxyClaims[lower] || clientClaims[lower] {
				continue
			}
			if lower == "forwarded" {
				vs = forwardedProtoHost(vs)
			}
			claims = append(claims, name+": "+strings.Join(vs, "\x00"))
		}
		slices.Sort(claims)
		return scheme + "\x00" + strings.Join(claims, "\x00")
	}
}

// forwardedProtoHost are the proto= and host= parameters of Forwarded
// fields (RFC 7239), in order: what of it PHP may build links from
// (for= and by= name addresses).
func forwardedProtoHost(fields []string) []string {
	var out []string
	for _, f := range fields {
		for _, elem := range strings.Split(f, ",") {
			for _, pair := range strings.Split(elem, ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(pair), "=")
				if k = strings.ToLower(k); k == "proto" || k == "host" {
					out = append(out, k+"="+v)
				}
			}
		}
	}
	return out
}

func dropProxyClaims(h http.Header) {
	for name := range h {
		if proxyClaims[strings.ToLower(strings.ReplaceAll(name, "_", "-"))] {
			delete(h, name)
		}
	}
}

func (i *reqInfo) clientBody() *clientBody {
	if i == nil {
		return nil
	}
	return i.body
}

// clientBody remembers why reading a client's request body failed, so that
// a body the client broke is answered as the client's fault, not PHP's.
type clientBody struct {
	io.ReadCloser
	err error
}

func (b *clientBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

func copyHeader(dst, src http.Header, name string) {
	if v, ok := src[name]; ok {
		dst[name] = append([]string(nil), v...)
	}
}

func isTrusted(nets []netip.Prefix, remoteAddr string) bool {
	if len(nets) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	for _, p := range nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// timedTransport records in info (when not nil) how long the upstream
// took to send its headers.
type timedTransport struct {
	rt   http.RoundTripper
	info *reqInfo
}

func (t timedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.rt.RoundTrip(r)
	if t.info != nil {
		t.info.upstream = time.Since(start)
	}
	return resp, err
}

// upstreamError answers for PHP when it cannot: 504 when it was too slow,
// 502 when it could not be reached or broke off. A client that went away is
// logged, not counted as an upstream failure, and gets no answer. info,
// when not nil, is the request's record.
func upstreamError(l zerolog.Logger, m *Metrics, info *reqInfo) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
			if info != nil {
				info.status, info.clientGone = statusClientClosed, true
			}
			m.upstreamError("client_gone")
			zerolog.Ctx(r.Context()).Info().Err(err).Msg("client went away before PHP answered")
			return
		}
		if b := info.clientBody(); b != nil && b.err != nil {
			// The client's body broke (bad chunking, too slow, cut off):
			// nothing is wrong with PHP.
			status, msg := http.StatusBadRequest, "400 Bad Request: the request body could not be read.\n"
			var ne net.Error
			if errors.As(b.err, &ne) && ne.Timeout() {
				status, msg = http.StatusRequestTimeout, "408 Request Timeout: the request body did not arrive in time.\n"
			}
			zerolog.Ctx(r.Context()).Info().Err(b.err).Int("status", status).Msg("client sent a request body that could not be read")
			w.Header().Set("Connection", "close")
			writePlain(w, status, msg)
			return
		}
		status, kind, msg := http.StatusBadGateway, "unreachable", "502 Bad Gateway: the WordPress upstream could not be reached.\n"
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
			var op *net.OpError
			if !(errors.As(err, &op) && op.Op == "dial") {
				status, kind, msg = http.StatusGatewayTimeout, "timeout", "504 Gateway Timeout: the WordPress upstream did not answer in time.\n"
			}
		}
		m.upstreamError(kind)
		zerolog.Ctx(r.Context()).Error().Err(err).Int("status", status).Msg("upstream request failed")
		writePlain(w, status, msg)
	}
}

// writePlain answers for PHP when the pass-through fails (502, 504, 508,
// and 400 or 408 for a client body that broke). These are not wpjson's
// answers, on purpose: the request was not the sidecar's but WordPress's
// (a page, an upload, wp-admin), whose client expects what a web server or
// proxy in front of PHP says when PHP fails, plain text, not a REST error
// of a route it never asked for.
func writePlain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, msg)
}

// bufferPool lends the 32 KiB copy buffers ReverseProxy uses for bodies.
type bufferPool struct{ pool sync.Pool }

func newBufferPool() *bufferPool {
	return &bufferPool{pool: sync.Pool{New: func() any { b := make([]byte, copyBufferSize); return &b }}}
}

func (p *bufferPool) Get() []byte  { return *(p.pool.Get().(*[]byte)) }
func (p *bufferPool) Put(b []byte) { p.pool.Put(&b) }

// StdLogger is a standard library logger that writes to l, for
// http.Server.ErrorLog and the like.
func StdLogger(l zerolog.Logger) *log.Logger { return log.New(zerologWriter{l}, "", 0) }

// zerologWriter turns the standard library's log lines into log events.
type zerologWriter struct{ l zerolog.Logger }

func (z zerologWriter) Write(p []byte) (int, error) {
	n := len(p)
	if n > 0 && p[n-1] == '\n' {
		p = p[:n-1]
	}
	z.l.Warn().Msg(string(p))
	return n, nil
}

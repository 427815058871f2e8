package proxy

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
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

// newPassthrough builds the reverse proxy that carries every request the
// sidecar does not answer to PHP unchanged: Host, raw path and raw query are
// kept; X-Forwarded-* are added, and believed from trusted proxies only.
func newPassthrough(o upstreamOptions) http.Handler {
	dialer := &net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		Proxy:                 nil, // never an environment proxy
		DialContext:           dialer.DialContext,
		MaxIdleConns:          o.MaxIdlePerHost,
		MaxIdleConnsPerHost:   o.MaxIdlePerHost,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: o.HeaderTimeout,
		ExpectContinueTimeout: time.Second,
		// Bodies pass as they are; the transport must not add gzip of its
		// own and decompress behind the client's back.
		DisableCompression: true,
		WriteBufferSize:    32 << 10,
		ReadBufferSize:     32 << 10,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			in, out := pr.In, pr.Out
			trusted := isTrusted(o.Trusted, in.RemoteAddr)
			if trusted {
				// Rewrite removed these; a trusted proxy's chain goes on.
				copyHeader(out.Header, in.Header, "X-Forwarded-For")
			}
			pr.SetURL(o.URL)
			pr.SetXForwarded()
			if trusted {
				copyHeader(out.Header, in.Header, "X-Forwarded-Proto")
				copyHeader(out.Header, in.Header, "X-Forwarded-Host")
				copyHeader(out.Header, in.Header, "Forwarded")
			}
			out.Host = in.Host
			// ReverseProxy drops query parameters Go cannot parse (those
			// with ';'); PHP reads them, so the raw query goes as it came.
			out.URL.RawQuery = in.URL.RawQuery
		},
		Transport:    timedTransport{transport},
		BufferPool:   newBufferPool(),
		ErrorLog:     StdLogger(o.Log),
		ErrorHandler: upstreamError(o.Log, o.Metrics),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info := infoFrom(r.Context()); info != nil {
			info.servedBy = servedByPHP
			info.route = routePHP
		}
		rp.ServeHTTP(w, r)
	})
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

// timedTransport records how long the upstream took to send its headers.
type timedTransport struct{ rt http.RoundTripper }

func (t timedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.rt.RoundTrip(r)
	if info := infoFrom(r.Context()); info != nil {
		info.upstream = time.Since(start)
	}
	return resp, err
}

// upstreamError answers for PHP when it cannot: 504 when it was too slow,
// 502 when it could not be reached or broke off. A client that went away is
// logged, not counted as an upstream failure, and gets no answer.
func upstreamError(l zerolog.Logger, m *Metrics) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		info := infoFrom(r.Context())
		if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
			if info != nil {
				info.status, info.clientGone = statusClientClosed, true
			}
			m.upstreamError("client_gone")
			zerolog.Ctx(r.Context()).Info().Err(err).Msg("client went away before PHP answered")
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
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		w.Write([]byte(msg))
	}
}

// bufferPool lends the 32 KiB copy buffers ReverseProxy uses for bodies.
type bufferPool struct{ pool sync.Pool }

func newBufferPool() *bufferPool {
	return &bufferPool{pool: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}
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

package proxy

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// Labels of served_by and of the route of pass-through requests.
const (
	servedBySidecar = "sidecar"
	servedByPHP     = "php"
	routePHP        = "php"
	routeRESTCache  = "rest-cache" // PHP's answer, kept and given again
	routeNone       = "none"
	// statusClientClosed is logged when the client left before an answer
	// (nginx's 499); nothing is sent.
	statusClientClosed = 499
)

// Access-log field keys.
const (
	logRequestID = "request_id"
	logMethod    = "method"
	logPath      = "path"
	logStatus    = "status"
	logBytes     = "bytes"
	logDuration  = "duration_ms"
	logServedBy  = "served_by"
	logUpstream  = "upstream_ms"
	logRoute     = "route"
	logRemote    = "remote_ip" // the client, as the sidecar believes it (realip)
	logPeer      = "peer_ip"   // the connection's own address, when it differs
	logRESTCache = "rest_cache"
)

// reqInfo is what the layers below the access log learn about a request.
type reqInfo struct {
	servedBy   string
	route      string
	upstream   time.Duration
	status     int
	bytes      int64
	clientGone bool
	// restCache is how --cache-rest answered (hit, miss, bypass); "":
	// not a request it saw.
	restCache string
	// body is the pass-through's view of the client's request body.
	body *clientBody
}

// infoOf is the record of the request w answers: observe's statusWriter
// is the first writer of every answer, and every writer after it unwraps
// (as http.ResponseController needs, to reach the connection), so the
// record is found by unwrapping w. nil when w is not observe's (a handler
// tested alone).
func infoOf(w http.ResponseWriter) *reqInfo {
	for {
		switch v := w.(type) {
		case *statusWriter:
			return v.info
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return nil
		}
	}
}

// requestIDs makes ids unique within the process and, by a random prefix,
// across restarts and replicas.
type requestIDs struct {
	prefix string
	n      atomic.Uint64
}

func newRequestIDs() *requestIDs {
	b := make([]byte, 6)
	rand.Read(b)
	return &requestIDs{prefix: hex.EncodeToString(b)}
}

func (g *requestIDs) next() string {
	return g.prefix + "-" + strconv.FormatUint(g.n.Add(1), 36)
}

// observe is the outermost layer: request id, body deadline, panic
// recovery, access log and metrics.
func (h *Handler) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 128 || !isTrusted(h.opts.TrustedProxies, r.RemoteAddr) {
			id = h.ids.next()
			r.Header.Set("X-Request-Id", id)
		}
		w.Header().Set("X-Request-Id", id)
		info := &reqInfo{servedBy: servedBySidecar, route: routeNone}
		l := h.log.With().Str(logRequestID, id).Logger()
		// The request's first scope level: what every answer from memory
		// within it shares (wpsidecar.Scope.Settled).
		ctx, _ := wpsidecar.WithScope(l.WithContext(r.Context()))
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w, info: info}

		// A slow client may not hold a connection forever sending a body.
		// An upgrade the server grants (a WebSocket handshake) has no body,
		// so none is exempt: an Upgrade header on a request with a body
		// buys no time.
		if r.ContentLength != 0 && h.opts.BodyTimeout > 0 {
			http.NewResponseController(w).SetReadDeadline(start.Add(h.opts.BodyTimeout))
		}

		defer func() {
			p := recover()
			if p != nil && p != http.ErrAbortHandler {
				l.Error().Str("panic", fmt.Sprint(p)).Bytes("stack", debug.Stack()).Msg("handler panicked")
				if info.status == 0 {
					// What the handler set was for an answer it never
					// sent (its ETag, Cache-Control, cache tags): the 500
					// carries none of it, only the request's id.
					h := sw.Header()
					clear(h)
					h.Set("X-Request-Id", id)
					wpjson.Render(sw, r, wpjson.ErrInternal)
				}
				p = nil
			}
			if p == http.ErrAbortHandler {
				info.clientGone = true
			}
			h.finish(l, r, info, start)
			if p != nil {
				// The response is broken off; net/http closes the connection
				// without logging.
				panic(p)
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

func (h *Handler) finish(l zerolog.Logger, r *http.Request, info *reqInfo, start time.Time) {
	d := time.Since(start)
	switch {
	case info.status != 0:
	case r.Context().Err() != nil:
		// Nothing written to a client gone (wpjson.Render writes nothing
		// then): logged as a pass-through's is, not as an empty 200.
		info.status, info.clientGone = statusClientClosed, true
	default:
		info.status = http.StatusOK
	}
	h.metrics.observe(info.route, info.status, info.servedBy, d)
	if h.opts.AccessLog != nil && !h.opts.AccessLog(info.status) {
		return
	}
	ev := l.Info()
	if info.status >= 500 {
		ev = l.Warn()
	}
	if !ev.Enabled() {
		return
	}
	client := h.clientIP(r)
	ev = ev.Str(logMethod, r.Method).
		Str(logPath, r.URL.EscapedPath()).
		Int(logStatus, info.status).
		Int64(logBytes, info.bytes).
		Float64(logDuration, float64(d.Microseconds())/1000).
		Str(logServedBy, info.servedBy).
		Str(logRoute, info.route).
		Str(logRemote, client)
	if peer := remoteIP(r.RemoteAddr); peer != client {
		ev = ev.Str(logPeer, peer)
	}
	if info.upstream > 0 {
		ev = ev.Float64(logUpstream, float64(info.upstream.Microseconds())/1000)
	}
	if info.clientGone {
		ev = ev.Bool("client_gone", true)
	}
	if info.restCache != "" {
		ev = ev.Str(logRESTCache, info.restCache)
	}
	ev.Msg("request")
}

func remoteIP(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// statusWriter records the status and size of a response. It unwraps for
// http.ResponseController, so flushing, deadlines and hijacking reach the
// connection. It is the first writer of every answer and the only one of
// a pass-through's (streams, SSE, WebSocket upgrades); the chain of the
// sidecar's own answers goes on in rest/writers.go, which lists it whole.
type statusWriter struct {
	http.ResponseWriter
	info *reqInfo
}

func (s *statusWriter) WriteHeader(code int) {
	if s.info.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		s.info.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.info.status == 0 {
		s.info.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.info.bytes += int64(n)
	return n, err
}

func (s *statusWriter) Flush() {
	http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err == nil && s.info.status == 0 {
		s.info.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

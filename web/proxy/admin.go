package proxy

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"time"

	"github.com/wpsidecar/wpsidecar/web/rest"
)

// Pinger checks that the database answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// defaultCheckTimeout bounds each /readyz check: well under the probe
// periods of orchestrators (Compose's and Kubernetes' default to 5-10 s).
const defaultCheckTimeout = 2 * time.Second

// AdminOptions configures the admin listener's handler.
type AdminOptions struct {
	DB Pinger
	// Settings, when set, must have been read for /readyz to pass: the
	// sidecar's own routes answer 503 until then.
	Settings rest.Settings
	Upstream *url.URL
	Metrics  *Metrics
	// CheckTimeout bounds each readiness check.
	CheckTimeout time.Duration
	// Pprof serves /debug/pprof/: profiles show memory and code paths, so
	// they are served only when asked for.
	Pprof bool
	// Status, when set, adds facts to /readyz's answer (the change feed's
	// mode) without deciding readiness.
	Status func() map[string]string
	// Stopping, when set and true, fails /readyz at once: the instance is
	// shutting down (its lame-duck phase) and balancers should send
	// elsewhere.
	Stopping func() bool
	// OpenAPI, when set, is the running configuration's description,
	// served at /openapi.json.
	OpenAPI func() []byte
}

// NewAdmin serves /healthz (the process is alive), /readyz (the database
// answers and the site settings are read, and the upstream answers),
// /metrics and, with Pprof, /debug/pprof/. It belongs on a private address.
func NewAdmin(o AdminOptions) http.Handler {
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = defaultCheckTimeout
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeCheck(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if o.Stopping != nil && o.Stopping() {
			writeCheck(w, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), o.CheckTimeout)
		defer cancel()
		res := map[string]string{"database": "ok", "upstream": "ok"}
		if o.Status != nil {
			for k, v := range o.Status() {
				res[k] = v
			}
		}
		status := http.StatusOK
		if err := o.DB.Ping(ctx); err != nil {
			res["database"], status = err.Error(), http.StatusServiceUnavailable
		} else if o.Settings != nil {
			if _, err := o.Settings.REST(); err != nil {
				res["database"], status = err.Error(), http.StatusServiceUnavailable
			}
		}
		if err := dialUpstream(ctx, o.Upstream); err != nil {
			res["upstream"], status = err.Error(), http.StatusServiceUnavailable
		}
		writeCheck(w, status, res)
	})
	if o.Metrics != nil {
		mux.Handle("GET /metrics", o.Metrics.Handler())
	}
	if o.OpenAPI != nil {
		mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			w.Write(o.OpenAPI())
		})
	}
	if o.Pprof {
		// Profiles, for finding where time goes under load.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// dialUpstream opens and closes a TCP connection to the upstream: enough to
// know PHP's web server is there without making PHP do work.
func dialUpstream(ctx context.Context, u *url.URL) error {
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return err
	}
	return c.Close()
}

func writeCheck(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

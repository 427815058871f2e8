package auth

import "github.com/prometheus/client_golang/prometheus"

// Metrics count failed Basic authentications and the attempts the
// throttle refused.
func Metrics() (func(event, scope string), []prometheus.Collector) {
	failures := prometheus.NewCounter(prometheus.CounterOpts{Name: "wpsidecar_auth_failures_total",
		Help: "Failed Basic authentications (wrong password, unknown login or e-mail)."})
	throttled := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wpsidecar_auth_throttled_total",
		Help: "Authentication attempts answered 429 without a check, by the limit that refused them (ip, account)."}, []string{"scope"})
	observe := func(event, scope string) {
		if event == "throttled" {
			throttled.WithLabelValues(scope).Inc()
		} else {
			failures.Inc()
		}
	}
	return observe, []prometheus.Collector{failures, throttled}
}

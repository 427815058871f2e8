package store

import "github.com/prometheus/client_golang/prometheus"

// Metric is wpsidecar_leader: 1 while this instance leads.
func (l *Leadership) Metric() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wpsidecar_leader",
		Help: "1 while this instance leads (sends webhooks and purges), 0 while another does."}, func() float64 {
		if l.Leading() {
			return 1
		}
		return 0
	})
}

// ReplicaMetrics: wpsidecar_db_wait_refused_total counts the requests
// refused a connection (ErrBusy); wpsidecar_db_replica_lag_seconds{replica} is each
// replica's measured lag (-1: not known), wpsidecar_db_replica_reads{replica}
// 1 while GETs may read it.
func (db *DB) ReplicaMetrics() []prometheus.Collector {
	out := []prometheus.Collector{prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wpsidecar_read_after_refused_total",
		Help: "User lookups of requests not yet proven whose GTID to read after (X-WPSidecar-GTID) was not waited for."},
		func() float64 { return float64(db.readAfterRefused.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wpsidecar_db_wait_refused_total",
			Help: "Requests answered 503 because no database connection came within db-max-wait."},
			func() float64 { return float64(db.waitRefused.Load()) })}
	for i, r := range db.Replicas() {
		labels := prometheus.Labels{"replica": r.Addr}
		out = append(out,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wpsidecar_db_replica_lag_seconds", ConstLabels: labels,
				Help: "How far the replica is behind the primary, by GTID position; -1 while not known."}, func() float64 {
				if lag := db.Replicas()[i].Lag; lag >= 0 {
					return lag.Seconds()
				}
				return -1
			}),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wpsidecar_db_replica_reads", ConstLabels: labels,
				Help: "1 while GETs may read the replica (reachable, lag within max-replica-lag)."}, func() float64 {
				if db.Replicas()[i].Healthy {
					return 1
				}
				return 0
			}))
	}
	return out
}

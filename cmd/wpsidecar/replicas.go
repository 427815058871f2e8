package main

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/proxy"
	"github.com/wpsidecar/wpsidecar/store"
)

// leaderKeep is how long an instance that does not lead keeps the changes
// it noticed, to send them should it come to lead: longer than a
// fail-over takes (the leader's connection gone: at once; the leader gone
// from the network: about 5 s, when the server times its session out).
const leaderKeep = 10 * time.Second

// leaderMetric is wpsidecar_leader: 1 while this instance leads.
func leaderMetric(l *store.Leadership) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wpsidecar_leader",
		Help: "1 while this instance leads (sends webhooks and purges), 0 while another does."}, func() float64 {
		if l.Leading() {
			return 1
		}
		return 0
	})
}

// replicaMetrics: wpsidecar_db_replica_lag_seconds{replica} is each
// replica's measured lag (-1: not known), wpsidecar_db_replica_reads{replica}
// 1 while GETs may read it.
func replicaMetrics(db *store.DB) []prometheus.Collector {
	var out []prometheus.Collector
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

// consistency is read-your-writes across instances, with read replicas.
func consistency(db *store.DB, cfg *config.Config) proxy.Consistency {
	if len(cfg.DB.Replicas) == 0 {
		return nil
	}
	return db
}

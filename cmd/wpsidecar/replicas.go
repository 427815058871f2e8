package main

import (
	"time"

	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/rest"
)

// leaderKeep is how long an instance that does not lead keeps the changes
// it noticed, to send them should it come to lead: longer than a
// fail-over takes (the leader's connection gone: at once; the leader gone
// from the network: about 5 s, when the server times its session out).
const leaderKeep = 10 * time.Second

// consistency is read-your-writes across instances, with read replicas.
func consistency(db *store.DB, cfg *config.Config) rest.Consistency {
	if len(cfg.DB.Replicas) == 0 {
		return nil
	}
	return db
}

package main

import (
	"testing"

	"github.com/wpsidecar/wpsidecar/config"
)

// TestAccessLogged: --access-log's choices: all (no filter), none, server
// errors only, a share of every kind of answer alike.
func TestAccessLogged(t *testing.T) {
	if accessLogged(1) != nil {
		t.Error("all: a filter")
	}
	off, errs, sample := accessLogged(config.AccessLogOff), accessLogged(config.AccessLogErrors), accessLogged(0.1)
	if off(500) || off(200) || !errs(500) || !errs(503) || errs(499) || errs(200) {
		t.Error("off or errors pick wrong answers")
	}
	for _, status := range []int{200, 503} {
		n := 0
		for range 1000 {
			if sample(status) {
				n++
			}
		}
		if n < 50 || n > 160 { // 100 expected; more than five standard deviations away
			t.Errorf("a 0.1 sample kept %d of 1000 answers %d", n, status)
		}
	}
}

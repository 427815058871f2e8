// Package limits sets the process's CPU and memory limits as the sidecar
// runs best beside PHP, unless the Go runtime's own variables say
// otherwise.
package limits

import (
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
)

// SetMaxProcs sets GOMAXPROCS unless the GOMAXPROCS variable did. By
// default the sidecar takes half of what Go would (Go already honours a
// container's CPU quota), at least one: it shares its host with PHP, which
// needs the CPU more, and on small hosts one P also costs fewer thread
// wake-ups per proxied request than two (docs/performance.md).
func SetMaxProcs(n int, environ []string) int {
	for _, kv := range environ {
		if strings.HasPrefix(kv, "GOMAXPROCS=") && kv != "GOMAXPROCS=" {
			return runtime.GOMAXPROCS(0)
		}
	}
	if n == 0 {
		runtime.SetDefaultGOMAXPROCS()
		n = max(1, (runtime.GOMAXPROCS(0)+1)/2)
	}
	runtime.GOMAXPROCS(n)
	return n
}

// defaultGCPercent trades a little memory (the sidecar's heap is a few
// MiB) for less garbage collection per request: +30% requests/s on the
// field-group routes in the benchmark (docs/performance.md).
const defaultGCPercent = 400

// defaultMemoryLimit is the soft limit on the Go runtime's memory unless
// GOMEMLIMIT says otherwise: under a flood of connections the collector
// works harder near it instead of letting GOGC's headroom grow the heap
// fivefold (docs/performance.md, "Under overload").
const defaultMemoryLimit = 256 << 20

// SetGCPercent applies defaultGCPercent unless the GOGC variable is set,
// and defaultMemoryLimit unless GOMEMLIMIT is.
func SetGCPercent(environ []string) int {
	if !slices.ContainsFunc(environ, func(kv string) bool { return strings.HasPrefix(kv, "GOMEMLIMIT=") }) {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	for _, kv := range environ {
		if strings.HasPrefix(kv, "GOGC=") {
			old := debug.SetGCPercent(100)
			debug.SetGCPercent(old)
			return old
		}
	}
	debug.SetGCPercent(defaultGCPercent)
	return defaultGCPercent
}

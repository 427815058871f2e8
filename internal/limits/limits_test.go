package limits

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestSetMaxProcs(t *testing.T) {
	defer runtime.SetDefaultGOMAXPROCS()
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	if got := SetMaxProcs(3, nil); got != 3 || runtime.GOMAXPROCS(0) != 3 {
		t.Errorf("--max-procs 3: %d, GOMAXPROCS %d", got, runtime.GOMAXPROCS(0))
	}
	want := max(1, (def+1)/2)
	if got := SetMaxProcs(0, nil); got != want || runtime.GOMAXPROCS(0) != want {
		t.Errorf("default: %d, want half of %d = %d", got, def, want)
	}
	runtime.GOMAXPROCS(2)
	if got := SetMaxProcs(0, []string{"GOMAXPROCS=2"}); got != 2 {
		t.Errorf("with GOMAXPROCS set: %d, want it left alone", got)
	}
}

// The soft memory limit is 256 MiB unless GOMEMLIMIT says otherwise; the
// collector's percentage 400 unless GOGC does.
func TestSetGCPercent(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	debug.SetMemoryLimit(1 << 40)
	if got := SetGCPercent(nil); got != 400 || debug.SetMemoryLimit(-1) != 256<<20 {
		t.Errorf("defaults: GOGC %d, memory limit %d", got, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(1 << 40)
	debug.SetGCPercent(150)
	if got := SetGCPercent([]string{"GOMEMLIMIT=1TiB", "GOGC=150"}); got != 150 || debug.SetMemoryLimit(-1) != 1<<40 {
		t.Errorf("with GOGC and GOMEMLIMIT set: GOGC %d, memory limit %d", got, debug.SetMemoryLimit(-1))
	}
}

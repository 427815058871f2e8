package logging

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/internal/harness/testlog"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
)

// TestCollapser: a storm of one error (request ids differing) is its first
// line and then one line with the count per interval; another error, a
// warning, info lines and access lines (even of 5xx answers) pass as
// they are.
func TestCollapser(t *testing.T) {
	var out testlog.Buffer
	c := NewCollapser(&out, time.Hour) // the interval ends at Close
	log := zerolog.New(c).With().Timestamp().Logger()
	for i := range 1000 {
		l := log.With().Str("request_id", fmt.Sprint(i)).Logger()
		l.Error().Str("error", "dial tcp 127.0.0.1:9: connection refused").Int("status", 502).Msg("upstream request failed")
		l.Warn().Int("status", 502).Str("path", "/").Msg("request")
		if i%500 == 0 {
			l.Error().Str("error", "other").Msg("upstream request failed")
			l.Info().Msg("settings read")
		}
	}
	log.Warn().Msg("once")
	c.Close()
	var storm, other, access, info, once, summary int
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		switch {
		case m["repeated"] != nil:
			summary++
			if m["repeated"] != 999.0 && m["repeated"] != 1.0 || m["message"] != "upstream request failed" || m["level"] != "error" || m["interval_s"] != 3600.0 {
				t.Errorf("summary %s", line)
			}
		case m["message"] == "request":
			access++
		case m["error"] == "other":
			other++
		case m["message"] == "upstream request failed":
			storm++
		case m["message"] == "settings read":
			info++
		case m["message"] == "once":
			once++
		}
	}
	if storm != 1 || other != 1 || summary != 2 || access != 1000 || info != 2 || once != 1 {
		t.Errorf("storm %d, other %d, summaries %d, access %d, info %d, once %d:\n%s", storm, other, summary, access, info, once, strings.Join(lines[:5], "\n"))
	}
}

func TestLogBuffer_FlushesOnTimeAndClose(t *testing.T) {
	out := &testlog.Buffer{}
	b := NewBuffer(out, time.Hour)
	b.Write([]byte("one\n"))
	if out.String() != "" {
		t.Error("written at once, not batched")
	}
	b.Close()
	if out.String() != "one\n" {
		t.Errorf("not flushed on Close: %q", out.String())
	}

	out = &testlog.Buffer{}
	b = NewBuffer(out, 20*time.Millisecond)
	defer b.Close()
	b.Write([]byte("two\n"))
	testwait.For(t, "the ticker's flush", func() bool { return out.String() == "two\n" })
}

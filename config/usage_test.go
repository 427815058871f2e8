package config

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// TestUsage_FlagsAreVariables holds --help to what it says: every flag it
// lists but --check-config names its variable under it, and the loader
// takes that variable; WPSIDECAR_CHECK_CONFIG is no setting.
func TestUsage_FlagsAreVariables(t *testing.T) {
	var b bytes.Buffer
	Usage(&b)
	entry := regexp.MustCompile(`(?m)^  --([a-z0-9-]+)(?: VALUE)?\n    \t.*\n(?:    \t\((WPSIDECAR_[A-Z0-9_]+)[;)])?`)
	entries := entry.FindAllStringSubmatch(b.String(), -1)
	if len(entries) != len(settings)+1 {
		t.Fatalf("--help lists %d flags, want the %d settings and --check-config", len(entries), len(settings))
	}
	for _, e := range entries {
		name, variable := e[1], e[2]
		if name == "check-config" {
			if variable != "" {
				t.Errorf("--check-config names a variable %s", variable)
			}
			continue
		}
		if variable != EnvName(name) {
			t.Errorf("--%s names the variable %q, want %s", name, variable, EnvName(name))
			continue
		}
		_, err := load(t, nil, variable+"=x")
		var ce *Error
		if errors.As(err, &ce) && strings.Contains(strings.Join(ce.Problems, "\n"), variable+": unknown setting") {
			t.Errorf("%s, named by --help, is refused as unknown", variable)
		}
	}
	_, err := load(t, nil, "WPSIDECAR_CHECK_CONFIG=1")
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(strings.Join(ce.Problems, "\n"), "WPSIDECAR_CHECK_CONFIG: unknown setting") {
		t.Errorf("WPSIDECAR_CHECK_CONFIG: %v, want an unknown setting", err)
	}
	if !strings.Contains(b.String(), "Every flag but --check-config is also a variable WPSIDECAR_NAME") {
		t.Error("--help does not say which flags are variables")
	}
}

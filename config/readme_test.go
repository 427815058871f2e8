package config

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md's settings reference from the code")

// markdownTable renders the settings as docs/configuration.md's reference table.
func markdownTable() string {
	var b strings.Builder
	b.WriteString("| flag | variable | also read from | default | meaning |\n|---|---|---|---|---|\n")
	for _, s := range settings {
		var from []string
		for _, f := range s.alsoFrom() {
			if c, ok := strings.CutPrefix(f, "wp-config.php "); ok {
				from = append(from, "wp-config.php `"+c+"`")
			} else {
				from = append(from, "`"+f+"`")
			}
		}
		def := s.def
		if def != "" {
			def = "`" + def + "`"
		}
		b.WriteString("| `--" + s.name + "` | `" + EnvName(s.name) + "` | " + strings.Join(from, ", ") + " | " + def + " | " + s.usage + " |\n")
	}
	return b.String()
}

// TestConfigurationReference keeps docs/configuration.md's table and the code in step.
func TestConfigurationReference(t *testing.T) {
	b, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "<!-- config-table:start -->\n", "<!-- config-table:end -->"
	doc := string(b)
	i, j := strings.Index(doc, start), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/configuration.md lacks the %q … %q markers", start, end)
	}
	if got, want := doc[i+len(start):j], markdownTable(); got != want {
		if *update {
			if err := os.WriteFile("../docs/configuration.md", []byte(doc[:i+len(start)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/configuration.md's settings reference is out of date (go test ./config -run ConfigurationReference -update); it should be:\n%s", want)
	}
}

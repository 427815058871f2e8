package openapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/web/fieldmgr"
	"github.com/wpsidecar/wpsidecar/web/historyapi"
	"github.com/wpsidecar/wpsidecar/web/module"
	. "github.com/wpsidecar/wpsidecar/web/openapi"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

var update = flag.Bool("update", false, "rewrite docs/openapi.json from the code")

// api are the namespaces as the sidecar describes them (cmd/wpsidecar:
// their modules, then the history) under a theme options configuration
// (nil: none). An external test: the modules import this package.
func api(opts *themeoption.Config) []NamespaceDoc {
	mods := []module.Module{fieldmgr.Module("", ""), themeopts.Module(themeopts.Fixed{Config: opts})}
	return append(module.API(mods), NamespaceDoc{Name: "wpsidecar/v1", Routes: historyapi.Routes(module.Units(mods))})
}

// TestDocument_UpToDate: docs/openapi.json is what the code generates.
func TestDocument_UpToDate(t *testing.T) {
	want := Document(api(nil), Configured{})
	if *update {
		if err := os.WriteFile("../../docs/openapi.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("../../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("docs/openapi.json is not what the code generates: go test ./openapi -run UpToDate -update")
	}
	if !bytes.Equal(Document(api(nil), Configured{}), want) {
		t.Error("two generations differ")
	}
}

// site is the description of the test site: its theme options and public
// routes.
func site(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/themeopts.json")
	if err != nil {
		t.Fatal(err)
	}
	opts, err := themeoption.ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile("testdata/public-routes.json")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := publicroute.ParseConfig(b, fieldgroup.PublicSource(), themeoption.PublicSource())
	if err != nil {
		t.Fatal(err)
	}
	return Document(api(opts), Configured{Public: routes})
}

// TestDocument_Site: a site's description has each option's exact value
// schema and each public route's answer.
func TestDocument_Site(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct{ Schemas map[string]json.RawMessage }
	}
	if err := json.Unmarshal(site(t), &doc); err != nil {
		t.Fatal(err)
	}
	var options struct {
		Properties map[string]map[string]any
	}
	json.Unmarshal(doc.Components.Schemas["ThemeOptions"], &options)
	for id, want := range map[string]string{
		"accent_color":  `{"pattern":"^(#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8}))?$","title":"Accent color","type":"string"}`,
		"layout":        `{"enum":["boxed","wide"],"title":"Layout","type":"string"}`,
		"sticky_header": `{"title":"Sticky header","type":"boolean"}`,
	} {
		got, _ := json.Marshal(options.Properties[id])
		if string(got) != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	raw, ok := doc.Paths["/wp-json/e2e/v1/public/brand"]["get"]
	var compact bytes.Buffer
	json.Compact(&compact, raw)
	brand := compact.String()
	if !ok || !strings.Contains(brand, `"required":["id","url"]`) || !strings.Contains(brand, `"security":[]`) {
		t.Errorf("public route: %s", brand)
	}
	for _, p := range []string{"/wp-json/fieldmgr/v1/field-groups", "/wp-json/fieldmgr/v1/field-groups/{id}", "/wp-json/fieldmgr/v1/field-groups/{id}/toggle",
		"/wp-json/fieldmgr/v1/field-schemas", "/wp-json/themeopts/v1/options", "/wp-json/themeopts/v1/options/reset",
		"/wp-json/themeopts/v1/options/reset-section", "/wp-json/themeopts/v1/config", "/wp-json/themeopts/v1/dev-panel"} {
		if _, ok := doc.Paths[p]; !ok {
			t.Errorf("no path %s", p)
		}
	}
}

// tools is the folder of the npm packages of tools/package.json, which
// make deps (scripts/install-deps.sh) installs into tools/node_modules:
// a test never reaches the npm registry itself. Missing, the test fails
// saying so, or skips under -short.
func tools(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs("tools")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "redocly")); err != nil {
		if testing.Short() {
			t.Skip("needs Redocly and openapi-typescript (make deps); skipped under -short")
		}
		t.Fatalf("Redocly and openapi-typescript are not installed: run make deps (scripts/install-deps.sh runs npm ci in web/openapi/tools): %v", err)
	}
	return dir
}

// TestDocument_OtherTools: Redocly's linter (recommended rules) finds no
// error in either description, and openapi-typescript makes types of both.
func TestDocument_OtherTools(t *testing.T) {
	dir := tools(t)
	siteDoc := filepath.Join(t.TempDir(), "site.json")
	os.WriteFile(siteDoc, site(t), 0o644)
	generic, _ := filepath.Abs("../../docs/openapi.json")
	for _, doc := range []string{generic, siteDoc} {
		lint := exec.Command(filepath.Join(dir, "node_modules", ".bin", "redocly"), "lint", "--extends=recommended", "--format=stylish", doc)
		lint.Dir = dir
		if out, err := lint.CombinedOutput(); err != nil || strings.Contains(string(out), "You have") {
			t.Errorf("redocly lint %s: %v\n%s", filepath.Base(doc), err, out)
		}
		ts := filepath.Join(t.TempDir(), "api.d.ts")
		gen := exec.Command(filepath.Join(dir, "node_modules", ".bin", "openapi-typescript"), doc, "-o", ts)
		gen.Dir = dir
		if out, err := gen.CombinedOutput(); err != nil {
			t.Errorf("openapi-typescript %s: %v\n%s", filepath.Base(doc), err, out)
			continue
		}
		b, _ := os.ReadFile(ts)
		if !strings.Contains(string(b), "export interface paths") || !strings.Contains(string(b), `"/wp-json/fieldmgr/v1/field-groups"`) {
			t.Errorf("openapi-typescript %s: %.300s", filepath.Base(doc), b)
		}
	}
}

// Package archtest keeps the house rules of the design card that code can
// check: how long functions get, what cmd holds, where request-scoped
// values are set, and which package may import which.
package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/wpsidecar/wpsidecar"

// sources are the project's non-test Go files, by path from the root.
func sources(t *testing.T) map[string]*ast.File {
	t.Helper()
	fset = token.NewFileSet()
	out := map[string]*ast.File{}
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", p)
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && rel != "." || rel == "deploy/kubernetes" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out[rel] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var fset *token.FileSet

func lines(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }

// TestFunctionLength: no function over 150 lines; in cmd, none over 120,
// and cmd/wpsidecar holds at most 1000 lines (it wires; the work is in the
// packages: it grows only with wiring, docs/development.md).
func TestFunctionLength(t *testing.T) {
	cmdLines := 0
	for path, f := range sources(t) {
		inCmd := strings.HasPrefix(path, "cmd/")
		if inCmd {
			cmdLines += fset.Position(f.End()).Line
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			limit := 150
			if inCmd {
				limit = 120
			}
			if n := lines(fn); n > limit {
				t.Errorf("%s: %s is %d lines (at most %d)", path, fn.Name.Name, n, limit)
			}
		}
	}
	if cmdLines > 1000 {
		t.Errorf("cmd holds %d lines (at most 1000)", cmdLines)
	}
}

// TestContextValues: request-scoped values are set in at most five
// places; anything else is passed as a value.
func TestContextValues(t *testing.T) {
	var sites []string
	for path, f := range sources(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "WithValue" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "context" {
					sites = append(sites, fset.Position(sel.Pos()).String()+" "+path)
				}
			}
			return true
		})
	}
	if len(sites) > 5 {
		t.Errorf("%d context.WithValue sites (at most 5):\n%s", len(sites), strings.Join(sites, "\n"))
	}
}

// TestImports: dependencies point one way (docs/development.md: Layout).
func TestImports(t *testing.T) {
	rules := []struct {
		pkg       string
		forbidden []string // import path prefixes, after the module
	}{
		{"wpjson", []string{""}},
		{"config", []string{""}},
		{"redact", []string{""}},
		{"cachetag", []string{""}},
		{"reload", []string{""}},
		{"store", []string{"proxy", "auth", "changes", "site", "config", "cmd"}},
		{"proxy", []string{"store", "auth", "changes", "site", "config", "cmd"}},
		{"proxy/themeopts", []string{"config", "site", "changes", "cmd", "reload"}},
		{"proxy/public", []string{"config", "site", "changes", "cmd", "reload"}},
		{"proxy/fieldmgr", []string{"config", "site", "changes", "cmd"}},
		{"proxy/history", []string{"config", "site", "changes", "cmd", "reload"}},
		{"exportdir", []string{"config", "site", "changes", "cmd"}},
		{"command", []string{"cmd"}},
		{"auth", []string{"proxy", "config", "changes", "site", "cmd"}},
		{"changes", []string{"proxy", "auth", "site", "cmd", "config"}},
		{"site", []string{"cmd", "config"}},
	}
	// A leaf may import a leaf of its own: config masks URLs with redact.
	allowed := map[string][]string{"config": {"redact"}}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps", module+"/"+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			rest, ok := strings.CutPrefix(dep, module+"/")
			if !ok || dep == module+"/"+r.pkg || slices.Contains(allowed[r.pkg], rest) {
				continue
			}
			for _, f := range r.forbidden {
				if f == "" || rest == f || strings.HasPrefix(rest, f+"/") {
					t.Errorf("%s imports %s", r.pkg, rest)
				}
			}
		}
	}
}

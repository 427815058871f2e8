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

// TestFunctionLength: no function over 150 lines; in the wiring
// (cmd/wpsidecar), none over 120, and it holds at most 1100 lines (it wires; the work is in the
// packages: it grows only with wiring, such as the namespaces' lists,
// docs/development.md).
func TestFunctionLength(t *testing.T) {
	cmdLines := 0
	for path, f := range sources(t) {
		inCmd := strings.HasPrefix(path, "cmd/wpsidecar/")
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
	if cmdLines > 1100 {
		t.Errorf("cmd/wpsidecar holds %d lines (at most 1100)", cmdLines)
	}
}

// TestContextValues: a request's context carries one value the sidecar
// sets, the request's wpsidecar.Scope (scope.go), where what a request
// learns as it goes is declared and documented: who it is, whether its
// answer may be kept, where it reads and writes on a replicated database.
// Side channels between packages that share only the request, each with
// its own key and an unwritten contract, were what the scope replaced
// (issue 47): a new one is a new part of the scope, not a new key. The
// other is within one package: the REST view of a request keeps the
// request as the client sent it, for what goes to PHP after the router
// (web/rest/route.go). The access log's record is found through the
// answer's writers (web/proxy), not the context.
func TestContextValues(t *testing.T) {
	const most = 2
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
	if len(sites) > most {
		t.Errorf("%d context.WithValue sites (at most %d: what a request learns is a part of wpsidecar.Scope, not a value of its own):\n%s", len(sites), most, strings.Join(sites, "\n"))
	}
}

// goList is what go list prints of the project's package pkg with flag,
// word by word.
func goList(t *testing.T, flag, pkg string) []string {
	t.Helper()
	path := module
	if pkg != "" {
		path += "/" + pkg
	}
	out, err := exec.Command("go", "list", flag, path).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

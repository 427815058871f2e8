package archtest

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// namespacePackages are the namespaces' own packages: their rules and
// their handlers (each providing its web/module.Module).
var namespacePackages = []string{"domain/fieldgroup", "domain/themeoption", "store/fieldgrouptable", "web/fieldmgr", "web/themeopts"}

// namespaceNames are the root package's constants of type Namespace
// (wpsidecar.FieldGroups, …): each names a namespace.
func namespaceNames(t *testing.T, files map[string]*ast.File) map[string]bool {
	names := map[string]bool{}
	for path, f := range files {
		if filepath.Dir(path) != "." {
			continue
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					if v, ok := spec.(*ast.ValueSpec); ok && isIdent(v.Type, "Namespace") {
						for _, n := range v.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("the root package declares no constant of type Namespace")
	}
	return names
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// TestNamespaceNamers: no package but cmd and the namespaces' own names
// a namespace: one of the root package's Namespace constants
// (namespaceNames), or an import of a namespace's package.
func TestNamespaceNamers(t *testing.T) {
	own := map[string]bool{"cmd/namespaces": true, "cmd/wpsidecar": true, ".": true}
	for _, p := range namespacePackages {
		own[p] = true
	}
	names := map[string]string{} // package: where it first names one
	files := sources(t)
	consts := namespaceNames(t, files)
	for path, f := range files {
		pkg := filepath.ToSlash(filepath.Dir(path))
		// The harness (tests' helpers, which TestLayout keeps out of
		// every package but tests) wires namespaces as cmd does.
		if own[pkg] || slices.ContainsFunc(harness, func(h string) bool { return strings.HasPrefix(pkg, h) }) {
			continue
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, ns := range namespacePackages {
				if p == module+"/"+ns {
					names[pkg] = path + " imports " + ns
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && consts[sel.Sel.Name] {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "wpsidecar" {
					names[pkg] = fset.Position(sel.Pos()).String() + " names wpsidecar." + sel.Sel.Name
				}
			}
			return true
		})
	}
	var pkgs []string
	for pkg := range names {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		t.Errorf("%s names a namespace (%s): only cmd's module list and the namespace's own packages may", pkg, names[pkg])
	}
}

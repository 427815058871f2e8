package archtest

import (
	"go/ast"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// namespacePackages are the namespaces' own packages: their rules and
// their handlers (each providing its web/module.Module).
var namespacePackages = []string{"domain/fieldgroup", "domain/themeopt", "store/grouptable", "web/fieldmgr", "web/themeopts"}

// TestNamespaceNamers: no package but cmd and the namespaces' own names
// a namespace: wpsidecar.FieldGroups or
// wpsidecar.ThemeOptions, or an import of a namespace's package.
func TestNamespaceNamers(t *testing.T) {
	own := map[string]bool{"cmd/wpsidecar": true, ".": true}
	for _, p := range namespacePackages {
		own[p] = true
	}
	names := map[string]string{} // package: where it first names one
	for path, f := range sources(t) {
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
			if sel, ok := n.(*ast.SelectorExpr); ok && (sel.Sel.Name == "FieldGroups" || sel.Sel.Name == "ThemeOptions") {
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

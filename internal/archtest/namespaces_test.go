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

// namespaceNamers are the packages besides cmd and the namespaces' own
// that still name a namespace (its constant, or import its rules or
// handlers), each with why: what is left of issue 47 to move behind the
// modules. A package not listed that names one fails; a listed one that
// no longer does fails too, so the list only shrinks.
var namespaceNamers = map[string]string{
	"domain/publicroute": "a public route shows field groups or theme option ids: the file's format",
}

// TestNamespaceNamers: no package but cmd, the namespaces' own and
// namespaceNamers names a namespace: wpsidecar.FieldGroups or
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
		if _, ok := namespaceNamers[pkg]; !ok {
			t.Errorf("%s names a namespace (%s): only cmd's module list and the namespace's own packages may", pkg, names[pkg])
		}
	}
	for pkg := range namespaceNamers {
		if _, ok := names[pkg]; !ok {
			t.Errorf("%s names no namespace any more: take it off namespaceNamers", pkg)
		}
	}
}

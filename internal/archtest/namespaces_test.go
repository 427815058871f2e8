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

// namespaceList is the package holding the one list of the namespaces.
const namespaceList = "cmd/namespaces"

// namespacePackages are the namespaces' own packages, derived, so that a
// new namespace needs no line here: their handler packages (those the
// list imports that provide a Module) and every package only they import
// (their rules, their SQL), found by ownPackages.
func namespacePackages(t *testing.T, files map[string]*ast.File) map[string]bool {
	imports := map[string]map[string]bool{} // package: the project packages it imports
	modules := map[string]bool{}            // packages that declare func Module
	for path, f := range files {
		pkg := filepath.ToSlash(filepath.Dir(path))
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); ours(p) {
				imports[pkg][rel(p)] = true
			}
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "Module" {
				modules[pkg] = true
			}
		}
	}
	var handlers []string
	for p := range imports[namespaceList] {
		if modules[p] {
			handlers = append(handlers, p)
		}
	}
	if len(handlers) == 0 {
		t.Fatalf("%s imports no package that provides a Module", namespaceList)
	}
	return ownPackages(imports, handlers, func(pkg string) bool {
		return strings.HasPrefix(pkg, "cmd/") || slices.ContainsFunc(harness, func(h string) bool { return strings.HasPrefix(pkg, h) })
	})
}

// ownPackages are the handlers and, repeatedly, each package one of them
// imports that no other package imports but those ignored (the wiring,
// the tests' harness).
func ownPackages(imports map[string]map[string]bool, handlers []string, ignored func(string) bool) map[string]bool {
	own := map[string]bool{}
	for _, h := range handlers {
		own[h] = true
	}
	for grew := true; grew; {
		grew = false
		for pkg := range own {
			for dep := range imports[pkg] {
				if own[dep] {
					continue
				}
				alone := true
				for importer, deps := range imports {
					if deps[dep] && !own[importer] && !ignored(importer) {
						alone = false
						break
					}
				}
				if alone {
					own[dep], grew = true, true
				}
			}
		}
	}
	return own
}

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
	files := sources(t)
	own := namespacePackages(t, files)
	own[namespaceList], own["cmd/wpsidecar"], own["."] = true, true, true
	names := map[string]string{} // package: where it first names one
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
			if ours(p) && own[rel(p)] {
				names[pkg] = path + " imports " + rel(p)
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
		t.Errorf("%s names a namespace (%s): only cmd's module list and the namespace's own packages may (its handler package, and those only its own packages import)", pkg, names[pkg])
	}
}

// TestOwnPackages: a namespace's packages are found from its handler
// package, a third one's too, and a package another imports is shared.
func TestOwnPackages(t *testing.T) {
	set := func(pkgs ...string) map[string]bool {
		m := map[string]bool{}
		for _, p := range pkgs {
			m[p] = true
		}
		return m
	}
	imports := map[string]map[string]bool{
		"cmd/namespaces":          set("web/fieldmgr", "web/menus", "web/module"),
		"web/fieldmgr":            set("domain/fieldgroup", "store/fieldgroups", "store", "web/module"),
		"store/fieldgroups":       set("domain/fieldgroup", "store"),
		"web/menus":               set("domain/menu", "store"),
		"domain/menu":             set("domain/publicroute"),
		"web/module":              set("store"),
		"web/site":                set("web/module", "domain/publicroute"),
		"internal/harness/testdb": set("domain/menu"),
		"cmd/command":             set("store/fieldgroups"),
	}
	ignored := func(p string) bool { return strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "internal/harness/") }
	for _, c := range []struct {
		handlers []string
		want     []string
	}{
		{[]string{"web/fieldmgr"}, []string{"domain/fieldgroup", "store/fieldgroups", "web/fieldmgr"}},
		{[]string{"web/menus"}, []string{"domain/menu", "web/menus"}},
		{[]string{"web/fieldmgr", "web/menus"}, []string{"domain/fieldgroup", "domain/menu", "store/fieldgroups", "web/fieldmgr", "web/menus"}},
	} {
		var got []string
		for p := range ownPackages(imports, c.handlers, ignored) {
			got = append(got, p)
		}
		sort.Strings(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("ownPackages(%v) = %v, want %v", c.handlers, got, c.want)
		}
	}
}

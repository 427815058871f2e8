package exportdir_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
)

// menus is a third namespace, menus/v1, as a package of its own would
// give it: menus by key, their titles kept in memory, a file a menu;
// --prune deletes a menu without a file.
type menus struct{ titles map[string]string }

type menuFile struct {
	Key   string `json:"key"`
	Title string `json:"title"`
}

func (*menus) Namespace() wpsidecar.Namespace { return "menus" }
func (*menus) Noun() string                   { return "menus" }

func (m *menus) Export(context.Context) (exportdir.Exported, error) {
	var e exportdir.Exported
	for _, k := range slices.Sorted(maps.Keys(m.titles)) {
		e.Items = append(e.Items, exportdir.Item{Name: k, Value: menuFile{k, m.titles[k]}})
	}
	return e, nil
}

type menusWanted struct {
	m      *menus
	files  []menuFile
	found  bool
	listed []string
}

func (m *menus) Read(_ context.Context, d exportdir.Dir) (exportdir.Wanted, error) {
	w := menusWanted{m: m, found: d.Found, listed: d.Listed}
	err := d.Each(func(f exportdir.File) error {
		var mf menuFile
		if err := f.Decode(&mf); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		if mf.Key == "" {
			return fmt.Errorf("%s: key: required", f.Path)
		}
		w.files = append(w.files, mf)
		return nil
	})
	return w, err
}

func (w menusWanted) Plan(_ context.Context, prune bool) ([]exportdir.Step, error) {
	var out []exportdir.Step
	have := map[string]bool{}
	for _, f := range w.files {
		have[f.Key] = true
		cur, found := w.m.titles[f.Key]
		switch {
		case !found:
			out = append(out, w.m.step(f.Key, exportdir.OpCreate, f.Title, found, cur, false))
		case cur != f.Title:
			out = append(out, w.m.step(f.Key, exportdir.OpChange, f.Title, found, cur, false))
		}
	}
	if prune {
		if !w.found {
			return nil, errors.New("--prune: no menus/")
		}
		for _, k := range slices.Sorted(maps.Keys(w.m.titles)) {
			if !have[k] {
				// Created since the export: a conflict.
				out = append(out, w.m.step(k, exportdir.OpDelete, "", true, w.m.titles[k], !slices.Contains(w.listed, k)))
			}
		}
	}
	return out, nil
}

func (m *menus) step(key, op, title string, seenFound bool, seen string, conflict bool) exportdir.Step {
	return exportdir.Step{Key: key, Lines: []string{"menus: " + op + " " + key}, Conflict: conflict,
		Write: func(_ context.Context, w exportdir.Writing) error {
			if cur, found := m.titles[key]; !w.Force && (found != seenFound || cur != seen) {
				return fmt.Errorf("menus %s: %w", key, exportdir.ErrConflict)
			}
			if op == exportdir.OpDelete {
				delete(m.titles, key)
			} else {
				m.titles[key] = title
			}
			return nil
		}}
}

// A third namespace, given as a Part beside the two, is exported into its
// own directory and listed in export.json after them, and imported: its
// lines, its conflicts, its writes in order after theirs.
func TestKind_AThirdNamespace(t *testing.T) {
	s, _ := setup(t)
	ctx := context.Background()
	m := &menus{titles: map[string]string{"main": "Main", "side": "Side"}}
	kinds := append(s.kinds(), m)
	dir := t.TempDir()
	if n, err := exportdir.Export(ctx, kinds, dir); err != nil || fmt.Sprint(n) != "[2 1 2]" {
		t.Fatalf("export: %v %v", n, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "menus", "main.json")); string(b) != "{\n  \"key\": \"main\",\n  \"title\": \"Main\"\n}\n" {
		t.Errorf("menus/main.json:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "export.json")); !strings.HasSuffix(string(b), "\"themeopts\": [\n    \"opts\"\n  ],\n  \"menus\": [\n    \"main\",\n    \"side\"\n  ]\n}\n") {
		t.Errorf("export.json:\n%s", b)
	}

	edit(t, filepath.Join(dir, "menus", "main.json"), `"Main"`, `"Edited"`)
	edit(t, filepath.Join(dir, "fieldmgr", "g_a.json"), `"T g_a"`, `"Edited"`)
	os.Remove(filepath.Join(dir, "menus", "side.json"))
	m.titles["new"] = "New" // created since the export
	files, err := exportdir.Read(ctx, kinds, dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := exportdir.PlanImport(ctx, files, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "fieldmgr: change g_a\nmenus: change main\nmenus: delete new (changed in the database since the export)\nmenus: delete side"
	if got := strings.Join(p.Lines(), "\n"); got != want {
		t.Errorf("plan:\n%s\nwant\n%s", got, want)
	}
	if got := fmt.Sprint(p.Conflicts()); got != "[menus new]" {
		t.Errorf("conflicts: %s", got)
	}
	if err := exportdir.Apply(ctx, p, false, wpsidecar.Author{}, "2026-02-02 00:00:00", 61833); !errors.Is(err, exportdir.ErrConflict) || err.Error() != "menus new: "+exportdir.ErrConflict.Error() {
		t.Errorf("without --force: %v", err)
	}
	if err := exportdir.Apply(ctx, p, true, wpsidecar.Author{}, "2026-02-02 00:00:00", 61833); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(m.titles) != "map[main:Edited]" {
		t.Errorf("menus after the import: %v", m.titles)
	}
	if g, _ := s.Groups.Get(ctx, "g_a"); g.Title != "Edited" {
		t.Errorf("g_a after the import: %+v", g)
	}

	// A file the kind refuses names itself.
	os.WriteFile(filepath.Join(dir, "menus", "bad.json"), []byte(`{"key":"bad","nope":1}`), 0o644)
	if _, err := exportdir.Read(ctx, kinds, dir); fmt.Sprint(err) != filepath.Join(dir, "menus", "bad.json")+`: json: unknown field "nope"` {
		t.Errorf("a bad menu file: %v", err)
	}
}

// The kind alone: no database, no other namespace's directory; its
// links are refused as theirs are.
func TestKind_Alone(t *testing.T) {
	ctx := context.Background()
	m := &menus{titles: map[string]string{"main": "Main"}}
	kinds := []exportdir.Part{m}
	dir := t.TempDir()
	if _, err := exportdir.Read(ctx, kinds, dir); fmt.Sprint(err) != dir+" holds no export: no menus/ (on a network, each site's is in sites/<blog id>/)" {
		t.Errorf("an empty directory: %v", err)
	}
	if n, err := exportdir.Export(ctx, kinds, dir); err != nil || fmt.Sprint(n) != "[1]" {
		t.Fatalf("export: %v %v", n, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("DIR holds %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "export.json")); string(b) != "{\n  \"menus\": [\n    \"main\"\n  ]\n}\n" {
		t.Errorf("export.json:\n%s", b)
	}
	// Deleted: the next export removes its file.
	delete(m.titles, "main")
	if _, err := exportdir.Export(ctx, kinds, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "menus", "main.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("main.json stays: %v", err)
	}
	files, err := exportdir.Read(ctx, kinds, dir)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := exportdir.PlanImport(ctx, files, true); err != nil || !p.Empty() {
		t.Errorf("importing what is stored: %v %v", p.Lines(), err)
	}

	// export.json is read as a struct of the kinds' lists is read.
	for body, want := range map[string]string{
		`{"menus": 1}`:     "json: cannot unmarshal number into Go struct field manifest.menus of type []string",
		`{"fieldmgr": []}`: `json: unknown field "fieldmgr"`,
		`{"MENUS": []}`:    "",
		`[]`:               "json: cannot unmarshal array into Go value of type exportdir.manifest",
	} {
		os.WriteFile(filepath.Join(dir, "export.json"), []byte(body), 0o644)
		if _, err := exportdir.Read(ctx, kinds, dir); want == "" && err != nil || want != "" && fmt.Sprint(err) != filepath.Join(dir, "export.json")+": "+want {
			t.Errorf("export.json %s: %v", body, err)
		}
	}

	other := t.TempDir()
	os.RemoveAll(filepath.Join(dir, "menus"))
	os.Symlink(other, filepath.Join(dir, "menus"))
	want := fmt.Sprintf("%s is a symbolic link: not followed (it may lead out of %s)", filepath.Join(dir, "menus"), dir)
	if _, err := exportdir.Export(ctx, kinds, dir); fmt.Sprint(err) != "export: "+want {
		t.Errorf("export: %v", err)
	}
	if _, err := exportdir.Read(ctx, kinds, dir); fmt.Sprint(err) != want {
		t.Errorf("import: %v", err)
	}
}

package exportdir_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/fieldmgr"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

// optsConfig is the theme options configuration of the test site: ids 3,
// empty and list of its row are not among its options (another writer
// stored them).
const optsConfig = `{"opt_name":"opts","sections":[{"id":"s","fields":[
	{"id":"accent","type":"color"},{"id":"tagline","type":"text"},{"id":"columns","type":"number"},{"id":"logo","type":"media"}]}]}`

func optsConf(t *testing.T) *themeoption.Config {
	t.Helper()
	c, err := themeoption.ParseConfig([]byte(optsConfig))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const row = `a:4:{s:6:"accent";s:4:"#111";i:3;a:2:{i:7;d:1;s:3:"obj";O:8:"stdClass":1:{s:1:"a";i:1;}}s:5:"empty";O:8:"stdClass":0:{}s:4:"list";a:2:{i:0;s:1:"x";i:1;d:0.5;}}`

// site is the test site: its database, field groups' table and theme
// options configuration.
type site struct {
	DB        *store.DB
	Groups    *fieldgrouptable.Groups
	Themeopts *themeoption.Config
}

// kinds are the site's two namespaces as export and import handle them.
func (s site) kinds() []exportdir.Part {
	return []exportdir.Part{fieldmgr.Part{Table: s.Groups}, themeopts.Part{DB: s.DB, Config: s.Themeopts}}
}

func setup(t *testing.T) (site, *testdb.DB) {
	tdb := testdb.New(t)
	db := tdb.StoreWith(t, func(o *store.Options) { o.History = true })
	groups, _ := fieldgrouptable.Open(db, testdb.Prefix+"fieldmgr_groups")
	ctx := context.Background()
	groups.EnsureTable(ctx)
	for _, k := range []string{"g_a", "g_b"} {
		if err := groups.Create(ctx, k, "T "+k, `{"type":"post","post_type":"post","fields":{"f":{"type":"text","label":"F"}}}`, "2026-01-01 00:00:00", wpsidecar.Author{}); err != nil {
			t.Fatal(err)
		}
	}
	tdb.SetOption(t, "opts", row)
	return site{DB: db, Groups: groups, Themeopts: optsConf(t)}, tdb
}

func plan(t *testing.T, s site, dir string, prune bool) exportdir.Plan {
	t.Helper()
	files, err := exportdir.Read(context.Background(), s.kinds(), dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := exportdir.PlanImport(context.Background(), files, prune)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func apply(t *testing.T, s site, p exportdir.Plan, force bool) error {
	return exportdir.Apply(context.Background(), p, force, wpsidecar.Author{Login: "cli"}, "2026-02-02 00:00:00", 61833)
}

func edit(t *testing.T, path, from, to string) {
	t.Helper()
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), from) {
		t.Fatalf("%s has no %q:\n%s", path, from, b)
	}
	os.WriteFile(path, []byte(strings.Replace(string(b), from, to, 1)), 0o644)
}

// What JSON cannot tell apart survives an export and import of an edited
// set byte for byte; only edited ids and groups change; an import of what
// is stored plans nothing; a row changed since the export is a conflict.
func TestExportImport(t *testing.T) {
	s, _ := setup(t)
	ctx := context.Background()
	dir := t.TempDir()
	if n, err := exportdir.Export(ctx, s.kinds(), dir); err != nil || n[0] != 2 || n[1] != 1 {
		t.Fatalf("export: %v %v", n, err)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "themeopts", "opts.json"))
	again := t.TempDir()
	exportdir.Export(ctx, s.kinds(), again)
	second, _ := os.ReadFile(filepath.Join(again, "themeopts", "opts.json"))
	if string(first) != string(second) {
		t.Errorf("two exports differ:\n%s\n%s", first, second)
	}
	if p := plan(t, s, dir, true); !p.Empty() {
		t.Fatalf("importing what is stored: %v", p.Lines())
	}

	edit(t, filepath.Join(dir, "themeopts", "opts.json"), `"#111"`, `"#222"`)
	edit(t, filepath.Join(dir, "fieldmgr", "g_a.json"), `"T g_a"`, `"Edited"`)
	p := plan(t, s, dir, false)
	want := []string{"fieldmgr: change g_a", "themeopts opts: change accent"}
	if got := p.Lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan: %q, want %q", got, want)
	}
	if err := apply(t, s, p, false); err != nil {
		t.Fatal(err)
	}
	if raw, _ := s.DB.RawOption(ctx, "opts"); raw != strings.Replace(row, `s:4:"#111"`, `s:4:"#222"`, 1) {
		t.Errorf("the row after the import:\n%s", raw)
	}
	if g, _ := s.Groups.Get(ctx, "g_b"); g.UpdatedAt != "2026-01-01 00:00:00" {
		t.Errorf("g_b was written: %+v", g)
	}
	if p := plan(t, s, dir, false); !p.Empty() {
		t.Errorf("a second import: %v", p.Lines())
	}

	// A fresh export; the database changes; the edited file conflicts.
	dir = t.TempDir()
	exportdir.Export(ctx, s.kinds(), dir)
	s.DB.ModifyOption(ctx, "opts", 61833, nil, func(raw string, _ bool) (string, error) {
		return strings.Replace(raw, `s:4:"#222"`, `s:4:"#333"`, 1), nil
	})
	edit(t, filepath.Join(dir, "themeopts", "opts.json"), `"accent": "#222",`, `"accent": "#222", "tagline": "new",`)
	p = plan(t, s, dir, false)
	if c := p.Conflicts(); len(c) != 1 || c[0] != "themeopts opts" {
		t.Errorf("conflicts: %v", c)
	}
	if err := apply(t, s, p, false); !errors.Is(err, exportdir.ErrConflict) {
		t.Errorf("without --force: %v", err)
	}
	if err := apply(t, s, p, true); err != nil {
		t.Fatal(err)
	}
	if raw, _ := s.DB.RawOption(ctx, "opts"); !strings.Contains(raw, `s:6:"accent";s:4:"#222";s:7:"tagline";s:3:"new";i:3;`) {
		t.Errorf("forced: %s", raw)
	}

	// --prune deletes a group without a file; a bad file names itself.
	os.Remove(filepath.Join(dir, "fieldmgr", "g_b.json"))
	p = plan(t, s, dir, true)
	if got := strings.Join(p.Lines(), "\n"); got != "fieldmgr: delete g_b" {
		t.Errorf("prune: %q", got)
	}
	os.WriteFile(filepath.Join(dir, "fieldmgr", "bad.json"), []byte(`{"key":"bad","title":"B","status":"active","config":{"type":"nope"},"exported":""}`), 0o644)
	files, err := exportdir.Read(context.Background(), s.kinds(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exportdir.PlanImport(ctx, files, false); err == nil || !strings.Contains(err.Error(), "bad.json: config.type") {
		t.Errorf("a bad file: %v", err)
	}
}

// A group another writer stored, which the REST routes would refuse (no
// post_type; a PHP-serialized config), exports and imports as it is; a
// title edited beside it is written; a config changed into one the
// routes refuse is refused.
func TestImport_GroupsOthersWrote(t *testing.T) {
	s, tdb := setup(t)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO ` + testdb.Prefix + `fieldmgr_groups (group_key, title, config, status, created_at, updated_at) VALUES ('loose', 'L', '{"type":"post"}', 'active', NOW(), NOW())`,
		`INSERT INTO ` + testdb.Prefix + `fieldmgr_groups (group_key, title, config, status, created_at, updated_at) VALUES ('old', 'O', 'a:1:{s:4:"type";s:4:"post";}', 'active', NOW(), NOW())`,
	} {
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	exportdir.Export(ctx, s.kinds(), dir)
	if p := plan(t, s, dir, false); !p.Empty() {
		t.Errorf("importing what is stored: %q", p.Lines())
	}
	edit(t, filepath.Join(dir, "fieldmgr", "loose.json"), `"title": "L"`, `"title": "Loose"`)
	p := plan(t, s, dir, false)
	if err := apply(t, s, p, false); err != nil {
		t.Fatal(err)
	}
	if g, _ := s.Groups.Get(ctx, "loose"); g.Title != "Loose" || g.Config != `{"type":"post"}` {
		t.Errorf("after the import: %+v", g)
	}
	edit(t, filepath.Join(dir, "fieldmgr", "loose.json"), `"type": "post"`, `"type": "nope"`)
	edit(t, filepath.Join(dir, "fieldmgr", "old.json"), `s:4:\"post\";}`, `O:8:\"stdClass\":0:{}}`)
	files, _ := exportdir.Read(context.Background(), s.kinds(), dir)
	if _, err := exportdir.PlanImport(ctx, files, false); err == nil || !strings.Contains(err.Error(), "loose.json: config.type") {
		t.Errorf("a refused config: %v", err)
	}
	edit(t, filepath.Join(dir, "fieldmgr", "loose.json"), `"type": "nope"`, `"type": "post"`)
	files, _ = exportdir.Read(context.Background(), s.kinds(), dir)
	if _, err := exportdir.PlanImport(ctx, files, false); err == nil || !strings.Contains(err.Error(), "old.json: config: a string must be a PHP-serialized array without objects") {
		t.Errorf("an object in a serialized config: %v", err)
	}
}

// What an import refuses: an options file on a site without theme options
// (it would write any row of wp_options), pruning a directory without
// fieldmgr/ (it would delete every group), a key that differs from a
// stored one only in letter case; and what it calls a conflict: a group
// deleted since the export, and one created since, which --prune would
// delete.
func TestImport_Refusals(t *testing.T) {
	s, _ := setup(t)
	ctx := context.Background()
	dir := t.TempDir()
	exportdir.Export(ctx, s.kinds(), dir)

	noOpts := s
	noOpts.Themeopts = nil
	files, _ := exportdir.Read(context.Background(), noOpts.kinds(), dir)
	if _, err := exportdir.PlanImport(ctx, files, false); err == nil || !strings.Contains(err.Error(), "no theme options configuration") {
		t.Errorf("an options file on a site without theme options: %v", err)
	}
	other := t.TempDir()
	os.MkdirAll(filepath.Join(other, "themeopts"), 0o755)
	files, _ = exportdir.Read(context.Background(), s.kinds(), other)
	if _, err := exportdir.PlanImport(ctx, files, true); err == nil || !strings.Contains(err.Error(), "no fieldmgr/") {
		t.Errorf("--prune without fieldmgr/: %v", err)
	}

	// g_a deleted, g_c created since the export.
	s.Groups.Delete(ctx, "g_a", nil, wpsidecar.Author{})
	s.Groups.Create(ctx, "g_c", "C", `{"type":"post","post_type":"post"}`, "2026-01-01 00:00:00", wpsidecar.Author{})
	p := plan(t, s, dir, true)
	if got := strings.Join(p.Conflicts(), ","); got != "fieldmgr g_a,fieldmgr g_c" {
		t.Errorf("conflicts %q; plan %q", got, p.Lines())
	}
	if err := apply(t, s, p, false); !errors.Is(err, exportdir.ErrConflict) {
		t.Errorf("without --force: %v", err)
	}
	if _, err := s.Groups.Get(ctx, "g_c"); err != nil {
		t.Errorf("g_c after a refused import: %v", err)
	}

	os.WriteFile(filepath.Join(dir, "fieldmgr", "G_C.json"), []byte(`{"key":"G_C","title":"C","status":"active","config":{"type":"post","post_type":"post"},"exported":""}`), 0o644)
	files, _ = exportdir.Read(context.Background(), s.kinds(), dir)
	if _, err := exportdir.PlanImport(ctx, files, false); err == nil || !strings.Contains(err.Error(), "letter case") {
		t.Errorf("a key in another letter case: %v", err)
	}
}

package exportdir_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// exported is the test site and a fresh export of it.
func exported(t *testing.T) (site, string) {
	t.Helper()
	s, _ := setup(t)
	dir := t.TempDir()
	if _, err := exportdir.Export(context.Background(), s.kinds(), dir); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// importErr reads dir and plans its import, within a deadline (what it
// guards against never ended), and says what failed ("" nothing).
func importErr(t *testing.T, s site, dir string) string {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		files, err := exportdir.Read(context.Background(), s.kinds(), dir)
		if err == nil {
			_, err = exportdir.PlanImport(context.Background(), files, false)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			return ""
		}
		return err.Error()
	case <-time.After(20 * time.Second):
		t.Fatal("reading and planning the import did not end in 20 s")
		return ""
	}
}

// writeOptions writes dir's options file: php, and values as the export
// would show php (every id "unedited") with edit applied to them.
func writeOptions(t *testing.T, dir, php string, edit func(string) string) {
	t.Helper()
	v, err := phpserial.Unserialize(php)
	if err != nil {
		t.Fatal(err)
	}
	values := string(phpserial.JSON(v))
	if edit != nil {
		values = edit(values)
	}
	b, _ := json.Marshal(map[string]any{"option": "opts", "values": json.RawMessage(values), "php": php})
	if err := os.WriteFile(filepath.Join(dir, "themeopts", "opts.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// phpMade is what PHP 8.2's serialize() makes of code's $a.
func phpMade(t *testing.T, code string) string {
	t.Helper()
	out, err := exec.Command("php", "-r", code+` echo serialize($a);`).Output()
	if err != nil {
		t.Fatalf("php -r: %v", err)
	}
	return string(out)
}

// nested is an array nested 60 deep, each level holding two references
// to the one below: some 1,100 bytes that expand to 2^60 values.
const nested = `$a = ["type" => "post"]; for ($i = 0; $i < 60; $i++) { $b = [&$a, &$a]; unset($a); $a = $b; unset($b); }`

// An options file's "php" may hold PHP objects only where the row holds
// them already (the stdClass values another writer stored, kept byte for
// byte): an object in a value the row does not hold, or a set that is an
// object where the row is an array, is refused, with or without --force,
// before anything is written.
func TestImport_RefusesPHPObjects(t *testing.T) {
	for _, c := range []struct {
		name, php string
		want      string
	}{
		{"an object as a configured id's value", `a:1:{s:7:"tagline";O:3:"Foo":1:{s:1:"a";i:1;}}`,
			`php: "tagline" holds a PHP object (Foo) the row does not hold: objects are not imported`},
		{"a Serializable object", `a:1:{s:7:"tagline";C:11:"ArrayObject":21:{x:i:0;a:0:{};m:a:0:{}}}`,
			`php: "tagline" holds a PHP object (ArrayObject) the row does not hold: objects are not imported`},
		{"an enum case", `a:1:{s:7:"tagline";E:7:"Suit:Up";}`,
			`php: "tagline" holds a PHP object (Suit) the row does not hold: objects are not imported`},
		{"an object deep in a value", `a:1:{s:4:"logo";a:2:{s:2:"id";i:1;s:3:"url";O:3:"Foo":0:{}}}`,
			`php: "logo" holds a PHP object (Foo) the row does not hold: objects are not imported`},
		{"a stdClass under an id the configuration lacks", `a:1:{s:3:"zzz";O:8:"stdClass":0:{}}`,
			`php: "zzz" holds a PHP object (stdClass) the row does not hold: objects are not imported`},
		{"the row's stdClass under another id", `a:2:{s:6:"accent";s:4:"#111";s:4:"copy";O:8:"stdClass":0:{}}`,
			`php: "copy" holds a PHP object (stdClass) the row does not hold: objects are not imported`},
		{"the set an object", `O:3:"Foo":1:{s:7:"tagline";s:1:"x";}`,
			`php: the set is a PHP object (Foo) where the row is not: objects are not imported`},
		{"the set a stdClass", `O:8:"stdClass":1:{s:7:"tagline";s:1:"x";}`,
			`php: the set is a PHP object (stdClass) where the row is not: objects are not imported`},
		{"the row's own objects, kept", row, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, dir := exported(t)
			writeOptions(t, dir, c.php, nil)
			want := ""
			if c.want != "" {
				want = filepath.Join(dir, "themeopts", "opts.json") + ": " + c.want
			}
			if got := importErr(t, s, dir); got != want {
				t.Fatalf("import:\n got %s\nwant %s", got, want)
			}
			if raw, _ := s.DB.RawOption(context.Background(), "opts"); raw != row {
				t.Errorf("the row changed: %s", raw)
			}
		})
	}
}

// An imported value that is not what the row stores is checked as POST
// /themeopts/v1/options checks it, with the route's words: an id the
// configuration lacks, a value its field does not take, a number PHP
// reads as INF; whether the file's "values" or its "php" brings it.
func TestImport_ChecksValues(t *testing.T) {
	const (
		color  = `Invalid value for option "accent": must be a hex color (#rgb, #rrggbb or #rrggbbaa) or "".`
		number = `Invalid value for option "columns": must be a number.`
	)
	for _, c := range []struct {
		name      string
		php       string
		from, to  string // an edit of the values
		want      string
		wantStore string // the row after the import, when it is written
	}{
		{"markup as a color", row, `"#111"`, `"red}</style><script>alert(1)</script>"`, color, ""},
		{"markup as a color, in php", strings.Replace(row, `s:4:"#111"`, `s:37:"red}</style><script>alert(1)</script>"`, 1), "", "", color, ""},
		{"an id the configuration lacks", row, `"accent"`, `"nope": 1, "accent"`, `Invalid value for option "nope": is not an option of the theme options configuration.`, ""},
		{"1e700", row, `"accent"`, `"columns": 1e700, "accent"`, number, ""},
		{"-1e700", row, `"accent"`, `"columns": -1e700, "accent"`, number, ""},
		{"INF in php", `a:2:{s:6:"accent";s:4:"#111";s:7:"columns";d:INF;}`, "", "", number, ""},
		{"NAN in php", `a:2:{s:6:"accent";s:4:"#111";s:7:"columns";d:NAN;}`, "", "", number, ""},
		{"1e700 in an image object", row, `"accent"`, `"logo": {"id": 1, "url": "u", "width": 1e700}, "accent"`,
			`Invalid value for option "logo": must be an image object: "width" must be an integer.`, ""},
		{"a number as text", row, `"accent"`, `"tagline": 5, "accent"`, `Invalid value for option "tagline": must be a string.`, ""},
		{"values the route takes", row, `"accent":"#111"`, `"accent": "#abc", "columns": 2.5, "tagline": "t"`, "",
			`a:6:{s:6:"accent";s:4:"#abc";s:7:"columns";d:2.5;s:7:"tagline";s:1:"t";i:3;a:2:{i:7;d:1;s:3:"obj";O:8:"stdClass":1:{s:1:"a";i:1;}}s:5:"empty";O:8:"stdClass":0:{}s:4:"list";a:2:{i:0;s:1:"x";i:1;d:0.5;}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, dir := exported(t)
			writeOptions(t, dir, c.php, func(v string) string {
				if c.from == "" {
					return v
				}
				if !strings.Contains(v, c.from) {
					t.Fatalf("%s has no %s", v, c.from)
				}
				return strings.Replace(v, c.from, c.to, 1)
			})
			want := ""
			if c.want != "" {
				want = filepath.Join(dir, "themeopts", "opts.json") + ": " + c.want
			}
			files, err := exportdir.Read(context.Background(), s.kinds(), dir)
			if err != nil {
				t.Fatal(err)
			}
			p, err := exportdir.PlanImport(context.Background(), files, false)
			if got := fmt.Sprint(err); want != "" && got != want || want == "" && err != nil {
				t.Fatalf("import:\n got %v\nwant %s", err, want)
			}
			if err != nil {
				return
			}
			if err := apply(t, s, p, true); err != nil {
				t.Fatal(err)
			}
			if raw, _ := s.DB.RawOption(context.Background(), "opts"); raw != c.wantStore {
				t.Errorf("the row:\n got %s\nwant %s", raw, c.wantStore)
			}
		})
	}
}

// A group config holding a number json_decode reads as INF is refused as
// the REST routes refuse such a body (it would make every JSON answer of
// the group fail); stored so by another writer, it imports as it is.
func TestImport_GroupConfigNumbers(t *testing.T) {
	s, tdb := setup(t)
	dir := t.TempDir()
	exportdir.Export(context.Background(), s.kinds(), dir)
	file := filepath.Join(dir, "fieldmgr", "inf.json")
	os.WriteFile(file, []byte(`{"key":"inf","title":"I","status":"active","config":{"type":"post","post_type":"post","fields":{"n":{"type":"number","label":"N","max":1e700}}},"exported":""}`), 0o644)
	if got, want := importErr(t, s, dir), file+": config.fields.n.max: number beyond what a PHP float holds"; got != want {
		t.Errorf("import:\n got %s\nwant %s", got, want)
	}
	tdb.SQL.Exec(`INSERT INTO ` + "wp_fieldmgr_groups" + ` (group_key, title, config, status, created_at, updated_at) VALUES ('inf', 'I', '{"type":"post","post_type":"post","fields":{"n":{"type":"number","label":"N","max":1e700}}}', 'active', NOW(), NOW())`)
	if got := importErr(t, s, dir); got != "" {
		t.Errorf("importing what is stored: %s", got)
	}
}

// Export writes only into DIR: a fieldmgr/ or themeopts/ that is a link
// (out of DIR or not) is refused before anything is written, and so is
// it on import; what the link leads to is left alone.
func TestExport_FollowsNoLink(t *testing.T) {
	for _, sub := range []string{"fieldmgr", "themeopts"} {
		t.Run(sub, func(t *testing.T) {
			s, _ := setup(t)
			dir, other := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(other, "unrelated.json"), []byte(`{"keep":1}`), 0o644)
			if err := os.Symlink(other, filepath.Join(dir, sub)); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("%s is a symbolic link: not followed (it may lead out of %s)", filepath.Join(dir, sub), dir)
			if _, err := exportdir.Export(context.Background(), s.kinds(), dir); fmt.Sprint(err) != "export: "+want {
				t.Errorf("export: %v\nwant export: %s", err, want)
			}
			if ents, _ := os.ReadDir(other); len(ents) != 1 || ents[0].Name() != "unrelated.json" {
				t.Errorf("the link's target holds %v", ents)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("DIR holds %v", ents)
			}
			if _, err := exportdir.Read(context.Background(), s.kinds(), dir); fmt.Sprint(err) != want {
				t.Errorf("import: %v\nwant %s", err, want)
			}
		})
	}
}

// An export removes only the files the previous export wrote (its
// export.json lists them) of what is no longer stored: not other .json
// files, not a link, and nothing at all without a manifest; export.json
// a link is replaced, not written through.
func TestExport_RemovesOnlyItsFiles(t *testing.T) {
	s, _ := setup(t)
	ctx := context.Background()
	dir, other := t.TempDir(), t.TempDir()
	if _, err := exportdir.Export(ctx, s.kinds(), dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "export.json")); string(b) != "{\n  \"fieldmgr\": [\n    \"g_a\",\n    \"g_b\"\n  ],\n  \"themeopts\": [\n    \"opts\"\n  ]\n}\n" {
		t.Errorf("export.json:\n%s", b)
	}
	mine := map[string]string{
		"fieldmgr/notes.json":  `{"mine":1}`,
		"themeopts/other.json": `{"mine":2}`,
		"outside.json":         `{"mine":3}`,
	}
	for name, body := range mine {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	os.WriteFile(filepath.Join(other, "target.json"), []byte(`{"mine":4}`), 0o644)
	// g_a's file a link now (to a file of mine), g_b and the row deleted.
	os.Remove(filepath.Join(dir, "fieldmgr", "g_a.json"))
	os.Symlink(filepath.Join(other, "target.json"), filepath.Join(dir, "fieldmgr", "g_a.json"))
	s.Groups.Delete(ctx, "g_a", nil, wpsidecar.Author{})
	s.Groups.Delete(ctx, "g_b", nil, wpsidecar.Author{})
	s.DB.SQL().Exec("DELETE FROM wp_options WHERE option_name = 'opts'")
	// The manifest a link to a file of mine.
	os.Rename(filepath.Join(dir, "export.json"), filepath.Join(other, "export.json"))
	os.Symlink(filepath.Join(other, "export.json"), filepath.Join(dir, "export.json"))
	if _, err := exportdir.Export(ctx, s.kinds(), dir); err != nil {
		t.Fatal(err)
	}
	// Its manifest was a link: not read, so nothing is removed.
	for _, name := range []string{"fieldmgr/g_b.json", "themeopts/opts.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if st, err := os.Lstat(filepath.Join(dir, "export.json")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("export.json is not a file of its own: %v %v", st, err)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "export.json")); !strings.Contains(string(b), `"g_b"`) {
		t.Errorf("the manifest's link target was written: %s", b)
	}

	// Now with the manifest it wrote, listing nothing: the files of the
	// export before stay too.
	if _, err := exportdir.Export(ctx, s.kinds(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "fieldmgr", "g_b.json")); err != nil {
		t.Errorf("g_b.json: %v", err)
	}

	// A manifest that lists them (as the export that wrote them did): its
	// files go, the link and everything else stays.
	os.WriteFile(filepath.Join(dir, "export.json"), []byte(`{"fieldmgr":["g_a","g_b"],"themeopts":["opts"]}`), 0o644)
	if _, err := exportdir.Export(ctx, s.kinds(), dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fieldmgr/g_b.json", "themeopts/opts.json"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: not removed: %v", name, err)
		}
	}
	for name, body := range mine {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != body {
			t.Errorf("%s: %q", name, b)
		}
	}
	if st, err := os.Lstat(filepath.Join(dir, "fieldmgr", "g_a.json")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link g_a.json: %v %v", st, err)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "target.json")); string(b) != `{"mine":4}` {
		t.Errorf("the link's target: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "export.json")); string(b) != "{\n  \"fieldmgr\": null\n}\n" {
		t.Errorf("export.json:\n%s", b)
	}
}

// What an import reads is bounded: only regular files (a link, a device,
// a pipe is refused before it is opened, so none blocks or streams
// forever), at most MaxFileBytes each, at most MaxFiles a directory.
func TestRead_Bounds(t *testing.T) {
	big := func(name string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Truncate(filepath.Join(dir, name), exportdir.MaxFileBytes+1)
		}
	}
	fifo := func(name string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, name))
			if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const pipe = "a named pipe (FIFO), not a regular file"
	var dirLimit int64
	for _, c := range []struct {
		name string
		make func(t *testing.T, dir string)
		file string // the file the error names, under dir
		want string
	}{
		{"a link to /dev/zero", func(t *testing.T, dir string) { os.Symlink("/dev/zero", filepath.Join(dir, "fieldmgr", "x.json")) },
			"fieldmgr/x.json", "a symbolic link: not followed"},
		{"a link to a group file", func(t *testing.T, dir string) {
			os.Rename(filepath.Join(dir, "fieldmgr", "g_a.json"), filepath.Join(dir, "g_a"))
			os.Symlink(filepath.Join(dir, "g_a"), filepath.Join(dir, "fieldmgr", "g_a.json"))
		}, "fieldmgr/g_a.json", "a symbolic link: not followed"},
		{"a pipe", fifo("fieldmgr/x.json"), "fieldmgr/x.json", pipe},
		{"a pipe for options", fifo("themeopts/opts.json"), "themeopts/opts.json", pipe},
		{"a pipe for the manifest", fifo("export.json"), "export.json", pipe},
		{"a device", func(t *testing.T, dir string) {
			if err := syscall.Mknod(filepath.Join(dir, "fieldmgr", "x.json"), syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
				t.Fatal(err) // /dev/zero's numbers (tests run as root)
			}
		}, "fieldmgr/x.json", "a device, not a regular file"},
		{"a directory", func(t *testing.T, dir string) { os.Mkdir(filepath.Join(dir, "fieldmgr", "x.json"), 0o755) },
			"fieldmgr/x.json", "a directory, not a file"},
		{"a group file over the limit", big("fieldmgr/x.json"), "fieldmgr/x.json", "larger than 32 MiB"},
		{"an options file over the limit", big("themeopts/opts.json"), "themeopts/opts.json", "larger than 32 MiB"},
		{"too many files", func(t *testing.T, dir string) {
			t.Cleanup(exportdir.SetLimits(10, exportdir.MaxDirBytes))
			for i := range 9 { // and g_a.json and g_b.json
				os.WriteFile(filepath.Join(dir, "fieldmgr", fmt.Sprintf("%d.json", i)), nil, 0o644)
			}
		}, "fieldmgr", "over 10 .json files"},
		{"too many bytes together", func(t *testing.T, dir string) {
			// export.json, g_a.json and g_b.json are read; the options file
			// would go over.
			var n int64
			for _, name := range []string{"export.json", "fieldmgr/g_a.json", "fieldmgr/g_b.json"} {
				st, _ := os.Stat(filepath.Join(dir, name))
				n += st.Size()
			}
			t.Cleanup(exportdir.SetLimits(exportdir.MaxFiles, n))
			dirLimit = n
		}, "themeopts/opts.json", "the directory's files are over the limit of %d bytes together"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, dir := exported(t)
			c.make(t, dir)
			want := filepath.Join(dir, c.file) + ": " + c.want
			if strings.Contains(c.want, "%d") {
				want = fmt.Sprintf(want, dirLimit)
			}
			if got := importErr(t, s, dir); got != want {
				t.Errorf("import:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// Nested references (PHP-made: 1,100 bytes that expand to 2^60 values)
// are walked only up to MaxValueBytes: a group config holding them, an
// options file's php, and a row stored so are refused at once, naming
// the bound, and the export of such a row too.
func TestImport_NestedReferences(t *testing.T) {
	deep := phpMade(t, nested)
	if len(deep) > 1200 || !strings.Contains(deep, "R:") {
		t.Fatalf("PHP made %d bytes: %.200s", len(deep), deep)
	}
	const bound = "over 32 MiB with its references expanded"
	t.Run("a group config", func(t *testing.T) {
		s, dir := exported(t)
		b, _ := json.Marshal(map[string]string{"key": "nest", "title": "N", "status": "active", "config": deep, "exported": ""})
		file := filepath.Join(dir, "fieldmgr", "nest.json")
		os.WriteFile(file, b, 0o644)
		if got, want := importErr(t, s, dir), file+": config: "+bound; got != want {
			t.Errorf("import:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("an options file's php", func(t *testing.T) {
		s, dir := exported(t)
		php := phpMade(t, strings.Replace(nested, `["type" => "post"]`, `"x"`, 1)+` $a = ["tagline" => $a];`)
		b, _ := json.Marshal(map[string]any{"option": "opts", "values": map[string]string{"tagline": "x"}, "php": php})
		file := filepath.Join(dir, "themeopts", "opts.json")
		os.WriteFile(file, b, 0o644)
		if got, want := importErr(t, s, dir), file+": php: "+bound; got != want {
			t.Errorf("import:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("the row stored", func(t *testing.T) {
		s, tdb := setup(t)
		dir := t.TempDir()
		exportdir.Export(context.Background(), s.kinds(), dir)
		tdb.SetOption(t, "opts", phpMade(t, nested+` $a = ["accent" => "#111", "deep" => $a];`))
		if got, want := importErr(t, s, dir), filepath.Join(dir, "themeopts", "opts.json")+": the row opts stores: "+bound+"; not imported"; got != want {
			t.Errorf("import:\n got %s\nwant %s", got, want)
		}
		done := make(chan error, 1)
		go func() { _, err := exportdir.Export(context.Background(), s.kinds(), t.TempDir()); done <- err }()
		select {
		case err := <-done:
			if want := "export: option opts: " + bound + "; not exported"; fmt.Sprint(err) != want {
				t.Errorf("export: %v\nwant %s", err, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the export did not end in 20 s")
		}
	})
}

// A context that ends stops reading, planning and writing: nothing is
// written after it.
func TestImport_Cancelled(t *testing.T) {
	s, dir := exported(t)
	edit(t, filepath.Join(dir, "fieldmgr", "g_a.json"), `"T g_a"`, `"Edited"`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := exportdir.Read(ctx, s.kinds(), dir); !errors.Is(err, context.Canceled) {
		t.Errorf("read: %v", err)
	}
	files, err := exportdir.Read(context.Background(), s.kinds(), dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := exportdir.PlanImport(context.Background(), files, false)
	if err != nil || len(p.Parts[0].Steps) != 1 {
		t.Fatalf("plan: %v %v", p.Lines(), err)
	}
	if err := exportdir.Apply(ctx, p, false, wpsidecar.Author{Login: "cli"}, "2026-02-02 00:00:00", 61833); !errors.Is(err, context.Canceled) {
		t.Errorf("apply: %v", err)
	}
	if g, _ := s.Groups.Get(context.Background(), "g_a"); g.Title != "T g_a" {
		t.Errorf("written after the end: %+v", g)
	}
}

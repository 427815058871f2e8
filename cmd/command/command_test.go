package command_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/cmd/command"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
)

// stored is the theme options row of the test site.
const stored = `a:2:{s:12:"accent_color";s:7:"#111111";s:7:"tagline";s:3:"one";}`

// testSite is a site with a group and a theme options row, its
// wp-config.php, and the flags the commands take for it.
type testSite struct {
	tdb   *testdb.DB
	flags []string
}

func newSite(t *testing.T) testSite {
	t.Helper()
	tdb := testdb.New(t)
	db := tdb.Store(t)
	groups, _ := fieldgrouptable.Open(db, testdb.Prefix+"fieldmgr_groups")
	ctx := context.Background()
	groups.EnsureTable(ctx)
	if err := groups.Create(ctx, "g_a", "T g_a", `{"type":"post","post_type":"post","fields":{"f":{"type":"text","label":"F"}}}`, "2026-01-01 00:00:00", wpsidecar.Author{}); err != nil {
		t.Fatal(err)
	}
	tdb.SetOption(t, "themeopts_options", stored)
	wpConfig := filepath.Join(t.TempDir(), "wp-config.php")
	os.WriteFile(wpConfig, []byte(`<?php
define( 'DB_NAME', '`+tdb.Name+`' );
define( 'DB_USER', 'root' );
define( 'DB_PASSWORD', '' );
define( 'DB_HOST', '`+testdb.ServerConfig(t).Addr+`' );
$table_prefix = 'wp_';
`), 0o644)
	config, _ := filepath.Abs("../../web/themeopts/testdata/config.json")
	return testSite{tdb: tdb, flags: []string{"--wp-config", wpConfig, "--themeopts-config", config}}
}

// run runs a command within a deadline (what some cases guard against
// never ended), and gives its error ("" none) and output.
func (s testSite) run(t *testing.T, ctx context.Context, name string, args ...string) (string, string) {
	t.Helper()
	var out bytes.Buffer
	w := &lockedWriter{b: &out}
	done := make(chan error, 1)
	go func() {
		done <- command.Run(ctx, name, append(args, s.flags...), settings(), command.Env{Stdout: w, Stderr: w})
	}()
	select {
	case err := <-done:
		if err == nil {
			return "", w.String()
		}
		return err.Error(), w.String()
	case <-time.After(30 * time.Second):
		t.Fatalf("wpsidecar %s did not end in 30 s", name)
		return "", ""
	}
}

func (s testSite) row(t *testing.T) string {
	t.Helper()
	var v string
	if err := s.tdb.SQL.QueryRow("SELECT option_value FROM wp_options WHERE option_name = 'themeopts_options'").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// setOptions rewrites the options file: php, and values as the export
// shows them.
func setOptions(t *testing.T, dir, php, values string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"option": "themeopts_options", "values": json.RawMessage(values), "php": php})
	if err := os.WriteFile(filepath.Join(dir, "themeopts", "themeopts_options.json"), b, 0o644); err != nil {
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

// What wpsidecar import refuses, with the words it says it in, before it
// writes anything, whatever the flags: PHP objects the row does not hold
// (an options file's "php" is read as PHP would read it); values POST
// /themeopts/v1/options refuses; files that are not regular files; a
// config whose references expand past the bound. A value the route takes
// is written.
func TestImport(t *testing.T) {
	const optFile = "themeopts/themeopts_options.json"
	for _, c := range []struct {
		name    string
		prepare func(t *testing.T, dir string)
		flags   []string
		file    string // the file the error names
		want    string // the error after the file's name ("" none)
		wantOut string
		wantRow string // the row after ("" as stored)
	}{
		{"an object in php, forced", func(t *testing.T, dir string) {
			setOptions(t, dir, `a:2:{s:12:"accent_color";s:7:"#111111";s:7:"tagline";O:3:"Foo":1:{s:1:"a";i:1;}}`, `{"accent_color":"#111111","tagline":{"a":1}}`)
		}, []string{"--force"}, optFile, `php: "tagline" holds a PHP object (Foo) the row does not hold: objects are not imported`, "", ""},
		{"an object in php, dry run", func(t *testing.T, dir string) {
			setOptions(t, dir, `a:2:{s:12:"accent_color";s:7:"#111111";s:7:"tagline";O:3:"Foo":1:{s:1:"a";i:1;}}`, `{"accent_color":"#111111","tagline":{"a":1}}`)
		}, []string{"--dry-run"}, optFile, `php: "tagline" holds a PHP object (Foo) the row does not hold: objects are not imported`, "", ""},
		{"the set an object, forced", func(t *testing.T, dir string) {
			setOptions(t, dir, `O:3:"Foo":2:{s:12:"accent_color";s:7:"#111111";s:7:"tagline";s:3:"one";}`, `{"accent_color":"#111111","tagline":"one"}`)
		}, []string{"--force"}, optFile, `php: the set is a PHP object (Foo) where the row is not: objects are not imported`, "", ""},
		{"markup as a color", func(t *testing.T, dir string) {
			setOptions(t, dir, stored, `{"accent_color":"red}</style><script>alert(1)</script>","tagline":"one"}`)
		}, nil, optFile, `Invalid value for option "accent_color": must be a hex color (#rgb, #rrggbb or #rrggbbaa) or "".`, "", ""},
		{"an id the configuration lacks", func(t *testing.T, dir string) {
			setOptions(t, dir, stored, `{"accent_color":"#111111","tagline":"one","nope":1}`)
		}, nil, optFile, `Invalid value for option "nope": is not an option of the theme options configuration.`, "", ""},
		{"1e700", func(t *testing.T, dir string) {
			setOptions(t, dir, stored, `{"accent_color":"#111111","tagline":"one","columns":1e700}`)
		}, []string{"--force"}, optFile, `Invalid value for option "columns": must be a number.`, "", ""},
		{"a value the route takes", func(t *testing.T, dir string) {
			setOptions(t, dir, stored, `{"accent_color":"#222222","tagline":"one","columns":4}`)
		}, nil, "", "", "themeopts themeopts_options: change accent_color\nthemeopts themeopts_options: add columns\nimported: 0 field groups, 1 theme options sets written\n",
			`a:3:{s:12:"accent_color";s:7:"#222222";s:7:"tagline";s:3:"one";s:7:"columns";i:4;}`},
		{"a group file a link to /dev/zero", func(t *testing.T, dir string) {
			os.Symlink("/dev/zero", filepath.Join(dir, "fieldmgr", "x.json"))
		}, []string{"--dry-run"}, "fieldmgr/x.json", "a symbolic link: not followed", "", ""},
		{"a group file a pipe", func(t *testing.T, dir string) {
			syscall.Mkfifo(filepath.Join(dir, "fieldmgr", "x.json"), 0o644)
		}, []string{"--dry-run"}, "fieldmgr/x.json", "a named pipe (FIFO), not a regular file", "", ""},
		{"a group file over 32 MiB", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "fieldmgr", "x.json"), nil, 0o644)
			os.Truncate(filepath.Join(dir, "fieldmgr", "x.json"), 32<<20+1)
		}, []string{"--dry-run"}, "fieldmgr/x.json", "larger than 32 MiB", "", ""},
		{"a config of nested references", func(t *testing.T, dir string) {
			config := phpMade(t, `$a = ["type" => "post"]; for ($i = 0; $i < 60; $i++) { $b = [&$a, &$a]; unset($a); $a = $b; unset($b); }`)
			b, _ := json.Marshal(map[string]string{"key": "nest", "title": "N", "status": "active", "config": config, "exported": ""})
			if len(b) > 1300 {
				t.Fatalf("%d bytes", len(b))
			}
			os.WriteFile(filepath.Join(dir, "fieldmgr", "nest.json"), b, 0o644)
		}, []string{"--dry-run"}, "fieldmgr/nest.json", "config: over 32 MiB with its references expanded", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSite(t)
			dir := t.TempDir()
			if err, out := s.run(t, context.Background(), "export", dir); err != "" {
				t.Fatalf("export: %s\n%s", err, out)
			}
			c.prepare(t, dir)
			err, out := s.run(t, context.Background(), "import", append(c.flags, dir)...)
			want := ""
			if c.want != "" {
				want = filepath.Join(dir, c.file) + ": " + c.want
			}
			if err != want || out != c.wantOut {
				t.Errorf("import:\n got %s\nwant %s\nprinted %q\n   want %q", err, want, out, c.wantOut)
			}
			wantRow := c.wantRow
			if wantRow == "" {
				wantRow = stored
			}
			if got := s.row(t); got != wantRow {
				t.Errorf("the row:\n got %s\nwant %s", got, wantRow)
			}
		})
	}
}

// wpsidecar export writes into DIR only: DIR/fieldmgr or DIR/themeopts a
// link is refused, and the folder it leads to keeps its files.
func TestExport_Links(t *testing.T) {
	for _, sub := range []string{"fieldmgr", "themeopts"} {
		t.Run(sub, func(t *testing.T) {
			s := newSite(t)
			dir, other := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(other, "unrelated.json"), []byte(`{"keep":1}`), 0o644)
			os.Symlink(other, filepath.Join(dir, sub))
			err, out := s.run(t, context.Background(), "export", dir)
			if want := fmt.Sprintf("export: %s is a symbolic link: not followed (it may lead out of %s)", filepath.Join(dir, sub), dir); err != want || out != "" {
				t.Errorf("export: %s\nwant %s\nprinted %q", err, want, out)
			}
			if ents, _ := os.ReadDir(other); len(ents) != 1 || ents[0].Name() != "unrelated.json" {
				t.Errorf("the folder the link leads to holds %v", ents)
			}
		})
	}
}

// A theme options configuration that is a pipe nobody writes to (which
// once held a command until SIGKILL) is refused at once.
func TestRun_RefusesAPipe(t *testing.T) {
	s := newSite(t)
	fifo := filepath.Join(t.TempDir(), "config.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	s.flags[3] = fifo
	err, _ := s.run(t, context.Background(), "import", t.TempDir())
	if want := "theme options configuration: read " + fifo + ": a named pipe (FIFO), not a regular file"; err != want {
		t.Errorf("import: %s\nwant %s", err, want)
	}
}

// wpsidecar history refuses a filter as the list route does, with the
// route's message (history.ParseFilter's) under the flag's name, as a
// usage problem, before it reads anything.
func TestHistory_BadFilter(t *testing.T) {
	s := newSite(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--per-page", "101"}, "--per-page 101: per_page must be between 1 (inclusive) and 100 (inclusive)"},
		{[]string{"--page", "0"}, "--page 0: page must be between 1 (inclusive) and 2147483647 (inclusive)"},
		{[]string{"--namespace", "wp"}, "--namespace wp: namespace is not one of fieldmgr, themeopts."},
		{[]string{"--since", "yesterday"}, "--since yesterday: Invalid date."},
	} {
		err, out := s.run(t, context.Background(), "history", c.args...)
		if want := "history " + c.want; err != want || out != "" {
			t.Errorf("history %v: %q, printed %q\nwant %q", c.args, err, out, want)
		}
	}
}

// lockedWriter is a buffer a command and the test may both touch.
type lockedWriter struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

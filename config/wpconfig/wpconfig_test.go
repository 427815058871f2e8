package wpconfig

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func noEnv(string) (string, bool) { return "", false }

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

const placeholder = "put your unique phrase here"

// keyNames are WordPress's eight keys and salts (config.KeyNames).
var keyNames = []string{
	"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY",
	"AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT",
}

// Debian's wordpress package ships both real files; .ci/run installs it.
const (
	debianSample = "/usr/share/wordpress/wp-config-sample.php"
	debianConfig = "/usr/share/wordpress/wp-config.php"
)

func mustExist(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%v (Debian's wordpress package provides it: scripts/install-deps.sh)", err)
	}
}

// mapFS is a file system of files given by path; a directory exists when a
// file is below it. It records every path read.
type mapFS struct {
	files map[string]string
	read  []string
}

type fileInfo struct {
	name string
	size int64
	dir  bool
}

func (fi fileInfo) Name() string { return fi.name }
func (fi fileInfo) Size() int64  { return fi.size }
func (fi fileInfo) Mode() fs.FileMode {
	return map[bool]fs.FileMode{true: fs.ModeDir | 0o755, false: 0o644}[fi.dir]
}
func (fi fileInfo) ModTime() time.Time { return time.Time{} }
func (fi fileInfo) IsDir() bool        { return fi.dir }
func (fi fileInfo) Sys() any           { return nil }

func (m *mapFS) ReadFile(name string) ([]byte, error) {
	m.read = append(m.read, name)
	if s, ok := m.files[name]; ok {
		if s == "\x00unreadable" {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
		}
		return []byte(s), nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (m *mapFS) Stat(name string) (fs.FileInfo, error) {
	if s, ok := m.files[name]; ok {
		return fileInfo{filepath.Base(name), int64(len(s)), false}, nil
	}
	for p := range m.files {
		if strings.HasPrefix(p, strings.TrimSuffix(name, "/")+"/") {
			return fileInfo{filepath.Base(name), 0, true}, nil
		}
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// read evaluates /site/wp-config.php of files.
func read(t *testing.T, files map[string]string, env map[string]string) *Config {
	t.Helper()
	wc, err := Read("/site/wp-config.php", envOf(env), &mapFS{files: files})
	if err != nil {
		t.Fatal(err)
	}
	return wc
}

func TestReadWPConfig_WordPressSample(t *testing.T) {
	mustExist(t, debianSample)
	wc, err := Read(debianSample, noEnv, OSFS{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"DB_NAME": "database_name_here", "DB_USER": "username_here", "DB_PASSWORD": "password_here",
		"DB_HOST": "localhost", "DB_CHARSET": "utf8", "DB_COLLATE": "", "WP_DEBUG": "",
		"ABSPATH": "/usr/share/wordpress/",
	}
	for _, k := range keyNames {
		want[k] = placeholder
	}
	if !reflect.DeepEqual(wc.Constants, want) {
		t.Errorf("constants = %q, want %q", wc.Constants, want)
	}
	if wc.TablePrefix != "wp_" || !wc.HasPrefix || wc.Origins["DB_HOST"] != debianSample+":32" {
		t.Errorf("table prefix = %q, %v; DB_HOST from %q", wc.TablePrefix, wc.HasPrefix, wc.Origins["DB_HOST"])
	}
	if len(wc.Warnings) != 0 {
		t.Errorf("warnings: %q", wc.Warnings)
	}
}

// Debian's own wp-config.php picks a per-host file by the request's Host:
// that cannot be known before a request, and the message says so.
func TestReadWPConfig_Debian(t *testing.T) {
	mustExist(t, debianConfig)
	wc, err := Read(debianConfig, noEnv, OSFS{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"DB_NAME": "wordpress", "DB_USER": "wordpress", "DB_HOST": "localhost", "ABSPATH": "/usr/share/wordpress/"} {
		if wc.Constants[k] != v {
			t.Errorf("%s = %q, want %q", k, wc.Constants[k], v)
		}
	}
	if wc.TablePrefix != "wp_" {
		t.Errorf("table prefix = %q", wc.TablePrefix)
	}
	if got := strings.Join(wc.Warnings, "\n"); !strings.Contains(got, debianConfig+":27: require_once of a path known only when PHP runs ($_SERVER['HTTP_HOST'] depends on the request)") {
		t.Errorf("warnings = %q, want one about the per-host include", wc.Warnings)
	}
}

func TestReadWPConfig_OfficialImage(t *testing.T) {
	secret := t.TempDir() + "/db_password"
	os.WriteFile(secret, []byte("s3cret from file\r\n"), 0o600)
	env := map[string]string{
		"WORDPRESS_DB_HOST":          "db",
		"WORDPRESS_DB_USER":          "wp",
		"WORDPRESS_DB_PASSWORD_FILE": secret,
		"WORDPRESS_TABLE_PREFIX":     "",
		"WORDPRESS_NONCE_SALT":       "salt from env",
		"WORDPRESS_CONFIG_EXTRA":     "define('WP_ENVIRONMENT_TYPE', 'local');\ndefine( 'MULTISITE', true );\ndefine('DB_NAME', 'ignored: already defined');",
	}
	path, _ := filepath.Abs("testdata/wp-config-docker.php")
	wc, err := Read(path, envOf(env), OSFS{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"DB_NAME":             "wordpress",
		"DB_USER":             "wp",
		"DB_PASSWORD":         "s3cret from file",
		"DB_HOST":             "db:3306",
		"DB_CHARSET":          "utf8",
		"AUTH_KEY":            "0f9a4e6c1d2b3a4f5e6d7c8b9a0f1e2d3c4b5a69",
		"SECURE_AUTH_KEY":     placeholder,
		"NONCE_SALT":          "salt from env",
		"WP_DEBUG":            "",
		"WP_ENVIRONMENT_TYPE": "local",
		"MULTISITE":           "1",
		"ABSPATH":             filepath.Dir(path) + "/",
	}
	for k, v := range want {
		if got := wc.Constants[k]; got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	// An empty variable is a value, as getenv_docker() treats it.
	if !wc.HasPrefix || wc.TablePrefix != "" {
		t.Errorf("table prefix = %q, %v; want empty, set", wc.TablePrefix, wc.HasPrefix)
	}
	for name, origin := range map[string]string{
		"DB_PASSWORD":         path + ":23 (WORDPRESS_DB_PASSWORD_FILE from the environment)",
		"NONCE_SALT":          path + ":35 (WORDPRESS_NONCE_SALT from the environment)",
		"WP_ENVIRONMENT_TYPE": path + ":46",
	} {
		if wc.Origins[name] != origin {
			t.Errorf("%s from %q, want %q", name, wc.Origins[name], origin)
		}
	}
}

// layout is a fixture directory under testdata/layouts.
func layout(t testing.TB, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "layouts", name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyLayout copies a fixture into a temporary directory, with changes:
// file name (relative) → content, "" to remove.
func copyLayout(t testing.TB, name string, changes map[string]string) string {
	t.Helper()
	src, dst := layout(t, name), t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755)
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel, content := range changes {
		p := filepath.Join(dst, rel)
		if content == "" {
			os.Remove(p)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func keysOf(prefix string) map[string]string {
	m := map[string]string{}
	for _, k := range keyNames {
		m[k] = prefix + " " + strings.ToLower(strings.ReplaceAll(k, "_", " "))
	}
	return m
}

func with(m map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

var db = map[string]string{"DB_NAME": "wpsidecar_layouts", "DB_USER": "root", "DB_PASSWORD": "", "DB_HOST": "127.0.0.1:3306"}

// layoutCase is a fixture read as the sidecar reads it: the constants it
// gives, where some of them came from (paths relative to the fixture) and
// what was reported.
type layoutCase struct {
	name    string
	root    string // the fixture, or a copy of it
	path    string // --wp-config, relative to root
	env     map[string]string
	want    map[string]string
	origins map[string]string
	prefix  string
	php     bool // compare with what PHP itself defines
}

func layoutCases(t *testing.T) []layoutCase {
	bedrockURL := copyLayout(t, "bedrock", map[string]string{
		".env.local": "",
		".env":       "DATABASE_URL='mysql://root:@127.0.0.1:3306/wpsidecar_layouts'\nDB_PREFIX=wp_\nWP_ENV=staging\nWP_HOME=http://example.test\nWP_SITEURL=${WP_HOME}/wp\nAUTH_KEY='bedrock auth key'\n",
	})
	bedrockMissingEnv := copyLayout(t, "bedrock", map[string]string{".env.local": "", ".env": ""})
	return []layoutCase{
		{name: "flat", root: layout(t, "flat"), path: "wp-config.php",
			want:    with(with(db, keysOf("flat")), map[string]string{"DB_CHARSET": "utf8mb4", "DB_COLLATE": "", "WP_DEBUG": "", "WP_ENVIRONMENT_TYPE": "local", "ABSPATH": "{root}/"}),
			origins: map[string]string{"DB_HOST": "wp-config.php:9", "$table_prefix": "wp-config.php:22", "ABSPATH": "WordPress's wp-load.php (wp-settings.php is beside wp-config.php)"},
			prefix:  "wp_", php: true},
		{name: "include beside, by __DIR__ and by bare name", root: layout(t, "dir-include"), path: ".",
			want:    with(with(db, keysOf("include")), map[string]string{"DB_CHARSET": "utf8mb4", "DB_COLLATE": "", "WP_ENVIRONMENT_TYPE": "local", "ABSPATH": "{root}/"}),
			origins: map[string]string{"DB_HOST": "wp-config-db.php:5", "NONCE_SALT": "wp-config-keys.php:9", "WP_ENVIRONMENT_TYPE": "wp-config.php:8"},
			prefix:  "wp_", php: true},
		{name: "secrets outside the document root", root: layout(t, "outside"), path: "public/wp-config.php",
			want:    with(with(db, keysOf("secret")), map[string]string{"WP_ENVIRONMENT_TYPE": "local", "ABSPATH": "{root}/public/"}),
			origins: map[string]string{"DB_NAME": "secrets/wp-secrets.php:2"},
			prefix:  "wp_", php: true},
		{name: "guarded includes and the environment", root: layout(t, "guarded"), path: "wp-config.php",
			env:     map[string]string{"LAYOUT_DB_HOST": "127.0.0.1:3306", "LAYOUT_DB_PASSWORD": ""},
			want:    with(with(db, keysOf("guarded")), map[string]string{"WP_LOCAL_DEV": "1", "WP_ENVIRONMENT_TYPE": "local", "ABSPATH": "{root}/"}),
			origins: map[string]string{"DB_NAME": "local-config.php:3", "DB_HOST": "wp-config.php:16 (LAYOUT_DB_HOST from the environment)", "DB_PASSWORD": "wp-config.php:15 (LAYOUT_DB_PASSWORD from the environment)", "DB_USER": "wp-config.php:14"},
			prefix:  "wp_", php: true},
		{name: "a network defined in an included file", root: layout(t, "network"), path: "wp-config.php",
			want: with(with(db, keysOf("network")), map[string]string{"ABSPATH": "{root}/", "WP_ENVIRONMENT_TYPE": "local", "WP_ALLOW_MULTISITE": "1", "MULTISITE": "1", "SUBDOMAIN_INSTALL": "",
				"DOMAIN_CURRENT_SITE": "example.test", "PATH_CURRENT_SITE": "/", "SITE_ID_CURRENT_SITE": "1", "BLOG_ID_CURRENT_SITE": "1"}),
			origins: map[string]string{"MULTISITE": "wp-config-network.php:3"},
			prefix:  "wp_", php: true},
		{name: "Bedrock with DB_*, .env.local and the development file", root: layout(t, "bedrock"), path: ".",
			want: with(with(db, keysOf("bedrock")), map[string]string{
				"WP_ENV": "development", "WP_ENVIRONMENT_TYPE": "local", "WP_HOME": "http://example.test", "WP_SITEURL": "http://example.test/wp",
				"CONTENT_DIR": "/app", "WP_CONTENT_DIR": "{root}/web/app", "WP_CONTENT_URL": "http://example.test/app",
				"DB_CHARSET": "utf8mb4", "DB_COLLATE": "", "AUTOMATIC_UPDATER_DISABLED": "1", "DISABLE_WP_CRON": "", "DISALLOW_FILE_EDIT": "1",
				"DISALLOW_FILE_MODS": "1", "WP_POST_REVISIONS": "1", "WP_DEBUG_DISPLAY": "1", "WP_DEBUG_LOG": "", "SCRIPT_DEBUG": "1",
				"SAVEQUERIES": "1", "WP_DEBUG": "1", "WP_DISABLE_FATAL_ERROR_HANDLER": "1", "DISALLOW_INDEXING": "1", "ABSPATH": "{root}/web/wp/",
			}),
			origins: map[string]string{
				"DB_NAME":             "config/environments/development.php:23 (DEV_DB_NAME in {root}/.env.local:3)",
				"DB_HOST":             "config/application.php:57 (DB_HOST in {root}/.env:7)",
				"WP_ENVIRONMENT_TYPE": "config/environments/development.php:11",
				"WP_ENV":              "config/application.php:37 (WP_ENV in {root}/.env.local:2)",
				"$table_prefix":       "config/application.php:60 (DB_PREFIX in {root}/.env:8)",
			},
			prefix: "wp_"},
		{name: "Bedrock: the process environment wins over .env", root: layout(t, "bedrock"), path: "web/wp-config.php",
			env:     map[string]string{"DB_HOST": "db.internal:3307", "WP_ENV": "production", "DB_PREFIX": "site_"},
			want:    with(with(db, keysOf("bedrock")), map[string]string{"DB_NAME": "wpsidecar_not_this_one", "DB_HOST": "db.internal:3307", "WP_ENV": "production", "WP_DEBUG_DISPLAY": ""}),
			origins: map[string]string{"DB_HOST": "config/application.php:57 (DB_HOST from the environment)"},
			prefix:  "site_"},
		{name: "Bedrock with DATABASE_URL", root: bedrockURL, path: ".",
			want: with(db, map[string]string{"AUTH_KEY": "bedrock auth key", "WP_ENV": "staging", "WP_ENVIRONMENT_TYPE": "staging", "WP_SITEURL": "http://example.test/wp"}),
			origins: map[string]string{
				"DB_HOST": "config/application.php:68 (DATABASE_URL in {root}/.env:1)",
				"DB_USER": "config/application.php:66 (DATABASE_URL in {root}/.env:1)",
			},
			prefix: "wp_"},
		{name: "Bedrock: DATABASE_URL from the environment, with a port and a password", root: bedrockMissingEnv, path: ".",
			env:     map[string]string{"DATABASE_URL": "mysql://wp:p%40ss@db:3307/site?ssl=1"},
			want:    map[string]string{"DB_NAME": "site", "DB_USER": "wp", "DB_PASSWORD": "p%40ss", "DB_HOST": "db:3307", "WP_ENV": "production"},
			origins: map[string]string{"DB_PASSWORD": "config/application.php:67 (DATABASE_URL from the environment)"},
			prefix:  "wp_"},
	}
}

func TestReadWPConfig_Layouts(t *testing.T) {
	for _, c := range layoutCases(t) {
		t.Run(c.name, func(t *testing.T) {
			path, err := Find(filepath.Join(c.root, c.path), OSFS{})
			if err != nil {
				t.Fatal(err)
			}
			wc, err := Read(path, envOf(c.env), OSFS{})
			if err != nil {
				t.Fatal(err)
			}
			rel := func(s string) string { return strings.ReplaceAll(s, c.root+"/", "") }
			for k, v := range c.want {
				v = strings.ReplaceAll(v, "{root}", c.root)
				if got, ok := wc.Constants[k]; !ok || got != v {
					t.Errorf("%s = %q (%v), want %q; unresolved: %q", k, got, ok, v, wc.Unresolved[k])
				}
			}
			for k, v := range c.origins {
				v = strings.ReplaceAll(v, "{root}", c.root)
				if got := rel(wc.Origins[k]); got != rel(v) {
					t.Errorf("%s from %q, want %q", k, got, rel(v))
				}
			}
			if wc.TablePrefix != c.prefix || !wc.HasPrefix {
				t.Errorf("table prefix %q (%v), want %q", wc.TablePrefix, wc.HasPrefix, c.prefix)
			}
			if len(wc.Warnings) != 0 || len(wc.Unresolved) != 0 {
				t.Errorf("warnings %q, unresolved %q", wc.Warnings, wc.Unresolved)
			}
		})
	}
}

// TestReadWPConfig_AsPHP runs each layout PHP can run without packages
// under PHP itself, as wp-load.php would (ABSPATH defined, the working
// directory the site's), and compares every constant it defines.
func TestReadWPConfig_AsPHP(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Fatal("php: not found (Debian's php-cli: scripts/install-deps.sh)")
	}
	const driver = `$dir = $argv[1]; define('ABSPATH', $dir . '/'); chdir($dir); require $dir . '/wp-config.php';
$out = [];
foreach (get_defined_constants(true)['user'] as $k => $v) { $out[$k] = is_bool($v) ? ($v ? '1' : '') : (string) $v; }
echo json_encode(['constants' => $out, 'prefix' => $table_prefix]);`
	for _, c := range layoutCases(t) {
		if !c.php {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			path, _ := Find(filepath.Join(c.root, c.path), OSFS{})
			cmd := exec.Command(php, "-d", "variables_order=EGPCS", "-r", driver, filepath.Dir(path))
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			for k, v := range c.env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("php: %v\n%s", err, out)
			}
			var got struct {
				Constants map[string]string
				Prefix    string
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			wc, err := Read(path, envOf(c.env), OSFS{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(wc.Constants, got.Constants) || wc.TablePrefix != got.Prefix {
				t.Errorf("sidecar read %q %q\n PHP defined %q %q", wc.Constants, wc.TablePrefix, got.Constants, got.Prefix)
			}
		})
	}
}

// TestReadWPConfig_Includes: what cannot be followed is named with its
// line and why; cycles and depth end.
func TestReadWPConfig_Includes(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		env      map[string]string
		want     map[string]string
		warnings []string
	}{
		{"a missing file",
			map[string]string{"/site/wp-config.php": "<?php\ndefine('A', 'a');\nrequire_once __DIR__ . '/db.php';\ninclude 'other.php';"},
			nil, map[string]string{"A": "a"},
			[]string{"/site/wp-config.php:3: require_once of /site/db.php: no such file (WordPress would stop with a fatal error); settings defined there are not seen",
				"/site/wp-config.php:4: include of /site/other.php: no such file (WordPress would warn and go on); settings defined there are not seen"}},
		{"an unreadable file",
			map[string]string{"/site/wp-config.php": "<?php\n\nrequire '/etc/secret.php';", "/etc/secret.php": "\x00unreadable"},
			nil, map[string]string{},
			[]string{"/site/wp-config.php:3: require of /etc/secret.php: permission denied (the sidecar's user cannot read it); settings defined there are not seen"}},
		{"a path known only at run time",
			map[string]string{"/site/wp-config.php": "<?php\nrequire '/etc/wp/' . $_SERVER['HTTP_HOST'] . '.php';\nrequire get_include_path() . 'x.php';"},
			nil, map[string]string{},
			[]string{"/site/wp-config.php:2: require of a path known only when PHP runs ($_SERVER['HTTP_HOST'] depends on the request); settings defined there are not seen",
				"/site/wp-config.php:3: require of a path known only when PHP runs (get_include_path() is not evaluated); settings defined there are not seen"}},
		{"a cycle",
			map[string]string{"/site/wp-config.php": "<?php require 'a.php'; define('W', 1);", "/site/a.php": "<?php define('A', 1);\nrequire 'b.php';", "/site/b.php": "<?php\n\nrequire __DIR__ . '/a.php'; define('B', 2);"},
			nil, map[string]string{"A": "1", "B": "2", "W": "1"},
			[]string{"/site/b.php:3: require of /site/a.php: an include cycle (/site/wp-config.php → /site/a.php → /site/b.php → /site/a.php); not followed again"}},
		{"_once includes a file once",
			map[string]string{"/site/wp-config.php": "<?php require_once 'a.php'; require_once './a.php'; include_once '/site/a.php';", "/site/a.php": "<?php $table_prefix = ($table_prefix ?? '') . 'x';"},
			nil, map[string]string{}, nil},
		{"dirname levels, ../ and the including file's directory",
			map[string]string{"/site/wp-config.php": "<?php require dirname(__DIR__, 2) . '/srv/conf/main.php';", "/srv/conf/main.php": "<?php require 'db.php'; require '../keys.php';",
				"/srv/conf/db.php": "<?php define('DB_NAME', 'beside the includer');", "/site/../keys.php": "", "/keys.php": "<?php define('K', 'from the working directory\\'s parent');"},
			nil, map[string]string{"DB_NAME": "beside the includer", "K": "from the working directory's parent"}, nil},
		{"a guard that is false, a guard known only at run time",
			map[string]string{"/site/wp-config.php": "<?php\nif (file_exists('/site/none.php')) { require '/site/none.php'; }\nif ($_SERVER['HTTP_HOST'] === 'a.test') {\n require '/site/a.php';\n}\ndefine('AFTER', 'x');", "/site/a.php": "<?php define('DB_NAME', 'a');"},
			nil, map[string]string{"AFTER": "x"}, nil},
		{"a configuration that stops PHP",
			map[string]string{"/site/wp-config.php": "<?php define('A', 1);\nexit;\ndefine('B', 2);"},
			nil, map[string]string{"A": "1"},
			[]string{"/site/wp-config.php:2: exit: PHP stops here, before WordPress runs"}},
		{"eval of a known string, as the official image does",
			map[string]string{"/site/wp-config.php": "<?php\n\nif ($extra = getenv('EXTRA')) { eval($extra); }"},
			map[string]string{"EXTRA": "define('X', 'y');"}, map[string]string{"X": "y"}, nil},
		{"a URL is not fetched",
			map[string]string{"/site/wp-config.php": "<?php include 'http://config.example/wp.php';"},
			nil, map[string]string{}, []string{`/site/wp-config.php:1: include of "http://config.example/wp.php": not a local file; settings defined there are not seen`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wc := read(t, tt.files, tt.env)
			if !reflect.DeepEqual(wc.Constants, tt.want) {
				t.Errorf("constants = %q, want %q (unresolved %q)", wc.Constants, tt.want, wc.Unresolved)
			}
			if !reflect.DeepEqual(wc.Warnings, tt.warnings) {
				t.Errorf("warnings:\n got %q\nwant %q", wc.Warnings, tt.warnings)
			}
		})
	}
	// _once: a.php ran once.
	if wc := read(t, tests[4].files, nil); wc.TablePrefix != "x" {
		t.Errorf("_once: prefix %q", wc.TablePrefix)
	}
	// A guard known only when PHP runs makes what it guards unknown, and says why.
	wc := read(t, tests[6].files, nil)
	if why := wc.Unresolved["DB_NAME"]; why != "/site/a.php:1: defined under a condition known only when PHP runs (/site/wp-config.php:3: $_SERVER['HTTP_HOST'] depends on the request)" {
		t.Errorf("DB_NAME unresolved: %q", why)
	}
}

func TestReadWPConfig_Bounds(t *testing.T) {
	deep := map[string]string{"/site/wp-config.php": "<?php require 'f0.php';"}
	for i := 0; i < 40; i++ {
		deep["/site/f"+strconv.Itoa(i)+".php"] = "<?php define('D" + strconv.Itoa(i) + "', 1); require 'f" + strconv.Itoa(i+1) + ".php';"
	}
	wc := read(t, deep, nil)
	if len(wc.Constants) != maxIncludeDepth-1 || !strings.Contains(strings.Join(wc.Warnings, "\n"), "more than 16 files deep") {
		t.Errorf("depth: %d constants, warnings %q", len(wc.Constants), wc.Warnings)
	}
	wide := map[string]string{"/site/wp-config.php": "<?php for(;;) {}"}
	var b strings.Builder
	b.WriteString("<?php\n")
	for i := 0; i < 100; i++ {
		b.WriteString("include 'w" + strconv.Itoa(i) + ".php';\n")
		wide["/site/w"+strconv.Itoa(i)+".php"] = "<?php"
	}
	wide["/site/wp-config.php"] = b.String()
	if wc := read(t, wide, nil); len(wc.Files) != MaxFiles || !strings.Contains(strings.Join(wc.Warnings, "\n"), "more than 64 files read") {
		t.Errorf("files: %d read, warnings %q", len(wc.Files), wc.Warnings)
	}
	// Doubling a string 40 times is work a configuration never asks for.
	src := "<?php $s = 'x';\n" + strings.Repeat("$s = $s . $s;\n", 40) + "define('S', $s); define('AFTER', 1);"
	wc = read(t, map[string]string{"/site/wp-config.php": src}, nil)
	if _, ok := wc.Constants["S"]; ok {
		t.Error("a string over the bound was kept")
	}
}

func TestReadWPConfig_Syntax(t *testing.T) {
	tests := []struct {
		name       string
		src        string
		want       map[string]string
		unresolved []string
	}{
		{"double-quoted escapes", `<?php define("A", "x\ty\\z\$\x41\101\u{e9}"); define('B', 'it\'s \n raw');`,
			map[string]string{"A": "x\ty\\z$AAé", "B": `it's \n raw`}, nil},
		{"comments hide defines", "<?php\n// define('A', '1');\n# define('B', '1');\n/* define('C', '1'); */\ndefine('D', 'd');",
			map[string]string{"D": "d"}, nil},
		{"first define wins", `<?php if (!defined('A')) define('A', 'one'); define('A', 'two');`,
			map[string]string{"A": "one"}, nil},
		{"html outside php", `<html><?php define('A', 'a'); ?> define('B', 'b'); <?php define('C', 'c');`,
			map[string]string{"A": "a", "C": "c"}, nil},
		{"booleans and numbers", `<?php define('T', true); define('F', FALSE); define('N', 42); define('X', !0);`,
			map[string]string{"T": "1", "F": "", "N": "42", "X": "1"}, nil},
		{"constants and concatenation", `<?php define('H', 'db'); define('P', '3307'); define('DB_HOST', H . ':' . P);`,
			map[string]string{"H": "db", "P": "3307", "DB_HOST": "db:3307"}, nil},
		{"interpolation", `<?php $h = 'db'; define('A', "{$h}:${h}:$h");`,
			map[string]string{"A": "db:db:db"}, nil},
		{"heredoc and nowdoc", "<?php $n = 'x';\ndefine('A', <<<EOT\n  a $n\n  b\n  EOT);\ndefine('B', <<<'EOT'\n$n\nEOT);",
			map[string]string{"A": "a x\nb", "B": "$n"}, nil},
		{"functions it does not run", `<?php define('A', base64_decode('eA==')); define('B', 'b');`,
			map[string]string{"B": "b"}, []string{"A"}},
		{"getenv", `<?php define('A', getenv('NOPE')); define('B', getenv_docker('NOPE', 'dflt')); define('C', $_ENV['NOPE'] ?? 'c'); define('D', getenv('NOPE') ?: 'd');`,
			map[string]string{"A": "", "B": "dflt", "C": "c", "D": "d"}, nil},
		{"case-insensitive define", `<?php DEFINE('A', 'a');`, map[string]string{"A": "a"}, nil},
		{"a request value", `<?php define('WP_HOME', 'https://' . $_SERVER['HTTP_HOST']);`, map[string]string{}, []string{"WP_HOME"}},
		{"a function the file declares is not run", `<?php function f() { define('X', 1); } define('Y', function_exists('f'));`, map[string]string{"Y": "1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wc := read(t, map[string]string{"/site/wp-config.php": tt.src}, nil)
			if !reflect.DeepEqual(wc.Constants, tt.want) {
				t.Errorf("constants = %q, want %q", wc.Constants, tt.want)
			}
			var unresolved []string
			for k := range wc.Unresolved {
				unresolved = append(unresolved, k)
			}
			sort.Strings(unresolved)
			if !reflect.DeepEqual(unresolved, tt.unresolved) {
				t.Errorf("unresolved %q, want %q", wc.Unresolved, tt.unresolved)
			}
		})
	}
}

func TestReadWPConfig_Errors(t *testing.T) {
	for _, src := range []string{`<?php define('A', 'unterminated`, "<?php /* open comment"} {
		_, err := Read("/site/wp-config.php", noEnv, &mapFS{files: map[string]string{"/site/wp-config.php": src}})
		if err == nil {
			t.Errorf("%q: no error", src)
		}
	}
	_, err := Read("/site/wp-config.php", noEnv, &mapFS{files: map[string]string{"/site/wp-config.php": "\x00unreadable"}})
	if err == nil || err.Error() != "permission denied (the sidecar's user cannot read it)" {
		t.Errorf("unreadable: %v", err)
	}
	if _, err := Find(t.TempDir(), OSFS{}); err == nil || !strings.Contains(err.Error(), "is a directory without wp-config.php (nor web/wp-config.php, as in a Bedrock project)") {
		t.Errorf("empty directory: %v", err)
	}
	if _, err := Find("/nonexistent/wp-config.php", OSFS{}); err == nil || err.Error() != "no such file" {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzReadWPConfig: any wp-config.php (and what it includes) is read
// without a panic, touching no file its expressions do not name and within
// the bounds.
func FuzzReadWPConfig(f *testing.F) {
	f.Add(`<?php define('DB_HOST', getenv_docker('X', 'y') . ':' . '1'); $table_prefix = 'wp_';`, `<?php define('A', 1);`)
	f.Add("<?php define(\"A\", \"\\u{1F600}\\x4\\0\"); ?><?php /* */ // x\n# y", "")
	f.Add(`<?php require __DIR__ . '/inc.php'; require_once 'inc.php'; if (file_exists('inc.php')) include dirname(__FILE__) . '/inc.php';`, `<?php require 'wp-config.php'; define('X', "{$a}");`)
	f.Add(`<?php $d = Dotenv\Dotenv::createImmutable(__DIR__); $d->load(); Config::define('A', env('A') ?: 'x'); Config::apply();`, "A=1\nB=\"${A}2\"")
	f.Add(`<?php $x = (object) parse_url(getenv('U')); define('H', isset($x->port) ? "{$x->host}:{$x->port}" : $x->host);`, "")
	for _, p := range []string{debianSample, "testdata/wp-config-docker.php", "testdata/layouts/bedrock/config/application.php"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), "")
		}
	}
	// Deep nesting, to the bounds and past them: parentheses, operator
	// chains (which nest to the left, or to the right for ??), eval()s of
	// chains in eval()s, arrays in arrays, blocks in blocks, strings in
	// strings, and a .env that refers to itself.
	deepEval := "return 1" + strings.Repeat("|1", 1500) + ";"
	for range 3 {
		deepEval = "return eval(" + phpQuote(deepEval) + ")" + strings.Repeat("|1", 1500) + ";"
	}
	var heredocs strings.Builder
	for k := range 40 {
		fmt.Fprintf(&heredocs, "<<<L%d\n{$x[", k)
	}
	for k := 39; k >= 0; k-- {
		fmt.Fprintf(&heredocs, "]}\nL%d", k)
	}
	for _, main := range []string{
		"<?php define('A', " + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300) + ");",
		"<?php define('A', eval(" + phpQuote(deepEval) + "));",
		"<?php define('A', " + strings.Repeat("null ?? ", 2000) + "1); define('B', 'x'" + strings.Repeat(" . 'x'", 2000) + ");",
		"<?php $a = " + strings.Repeat("[", 150) + strings.Repeat("]", 150) + "; define('A', $a == $a);",
		"<?php $a = 1;\n" + strings.Repeat("$a = [$a, $a];\n", 80) + "define('A', in_array(1, $a));",
		"<?php " + strings.Repeat("if (true) { ", 250) + "define('A', 1);" + strings.Repeat(" }", 250),
		"<?php $x = []; define('A', " + heredocs.String() + ");",
		"<?php $c = 'eval($c);'; eval($c); define('A', 1);",
		"<?php $s = 'x';\n" + strings.Repeat("$s = $s . $s;\n", 22) + strings.Repeat("define('U' . __LINE__, strtoupper($s));\n", 100),
	} {
		f.Add(main, `<?php require 'inc.php'; eval('require "inc.php";');`)
	}
	f.Add(`<?php $d = Dotenv\Dotenv::createMutable(__DIR__); $d->load(); define('A', env('C'));`,
		"A=xxxxxxxx\nB=\"${A}${A}${A}${A}${A}${A}${A}${A}\"\nC=\"${B}${B}${B}${B}${B}${B}${B}${B}\"\nA=\"${C}${C}${C}${C}${C}${C}\"\nC=\"${A}${A}${A}${A}\"")
	f.Fuzz(func(t *testing.T, main, inc string) {
		fsys := &mapFS{files: map[string]string{"/site/wp-config.php": main, "/site/inc.php": inc, "/site/.env": inc, "/site/wp-settings.php": ""}}
		wc, err := Read("/site/wp-config.php", func(k string) (string, bool) { return k, len(k)%2 == 0 }, fsys)
		if err != nil {
			return
		}
		named := map[string]bool{}
		for _, p := range wc.Files {
			named[p] = true
		}
		for _, p := range fsys.read {
			if !named[p] {
				t.Fatalf("read %s, not among the files it names: %q", p, wc.Files)
			}
		}
		if len(fsys.read) > MaxFiles+1 {
			t.Fatalf("%d files read", len(fsys.read))
		}
	})
}

func FuzzParseDotenv(f *testing.F) {
	for _, s := range []string{"A=1\nB='two'\nC=\"th\\nree ${A}\"\n", "export A=1 # c\n", "A=\"multi\nline\"", "A=b c", "#x\n\nA", `A="\`,
		// References in references, and quotes over many lines.
		"A=\"" + strings.Repeat("${", 2000) + "A" + strings.Repeat("}", 2000) + "\"",
		"A=\"" + strings.Repeat("\\\"${A}\n", 2000) + "\"\nB='" + strings.Repeat("\n", 2000) + "'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		entries, err := parseDotenv([]byte(src))
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.line < 1 || e.name == "" {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}

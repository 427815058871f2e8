package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func noEnv(string) (string, bool) { return "", false }

const placeholder = "put your unique phrase here"

// Debian's wordpress package ships both real files; .ci/run installs it.
const (
	debianSample = "/usr/share/wordpress/wp-config-sample.php"
	debianConfig = "/usr/share/wordpress/wp-config.php"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (Debian's wordpress package provides it: scripts/install-deps.sh)", err)
	}
	return string(b)
}

func TestParseWPConfig_WordPressSample(t *testing.T) {
	wc, err := ParseWPConfig(readFile(t, debianSample), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"DB_NAME": "database_name_here", "DB_USER": "username_here", "DB_PASSWORD": "password_here",
		"DB_HOST": "localhost", "DB_CHARSET": "utf8", "DB_COLLATE": "", "WP_DEBUG": "",
	}
	for _, k := range KeyNames {
		want[k] = placeholder
	}
	for k, v := range want {
		if got, ok := wc.Constants[k]; !ok || got != v {
			t.Errorf("%s = %q (%v), want %q", k, got, ok, v)
		}
	}
	if wc.TablePrefix != "wp_" || !wc.HasPrefix {
		t.Errorf("table prefix = %q, %v", wc.TablePrefix, wc.HasPrefix)
	}
	if len(wc.Warnings) != 0 {
		t.Errorf("warnings: %q", wc.Warnings)
	}
}

func TestParseWPConfig_Debian(t *testing.T) {
	wc, err := ParseWPConfig(readFile(t, debianConfig), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"DB_NAME": "wordpress", "DB_USER": "wordpress", "DB_HOST": "localhost"} {
		if wc.Constants[k] != v {
			t.Errorf("%s = %q, want %q", k, wc.Constants[k], v)
		}
	}
	if wc.TablePrefix != "wp_" {
		t.Errorf("table prefix = %q", wc.TablePrefix)
	}
	// The per-host file it includes holds the real settings: say so.
	if len(wc.Warnings) == 0 || !strings.Contains(strings.Join(wc.Warnings, "\n"), "require_once of another file is not followed") {
		t.Errorf("warnings = %q, want one about the per-host include", wc.Warnings)
	}
}

func TestParseWPConfig_OfficialImage(t *testing.T) {
	src := readFile(t, "testdata/wp-config-docker.php")
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
	lookup := func(k string) (string, bool) {
		if f, ok := env[k+"_FILE"]; ok {
			b, _ := os.ReadFile(f)
			return strings.TrimRight(string(b), "\r\n"), true
		}
		v, ok := env[k]
		return v, ok
	}
	wc, err := ParseWPConfig(src, lookup)
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
	if _, ok := wc.Unresolved["ABSPATH"]; !ok {
		t.Errorf("ABSPATH (built from __DIR__) should be unresolved: %v", wc.Unresolved)
	}
}

func TestParseWPConfig_Syntax(t *testing.T) {
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
		{"interpolation is not evaluated", `<?php define('A', "pre{$x}"); define('A', 'later');`,
			map[string]string{}, []string{"A"}},
		{"function calls are not evaluated", `<?php define('A', base64_decode('eA==')); define('B', 'b');`,
			map[string]string{"B": "b"}, []string{"A"}},
		{"getenv", `<?php define('A', getenv('NOPE')); define('B', getenv_docker('NOPE', 'dflt'));`,
			map[string]string{"A": "", "B": "dflt"}, nil},
		{"case-insensitive define", `<?php DEFINE('A', 'a');`, map[string]string{"A": "a"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wc, err := ParseWPConfig(tt.src, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(wc.Constants, tt.want) {
				t.Errorf("constants = %q, want %q", wc.Constants, tt.want)
			}
			for _, u := range tt.unresolved {
				if _, ok := wc.Unresolved[u]; !ok {
					t.Errorf("%s not reported unresolved: %v", u, wc.Unresolved)
				}
			}
		})
	}
}

func TestParseWPConfig_Errors(t *testing.T) {
	for _, src := range []string{`<?php define('A', 'unterminated`, "<?php /* open comment"} {
		if _, err := ParseWPConfig(src, noEnv); err == nil {
			t.Errorf("ParseWPConfig(%q): no error", src)
		}
	}
}

func FuzzParseWPConfig(f *testing.F) {
	f.Add(`<?php define('DB_HOST', getenv_docker('X', 'y') . ':' . '1'); $table_prefix = 'wp_';`)
	f.Add("<?php define(\"A\", \"\\u{1F600}\\x4\\0\"); ?><?php /* */ // x\n# y")
	f.Add(`<?php define(`)
	f.Add(`<?php define('A', !!!(('x'))`)
	if b, err := os.ReadFile(debianSample); err == nil {
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, src string) {
		ParseWPConfig(src, func(k string) (string, bool) { return k, len(k)%2 == 0 })
	})
}

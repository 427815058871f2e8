package config

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/config/wpconfig"
)

// base is the least a valid configuration needs besides the upstream.
var base = []string{"WPSIDECAR_DB_USER=wp"}

func load(t *testing.T, args []string, env ...string) (*Config, error) {
	t.Helper()
	cfg, _, err := Load(args, append(append([]string{}, base...), env...), io.Discard)
	return cfg, err
}

func mustLoad(t *testing.T, args []string, env ...string) *Config {
	t.Helper()
	cfg, err := load(t, args, env...)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const placeholder = "put your unique phrase here"

// Debian's wordpress package ships both real files; .ci/run installs it.
const (
	debianSample = "/usr/share/wordpress/wp-config-sample.php"
	debianConfig = "/usr/share/wordpress/wp-config.php"
)

func TestLoad_Defaults(t *testing.T) {
	cfg := mustLoad(t, []string{"--upstream", "http://127.0.0.1:8081"})
	checks := []struct {
		name      string
		got, want any
	}{
		{"listen", cfg.Listen, DefaultListen},
		{"admin-listen", cfg.AdminListen, DefaultAdminListen},
		{"upstream", cfg.Upstream.String(), "http://127.0.0.1:8081"},
		{"upstream-timeout", cfg.UpstreamTimeout, DefaultUpstreamTimeout},
		{"read-header-timeout", cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout},
		{"body-timeout", cfg.BodyTimeout, DefaultBodyTimeout},
		{"idle-timeout", cfg.IdleTimeout, DefaultIdleTimeout},
		{"max-header-bytes", cfg.MaxHeaderBytes, DefaultMaxHeaderBytes},
		{"db-host", cfg.DB.Host, "localhost"},
		{"db-name", cfg.DB.Name, "wordpress"},
		{"db-charset", cfg.DB.Charset, "utf8mb4"},
		{"db-collate", cfg.DB.Collate, "utf8mb4_unicode_520_ci"},
		{"table-prefix", cfg.TablePrefix, "wp_"},
		{"fieldmgr-table", cfg.FieldmgrTable, "wp_fieldmgr_groups"},
		{"environment-type", cfg.EnvironmentType, "production"},
		{"log", cfg.LogLevel + "/" + cfg.LogFormat, "info/json"},
		{"keys", len(cfg.Keys), 0},
		{"settings-refresh", cfg.SettingsRefresh, 2 * time.Second},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestLoad_Precedence: flag > WPSIDECAR_* > WORDPRESS_* > wp-config.php > default.
func TestLoad_Precedence(t *testing.T) {
	dir := t.TempDir()
	wp := filepath.Join(dir, "wp-config.php")
	os.WriteFile(wp, []byte(`<?php define('DB_HOST', 'from-wpconfig'); define('DB_NAME', 'wpconfig_db'); define('AUTH_KEY', 'k-wpconfig'); $table_prefix = 'wpc_';`), 0o644)
	up := "--upstream=http://php"
	tests := []struct {
		name string
		args []string
		env  []string
		host string
		src  string
	}{
		{"default", []string{up}, nil, "localhost", SourceDefault},
		{"wp-config", []string{up, "--wp-config", wp}, nil, "from-wpconfig", wp + ":1"},
		{"WORDPRESS_ beats wp-config", []string{up, "--wp-config", wp}, []string{"WORDPRESS_DB_HOST=from-wordpress-env"}, "from-wordpress-env", "WORDPRESS_DB_HOST"},
		{"WPSIDECAR_ beats WORDPRESS_", []string{up, "--wp-config", wp}, []string{"WORDPRESS_DB_HOST=from-wordpress-env", "WPSIDECAR_DB_HOST=from-sidecar-env"}, "from-sidecar-env", "WPSIDECAR_DB_HOST"},
		{"flag beats all", []string{up, "--wp-config", wp, "--db-host", "from-flag"}, []string{"WORDPRESS_DB_HOST=x", "WPSIDECAR_DB_HOST=y"}, "from-flag", SourceFlag},
		{"wp-config path from env", []string{up}, []string{"WPSIDECAR_WP_CONFIG=" + wp}, "from-wpconfig", wp + ":1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustLoad(t, tt.args, tt.env...)
			if cfg.DB.Host != tt.host || cfg.Source("db-host") != tt.src {
				t.Errorf("db-host = %q from %q, want %q from %q", cfg.DB.Host, cfg.Source("db-host"), tt.host, tt.src)
			}
		})
	}
	cfg := mustLoad(t, []string{up, "--wp-config", wp})
	if cfg.TablePrefix != "wpc_" || cfg.FieldmgrTable != "wpc_fieldmgr_groups" || cfg.DB.Name != "wpconfig_db" || cfg.Keys["AUTH_KEY"] != "k-wpconfig" {
		t.Errorf("from wp-config: prefix %q table %q db %q key %q", cfg.TablePrefix, cfg.FieldmgrTable, cfg.DB.Name, cfg.Keys["AUTH_KEY"])
	}
	if _, ok := cfg.Keys["NONCE_SALT"]; ok {
		t.Error("a key that no source sets must stay absent (WordPress then falls back to the database)")
	}
}

func TestLoad_FileSecrets(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("hunter2\n"), 0o600)
	key := filepath.Join(dir, "key")
	os.WriteFile(key, []byte("key-from-secret\r\n"), 0o600)
	cfg := mustLoad(t, []string{"--upstream=http://php"},
		"WORDPRESS_DB_PASSWORD_FILE="+pw, "WORDPRESS_DB_PASSWORD=ignored", "WORDPRESS_AUTH_KEY_FILE="+key, "WPSIDECAR_DB_NAME_FILE="+pw)
	if cfg.DB.Password != "hunter2" || cfg.Keys["AUTH_KEY"] != "key-from-secret" || cfg.DB.Name != "hunter2" {
		t.Errorf("password %q, key %q, name %q", cfg.DB.Password, cfg.Keys["AUTH_KEY"], cfg.DB.Name)
	}
	_, err := load(t, []string{"--upstream=http://php"}, "WORDPRESS_DB_PASSWORD_FILE="+filepath.Join(dir, "missing"))
	if err == nil || !strings.Contains(err.Error(), "WORDPRESS_DB_PASSWORD_FILE") {
		t.Errorf("missing secret file: %v", err)
	}
}

func TestLoad_OfficialImageVariables(t *testing.T) {
	env := []string{"WORDPRESS_DB_HOST=db:3307", "WORDPRESS_DB_USER=wpuser", "WORDPRESS_DB_PASSWORD=pw",
		"WORDPRESS_DB_NAME=site", "WORDPRESS_TABLE_PREFIX=blog_", "WORDPRESS_DB_CHARSET=utf8"}
	for _, k := range KeyNames {
		env = append(env, "WORDPRESS_"+k+"="+strings.ToLower(k))
	}
	cfg, _, err := Load([]string{"--upstream=http://wordpress"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DB.Host != "db:3307" || cfg.DB.User != "wpuser" || cfg.DB.Password != "pw" || cfg.DB.Name != "site" || cfg.TablePrefix != "blog_" {
		t.Errorf("db %+v prefix %q", cfg.DB, cfg.TablePrefix)
	}
	if cfg.DB.Charset != "utf8mb4" {
		t.Errorf("utf8 should be read as utf8mb4, got %q", cfg.DB.Charset)
	}
	for _, k := range KeyNames {
		if cfg.Keys[k] != strings.ToLower(k) {
			t.Errorf("%s = %q", k, cfg.Keys[k])
		}
	}
	if n, a := cfg.DB.Address(); n != "tcp" || a != "db:3307" {
		t.Errorf("address = %s %s", n, a)
	}
}

func TestLoad_WPConfigFiles(t *testing.T) {
	env := []string{"WORDPRESS_DB_HOST=db", "WORDPRESS_DB_PASSWORD=pw", "WORDPRESS_CONFIG_EXTRA=define('WP_HOME', 'https://example.org/');"}
	cfg := mustLoad(t, []string{"--upstream=http://php", "--wp-config", "wpconfig/testdata/wp-config-docker.php"}, env...)
	if cfg.DB.Host != "db" || cfg.Source("db-host") != "WORDPRESS_DB_HOST" {
		t.Errorf("db-host = %q from %s", cfg.DB.Host, cfg.Source("db-host"))
	}
	if cfg.DB.User != "wp" || cfg.Source("db-user") != "WPSIDECAR_DB_USER" {
		t.Errorf("db-user = %q from %s", cfg.DB.User, cfg.Source("db-user"))
	}
	if cfg.Keys["AUTH_KEY"] != "0f9a4e6c1d2b3a4f5e6d7c8b9a0f1e2d3c4b5a69" || cfg.Keys["NONCE_SALT"] != placeholder {
		t.Errorf("keys %q", cfg.Keys)
	}
	if cfg.HomeURL != "https://example.org/" {
		t.Errorf("WP_HOME from WORDPRESS_CONFIG_EXTRA = %q", cfg.HomeURL)
	}

	cfg = mustLoad(t, []string{"--upstream=http://php", "--wp-config", debianSample})
	if cfg.DB.Name != "database_name_here" || cfg.DB.Charset != "utf8mb4" || cfg.Keys["AUTH_KEY"] != placeholder {
		t.Errorf("sample: %+v %q", cfg.DB, cfg.Keys)
	}
	cfg = mustLoad(t, []string{"--upstream=http://php", "--wp-config", debianConfig})
	if len(cfg.Warnings) == 0 {
		t.Error("Debian's dispatcher: no warning about the per-host file it includes")
	}
}

func TestLoad_EnvironmentType(t *testing.T) {
	cfg := mustLoad(t, []string{"--upstream=http://php"}, "WP_ENVIRONMENT_TYPE=local")
	if cfg.EnvironmentType != "local" {
		t.Errorf("environment type = %q", cfg.EnvironmentType)
	}
	cfg = mustLoad(t, []string{"--upstream=http://php", "--environment-type=qa"})
	if cfg.EnvironmentType != "production" || len(cfg.Warnings) != 1 {
		t.Errorf("unknown type: %q, warnings %q; WordPress falls back to production", cfg.EnvironmentType, cfg.Warnings)
	}
}

func TestLoad_TrustedProxies(t *testing.T) {
	cfg := mustLoad(t, []string{"--upstream=http://php", "--trusted-proxies", "10.0.0.0/8, 192.168.1.7,::1, 172.16.5.4/12"})
	want := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"),
		netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("172.16.0.0/12"),
	}
	if len(cfg.TrustedProxies) != len(want) {
		t.Fatalf("got %v", cfg.TrustedProxies)
	}
	for i := range want {
		if cfg.TrustedProxies[i] != want[i] {
			t.Errorf("[%d] = %v, want %v", i, cfg.TrustedProxies[i], want[i])
		}
	}
}

// TestLoad_EveryProblemAtOnce: each bad value is named, and all are
// reported together.
func TestLoad_EveryProblemAtOnce(t *testing.T) {
	args := []string{
		"--upstream", "ftp://x", "--listen", "nohost", "--admin-listen", "127.0.0.1:99999",
		"--trusted-proxies", "10.0.0.0/8,not-a-net", "--upstream-timeout", "soon", "--body-timeout", "-1s",
		"--max-header-bytes", "12", "--table-prefix", "wp-", "--fieldmgr-table", "a;b",
		"--db-charset", "utf-8!", "--db-collate", "x y", "--log-level", "loud", "--log-format", "xml",
		"--tls-cert", "c.pem", "--db-max-open", "0", "--multisite", "--db-host", ":",
		"--webhook-urls", "https://cdn.example/purge, ftp://x,nohost", "--change-interval", "0s",
		"--serve-from-feed", "--change-feed", "poll", "--max-staleness", "0",
	}
	_, err := load(t, args, "WPSIDECAR_NOT_A_SETTING=1", "WPSIDECAR_DB_USER=")
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *Error", err)
	}
	want := []string{
		`upstream: "ftp://x" from flag: not an http:// or https:// URL`,
		`listen: "nohost" is not host:port`,
		`admin-listen: "127.0.0.1:99999" has no valid port`,
		`trusted-proxies: "10.0.0.0/8,not-a-net" from flag: not a CIDR or IP: "not-a-net"`,
		`upstream-timeout: "soon" from flag: not a duration`,
		`body-timeout: "-1s" from flag: must be positive`,
		`max-header-bytes: "12" from flag: must be a whole number of at least 4096`,
		`table-prefix: "wp-" may hold only letters, digits and underscores`,
		`fieldmgr-table: "a;b" must be 1-64 letters, digits and underscores`,
		`db-charset: "utf-8!" is not a character set name`,
		`db-collate: "x y" is not a collation name`,
		`log-level: "loud" is not one of debug, info, warn, error`,
		`log-format: "xml" is not json or console`,
		`tls-cert, tls-key: give both or neither`,
		`db-max-open: "0" from flag: must be a whole number of at least 1`,
		`db-host: ":" names no host or socket`,
		`db-user: required; usually read from the site's wp-config.php (--wp-config PATH) or the official image's WORDPRESS_DB_* variables`,
		`webhook-urls: "https://cdn.example/purge, ftp://x, nohost" from flag: not http(s) URLs: ftp://x, nohost`,
		`change-interval: "0s" from flag: must be positive`,
		`webhook-secret: required when webhook-urls is set (receivers verify the signature with it)`,
		`max-staleness: "0" from flag: must be positive`,
		`serve-from-feed: needs change-feed auto or binlog (only the binlog feed tells of every change as it commits)`,
		`WPSIDECAR_NOT_A_SETTING: unknown setting`,
	}
	got := strings.Join(ce.Problems, "\n")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("missing problem %q", w)
		}
	}
	if len(ce.Problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(ce.Problems), len(want), got)
	}
}

func TestLoad_UpstreamRequired(t *testing.T) {
	_, err := load(t, nil)
	if err == nil || !strings.Contains(err.Error(), "upstream: required") {
		t.Errorf("err = %v", err)
	}
	_, err = load(t, []string{"--upstream", "http://php/?a=b"})
	if err == nil || !strings.Contains(err.Error(), "must not carry a query") {
		t.Errorf("err = %v", err)
	}
}

func TestLoad_FlagErrors(t *testing.T) {
	// An unknown flag is reported once, by the returned error; nothing is
	// written on the side (main prints the error).
	var out bytes.Buffer
	_, _, err := Load([]string{"--no-such-flag"}, nil, &out)
	if err == nil || err.Error() != "invalid configuration:\n  flag provided but not defined: -no-such-flag (wpsidecar --help lists the flags)" || out.Len() != 0 {
		t.Errorf("unknown flag: err = %v, written: %q", err, out.String())
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--upstream=http://php", "stray"}, `unexpected arguments: ["stray"]`},
		{[]string{"--upstream", "http://php", "stray", "more"}, `unexpected arguments: ["stray" "more"]`},
		// A true/false flag's value after a space is an argument to the
		// flag package; the problem says how to give it.
		{[]string{"--upstream=http://php", "--serve-from-feed", "false"}, `unexpected arguments: ["false"] (--serve-from-feed takes its value after =: --serve-from-feed=false)`},
		{[]string{"--upstream=http://php", "-multisite", "true", "--listen=:1"}, `unexpected arguments: ["true" "--listen=:1"] (--multisite takes its value after =: --multisite=true)`},
		{[]string{"--upstream=http://php", "--", "--multisite"}, `unexpected arguments: ["--multisite"]`},
	} {
		_, err := load(t, c.args)
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0] != c.want {
			t.Errorf("%q: %v, want the one problem %s", c.args, err, c.want)
		}
	}
	out.Reset()
	if _, _, err := Load([]string{"-h"}, nil, &out); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
	// --help shows each default and where else a setting is read, and says
	// what to give when there is no wp-config.php.
	for _, want := range []string{
		"  --listen VALUE\n    \tpublic listen address\n    \t(WPSIDECAR_LISTEN; default :8080)\n",
		"(WPSIDECAR_DB_USER; WORDPRESS_DB_USER; wp-config.php DB_USER)",
		"(WPSIDECAR_DB_MAX_OPEN; default 16)",
		"  --basic-auth-passwords\n",
		"Without --wp-config",
		"--check-config",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := load(t, []string{"--upstream=http://php", "--wp-config", "/nonexistent/wp-config.php"}); err == nil || !strings.Contains(err.Error(), "wp-config") {
		t.Errorf("missing wp-config: %v", err)
	}
}

func TestLoad_CheckConfigMasksSecrets(t *testing.T) {
	cfg, check, err := Load([]string{"--upstream=http://php", "--check-config", "--trusted-proxies=10.0.0.1",
		"--webhook-urls", "https://hook:topsecret-basic@hooks.example/purge?token=topsecret-token&zone=a, https://plain.example/h", "--webhook-secret", "topsecret-hmac"},
		[]string{"WPSIDECAR_DB_USER=wp", "WORDPRESS_DB_PASSWORD=topsecret-pw", "WORDPRESS_AUTH_KEY=topsecret-key"}, io.Discard)
	if err != nil || !check {
		t.Fatalf("check=%v err=%v", check, err)
	}
	var b bytes.Buffer
	cfg.Print(&b)
	out := b.String()
	if strings.Contains(out, "topsecret") {
		t.Errorf("secret printed:\n%s", out)
	}
	for _, want := range []string{"db-password", "****** (set)", "WORDPRESS_DB_PASSWORD", "upstream", "http://php", "10.0.0.1/32", "nonce-salt", "(unset)",
		"https://hook:xxxxx@hooks.example/purge?token=xxxxx&zone=xxxxx, https://plain.example/h"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDBAddress(t *testing.T) {
	tests := []struct{ host, net, addr string }{
		{"localhost", "unix", "/run/mysqld/mysqld.sock"},
		{"localhost:3307", "tcp", "localhost:3307"},
		{"db", "tcp", "db:3306"},
		{"db:3306", "tcp", "db:3306"},
		{"127.0.0.1:3306", "tcp", "127.0.0.1:3306"},
		{"localhost:/var/run/mysqld/mysqld.sock", "unix", "/var/run/mysqld/mysqld.sock"},
		{":/tmp/my.sock", "unix", "/tmp/my.sock"},
		{"db:3306:/run/mysqld/mysqld.sock", "unix", "/run/mysqld/mysqld.sock"},
		{"[::1]:3306", "tcp", "[::1]:3306"},
		{"[2001:db8::1]:3307", "tcp", "[2001:db8::1]:3307"},
		{"::1", "tcp", "[::1]:3306"},
		{"db:notaport", "tcp", "db:3306"},
	}
	for _, tt := range tests {
		n, a := DB{Host: tt.host, Socket: DefaultMySQLSocket}.Address()
		if n != tt.net || a != tt.addr {
			t.Errorf("Address(%q) = %s %s, want %s %s", tt.host, n, a, tt.net, tt.addr)
		}
	}
}

func FuzzParseDBHost(f *testing.F) {
	for _, s := range []string{"localhost", "db:3306", "[::1]:3306", ":/s.sock", "a:b:/c", "[", "::::", "[::1]:99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h := wpconfig.ParseDBHost(s)
		if h.Port < 0 {
			t.Errorf("negative port from %q", s)
		}
		DB{Host: s}.Address()
	})
}

func TestValidate_ReportsAndChangesNothing(t *testing.T) {
	cfg := mustLoad(t, []string{"--upstream=http://php"})
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a loaded configuration is invalid: %v", err)
	}
	cfg.LogFormat, cfg.TablePrefix, cfg.DB.Charset = "xml", "bad-prefix", "utf8"
	before := *cfg
	err := cfg.Validate()
	if !IsConfigError(err) || !strings.Contains(err.Error(), `log-format: "xml"`) || !strings.Contains(err.Error(), `table-prefix: "bad-prefix"`) {
		t.Errorf("Validate = %v", err)
	}
	if !reflect.DeepEqual(cfg.DB, before.DB) || cfg.TablePrefix != before.TablePrefix || cfg.LogFormat != before.LogFormat {
		t.Error("Validate changed the configuration")
	}
}

// TestLoad_Replicas: --db-replica may be repeated, the variable may hold
// several; the same replica twice and a DSN that is not TCP are refused.
func TestLoad_Replicas(t *testing.T) {
	addrs := func(c *Config) (out []string) {
		for _, r := range c.DB.Replicas {
			out = append(out, r.User+"@"+r.Addr+"/"+r.DBName)
		}
		return out
	}
	cfg := mustLoad(t, []string{"--upstream=http://php", "--db-replica", "ro:pw@tcp(10.0.0.2:3306)/wp", "--db-replica", "tcp(10.0.0.3:3306)/"})
	if got := addrs(cfg); !reflect.DeepEqual(got, []string{"ro@10.0.0.2:3306/wp", "@10.0.0.3:3306/"}) || cfg.DB.MaxReplicaLag != time.Second {
		t.Errorf("flags: %q, lag %s", got, cfg.DB.MaxReplicaLag)
	}
	cfg = mustLoad(t, []string{"--upstream=http://php"}, "WPSIDECAR_DB_REPLICA=tcp(10.0.0.2:3306)/\n tcp(10.0.0.3:3306)/", "WPSIDECAR_MAX_REPLICA_LAG=250ms")
	if got := addrs(cfg); len(got) != 2 || cfg.DB.MaxReplicaLag != 250*time.Millisecond {
		t.Errorf("variable: %q, lag %s", got, cfg.DB.MaxReplicaLag)
	}
	_, err := load(t, []string{"--upstream=http://php", "--db-replica", "tcp(10.0.0.2:3306)/", "--db-replica", "tcp(10.0.0.2:3306)/"})
	if err == nil || !strings.Contains(err.Error(), "db-replica: 10.0.0.2:3306 is given twice") {
		t.Errorf("twice: %v", err)
	}
	_, err = load(t, []string{"--upstream=http://php", "--db-replica", "unix(/run/mysqld.sock)/"})
	if err == nil || !strings.Contains(err.Error(), "db-replica:") {
		t.Errorf("socket: %v", err)
	}
}

// TestLoad_Network: a network's per-site theme options configurations
// (repeated flag or one variable; a site in lower case), refused off a
// network or without SITE=FILE; the field-group table must carry the base
// prefix, since each site's is named with its own.
func TestLoad_Network(t *testing.T) {
	cfg := mustLoad(t, []string{"--upstream=http://php", "--multisite", "--themeopts-site-config", "3=/a.json", "--themeopts-site-config", "Shop.Example.test=/b.json"})
	if want := []ThemeoptsSite{{"3", "/a.json"}, {"shop.example.test", "/b.json"}}; !reflect.DeepEqual(cfg.ThemeoptsSites, want) {
		t.Errorf("flags: %+v", cfg.ThemeoptsSites)
	}
	cfg = mustLoad(t, []string{"--upstream=http://php", "--multisite"}, "WPSIDECAR_THEMEOPTS_SITE_CONFIG=example.test/blog/=/c.json\n2=/d.json")
	if want := []ThemeoptsSite{{"example.test/blog/", "/c.json"}, {"2", "/d.json"}}; !reflect.DeepEqual(cfg.ThemeoptsSites, want) {
		t.Errorf("variable: %+v", cfg.ThemeoptsSites)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--themeopts-site-config", "3=/a.json"}, "themeopts-site-config: only on a multisite network"},
		{[]string{"--multisite", "--themeopts-site-config", "/a.json"}, `"/a.json" is not SITE=FILE`},
		{[]string{"--multisite", "--fieldmgr-table", "fields"}, `fieldmgr-table: "fields" must begin with the table prefix "wp_" on a multisite network`},
	} {
		if _, err := load(t, append([]string{"--upstream=http://php"}, c.args...)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestRedactURLs: every flag that takes a URL prints it masked in
// --check-config: a password, query values, a fragment (security round 2,
// item 9); redact's own test masks the URLs of errors.
func TestRedactURLs(t *testing.T) {
	const secret = "s3cr3t"
	u := "https://user:" + secret + "@example.test/path?token=" + secret + "&k=" + secret + "#" + secret
	for _, flagName := range []string{"upstream", "webhook-urls", "purge-varnish", "purge-nginx", "cloudflare-api", "fastly-api"} {
		args := []string{"--upstream", "http://php", "--" + flagName, u}
		if flagName == "webhook-urls" {
			args = append(args, "--webhook-secret", "w")
		}
		var out bytes.Buffer
		cfg, err := load(t, args)
		if err != nil {
			out.WriteString(err.Error()) // refused: the message shows it masked
		} else {
			cfg.Print(&out)
		}
		if strings.Contains(out.String(), secret) {
			t.Errorf("--%s printed unmasked:\n%s", flagName, out.String())
		}
		if !strings.Contains(out.String(), "https://user:xxxxx@example.test/path?k=xxxxx&token=xxxxx#xxxxx") {
			t.Errorf("--%s not printed masked:\n%s", flagName, out.String())
		}
	}
}

// --history-retention: AGE,COUNT (days or a duration; 0 for no bound of
// that kind) or off; anything else names the setting.
func TestLoad_HistoryRetention(t *testing.T) {
	for _, c := range []struct {
		v    string
		want History
		bad  bool
	}{
		{"90d,10000", History{MaxAge: 90 * 24 * time.Hour, MaxCount: 10000}, false},
		{"2160h, 5", History{MaxAge: 2160 * time.Hour, MaxCount: 5}, false},
		{"0,0", History{}, false},
		{"off", History{Off: true}, false},
		{"90d", History{}, true},
		{"-1d,5", History{}, true},
		{"90d,-5", History{}, true},
		{"soon,5", History{}, true},
	} {
		cfg, err := load(t, []string{"--upstream", "http://php", "--history-retention", c.v})
		switch {
		case c.bad:
			if err == nil || !strings.Contains(err.Error(), "history-retention") {
				t.Errorf("%q: %v", c.v, err)
			}
		case err != nil || cfg.History != c.want:
			t.Errorf("%q: %+v %v, want %+v", c.v, cfg, err, c.want)
		}
	}
}

// A command's configuration needs no upstream and takes its own flags and
// arguments in any order.
func TestLoadCommand(t *testing.T) {
	var dry bool
	cfg, pos, err := LoadCommand([]string{"DIR", "--dry-run", "--db-name", "x", "MORE"}, base, func(fs *flag.FlagSet) {
		fs.BoolVar(&dry, "dry-run", false, "")
	}, true)
	if err != nil || !dry || cfg.DB.Name != "x" || strings.Join(pos, " ") != "DIR MORE" {
		t.Errorf("%v %v %q %v", cfg, dry, pos, err)
	}
	// One that reaches no database (openapi, probe) takes every setting
	// the server takes, and needs none of them.
	if _, _, err := LoadCommand([]string{"--wp-config", "", "--db-name", "x"}, nil, nil, false); err != nil {
		t.Errorf("a command without a database: %v", err)
	}
	if _, _, err := LoadCommand(nil, nil, nil, true); err == nil || !strings.Contains(err.Error(), "db-user: required") {
		t.Errorf("a command with a database, none named: %v", err)
	}
	if _, _, err := Load([]string{"DIR"}, append([]string{"WPSIDECAR_UPSTREAM=http://php"}, base...), io.Discard); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Errorf("the server with an argument: %v", err)
	}
}

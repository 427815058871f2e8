package config

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/store"
)

// TestLoad_DBTLS: the database's TLS mode comes from --db-tls, else from
// what wp-config.php tells PHP's mysqli (MYSQL_CLIENT_FLAGS, MYSQL_SSL_CA),
// and --check-config says which.
func TestLoad_DBTLS(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, php string
		args      []string
		mode, ca  string
		source    string // a part of where --check-config says it came from
	}{
		{"nothing said", ``, nil, "disabled", "", "no MYSQLI_CLIENT_SSL"},
		{"compression only", `define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_COMPRESS );`, nil, "disabled", "", "no MYSQLI_CLIENT_SSL"},
		{"ssl", `define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL );`, nil, "required", "", "wp-config.php:2: MYSQLI_CLIENT_SSL"},
		{"ssl, don't verify", `define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL | MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT );`, nil, "required", "", "DONT_VERIFY"},
		{"ssl, verify", `define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL | MYSQLI_CLIENT_SSL_VERIFY_SERVER_CERT );`, nil, "verify-identity", "", "MYSQLI_CLIENT_SSL_VERIFY_SERVER_CERT"},
		{"ssl with a CA", "define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL );\ndefine( 'MYSQL_SSL_CA', '/etc/ssl/db-ca.pem' );", nil, "verify-identity", "/etc/ssl/db-ca.pem", "with a CA"},
		{"a CA without the flag", `define( 'MYSQL_SSL_CA', '/etc/ssl/db-ca.pem' );`, nil, "disabled", "/etc/ssl/db-ca.pem", "no MYSQLI_CLIENT_SSL"},
		{"the flag wins over wp-config", `define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL );`, []string{"--db-tls", "verify-ca", "--db-tls-ca", "/ca.pem"}, "verify-ca", "/ca.pem", "flag"},
		{"turned off by flag", `define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL );`, []string{"--db-tls", "disabled"}, "disabled", "", "flag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"), "wp-config.php")
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte("<?php\n"+c.php+"\ndefine( 'DB_USER', 'wp' );\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := mustLoad(t, append([]string{"--upstream=http://php", "--wp-config", path}, c.args...))
			if cfg.DB.TLS.Mode != c.mode || cfg.DB.TLS.CA != c.ca {
				t.Errorf("mode %q, CA %q; want %q, %q", cfg.DB.TLS.Mode, cfg.DB.TLS.CA, c.mode, c.ca)
			}
			if src := cfg.Source("db-tls"); !strings.Contains(src, c.source) {
				t.Errorf("source %q, want it to say %q", src, c.source)
			}
		})
	}
}

func TestLoad_DBTLSProblems(t *testing.T) {
	for args, want := range map[string]string{
		"--db-tls=on":           `db-tls: "on" from flag: not one of disabled, preferred, required, verify-ca, verify-identity`,
		"--db-tls-cert=c.pem":   "db-tls-cert, db-tls-key: give both or neither",
		"--db-client-flags=abc": `db-client-flags: "abc" from flag: must be a whole number of at least 0`,
	} {
		_, err := load(t, []string{"--upstream=http://php", args})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

// The modes the settings accept are the store's.
func TestDBTLSModes(t *testing.T) {
	if !slices.Equal(dbTLSModes, store.TLSModes) {
		t.Errorf("config %v, store %v", dbTLSModes, store.TLSModes)
	}
}

// TestLoad_DBTLSWarnings: a TLS setting that gives less than it seems to
// is a warning, at start and in --check-config (issue 46, item 5): a CA,
// certificate or key while TLS is off; a CA with a mode that does not
// check the server; a --binlog-dsn whose own tls= is weaker than db-tls.
func TestLoad_DBTLSWarnings(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, php string
		args      []string
		want      []string
	}{
		{"nothing said", ``, nil, nil},
		{"MYSQL_SSL_CA without MYSQLI_CLIENT_SSL", `define( 'MYSQL_SSL_CA', '/etc/ssl/db-ca.pem' );`, nil, []string{
			"db-tls: disabled (MYSQL_CLIENT_FLAGS from default: no MYSQLI_CLIENT_SSL), so the database is reached unencrypted and db-tls-ca (WPCONFIG:2) is not used; give --db-tls verify-identity, verify-ca or required to encrypt",
		}},
		{"a CA by flag, no mode", ``, []string{"--db-tls-ca", "/ca.pem"}, []string{
			"db-tls: disabled (MYSQL_CLIENT_FLAGS from default: no MYSQLI_CLIENT_SSL), so the database is reached unencrypted and db-tls-ca (flag) is not used; give --db-tls verify-identity, verify-ca or required to encrypt",
		}},
		{"a client certificate, TLS turned off", `define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL );`, []string{"--db-tls", "disabled", "--db-tls-cert", "/c.pem", "--db-tls-key", "/k.pem"}, []string{
			"db-tls: disabled (flag), so the database is reached unencrypted and db-tls-cert (flag), db-tls-key (flag) are not used; give --db-tls verify-identity, verify-ca or required to encrypt",
		}},
		{"a CA with required", ``, []string{"--db-tls", "required", "--db-tls-ca", "/ca.pem"}, []string{
			"db-tls: required (flag) does not check the server's certificate, so db-tls-ca (flag) is not used; give --db-tls verify-ca or verify-identity to check it",
		}},
		{"a CA, verified", ``, []string{"--db-tls", "verify-ca", "--db-tls-ca", "/ca.pem"}, nil},
		{"a CA with MYSQLI_CLIENT_SSL", "define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL );\ndefine( 'MYSQL_SSL_CA', '/etc/ssl/db-ca.pem' );", nil, nil},
		{"a client certificate with required", ``, []string{"--db-tls", "required", "--db-tls-cert", "/c.pem", "--db-tls-key", "/k.pem"}, nil},
		{"a binlog DSN weaker than db-tls", ``, []string{"--db-tls", "verify-identity", "--binlog-dsn", "feed:pw@tcp(db:3306)/?tls=skip-verify"}, []string{
			"binlog-dsn: its tls=skip-verify (required) is weaker than db-tls verify-identity (flag), and the binlog feed's connection keeps it",
		}},
		{"a binlog DSN in plain TCP", `define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL );`, []string{"--binlog-dsn", "feed:pw@tcp(db:3306)/?tls=false"}, []string{
			"binlog-dsn: its tls=false (disabled) is weaker than db-tls required (MYSQL_CLIENT_FLAGS from WPCONFIG:2: MYSQLI_CLIENT_SSL), and the binlog feed's connection keeps it",
		}},
		{"a binlog DSN as strong", ``, []string{"--db-tls", "required", "--binlog-dsn", "feed:pw@tcp(db:3306)/?tls=true"}, nil},
		{"a binlog DSN without tls=", ``, []string{"--db-tls", "required", "--binlog-dsn", "feed:pw@tcp(db:3306)/"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"), "wp-config.php")
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte("<?php\n"+c.php+"\ndefine( 'DB_USER', 'wp' );\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := mustLoad(t, append([]string{"--upstream=http://php", "--wp-config", path}, c.args...))
			var want []string
			for _, w := range c.want {
				want = append(want, strings.ReplaceAll(w, "WPCONFIG", path))
			}
			if !slices.Equal(cfg.Warnings, want) {
				t.Errorf("warnings\n %q\nwant\n %q", cfg.Warnings, want)
			}
			var out bytes.Buffer
			cfg.Print(&out)
			for _, w := range want {
				if !strings.Contains(out.String(), "\n# warning: "+w+"\n") {
					t.Errorf("--check-config does not show %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestPrint_BinlogDSN: --check-config shows --binlog-dsn with only its
// password masked, so that its tls= (which wins over db-tls for the feed)
// and its other parameters can be seen (issue 46, item 5).
func TestPrint_BinlogDSN(t *testing.T) {
	const secret = "s3cr3t"
	for _, c := range []struct{ dsn, want string }{
		{"feed:" + secret + "@tcp(db:3306)/?tls=skip-verify", "feed:xxxxx@tcp(db:3306)/?tls=skip-verify"},
		{"feed@tcp(db:3306)/?tls=false&readTimeout=5s", "feed@tcp(db:3306)/?readTimeout=5s&tls=false"},
		{"feed:" + secret + "@:" + secret + "@tcp(10.0.0.5:3307)/?tls=true", "feed:xxxxx@tcp(10.0.0.5:3307)/?tls=true"},
		{"feed:" + secret + "@tcp(db:3306)/", "feed:xxxxx@tcp(db:3306)/"},
	} {
		cfg := mustLoad(t, []string{"--upstream=http://php", "--binlog-dsn", c.dsn})
		var out bytes.Buffer
		cfg.Print(&out)
		if strings.Contains(out.String(), secret) {
			t.Errorf("%s: the password printed:\n%s", c.dsn, out.String())
		}
		if !regexp.MustCompile(`(?m)^binlog-dsn +` + regexp.QuoteMeta(c.want) + ` +flag$`).MatchString(out.String()) {
			t.Errorf("%s: want it shown as %s:\n%s", c.dsn, c.want, out.String())
		}
	}
	// One that is not a DSN is refused without showing it: the password
	// may be anywhere in it.
	_, err := load(t, []string{"--upstream=http://php", "--binlog-dsn", "feed:" + secret})
	if want := "binlog-dsn: (secret) from flag: not a DSN such as user:password@tcp(host:3306)/"; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), secret) {
		t.Errorf("%v, want %q", err, want)
	}
}

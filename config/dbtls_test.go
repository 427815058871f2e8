package config

import (
	"os"
	"path/filepath"
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

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
)

// TestRun_DatabaseRequiresTLS: a site whose database takes only TLS
// (require_secure_transport) and whose wp-config.php tells PHP to use it
// (MYSQL_CLIENT_FLAGS with MYSQLI_CLIENT_SSL) is served with nothing else
// said: --check-config shows the mode and where it came from, the binlog
// feed follows the log over TLS, the routes answer, and the commands
// connect too. Told to connect in plain TCP, it is refused, saying why.
func TestRun_DatabaseRequiresTLS(t *testing.T) {
	certs := testdb.MakeCerts(t, "127.0.0.1")
	srv := testdb.StartServerWith(t, testdb.ServerOptions{Binlog: true, Files: certs.Server,
		Args: append(append([]string{}, testdb.TLSArgs...), "--require-secure-transport=ON")})
	admin := srv.Config()
	admin.TLS = &tls.Config{InsecureSkipVerify: true}
	tdb := testdb.NewOn(t, admin)
	const login, password = "admin", "abcdefghijklmnopqrstuvwx"
	testsite.New(t, tdb, testsite.User{Login: login, Role: "administrator", AppPassword: password})
	wpConfig := filepath.Join(t.TempDir(), "wp-config.php")
	os.WriteFile(wpConfig, []byte(`<?php
define( 'DB_NAME', '`+tdb.Name+`' );
define( 'DB_USER', 'root' );
define( 'DB_PASSWORD', '' );
define( 'DB_HOST', '`+admin.Addr+`' );
define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL );
$table_prefix = 'wp_';
define( 'WP_ENVIRONMENT_TYPE', 'local' );
`), 0o644)
	php := httptest.NewServer(http.NotFoundHandler())
	defer php.Close()
	args := []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--upstream", php.URL, "--wp-config", wpConfig, "--change-feed", "binlog"}

	var out bytes.Buffer
	if err := run(context.Background(), append(args, "--check-config"), nil, &out, io.Discard, nil); err != nil {
		t.Fatalf("--check-config: %v\n%s", err, out.String())
	}
	if !regexp.MustCompile(`(?m)^db-tls +required +MYSQL_CLIENT_FLAGS from ` + regexp.QuoteMeta(wpConfig) + `:6: MYSQLI_CLIENT_SSL$`).MatchString(out.String()) {
		t.Errorf("--check-config does not say the mode and its source:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "can feed the sidecar") {
		t.Errorf("--check-config: the feed over TLS:\n%s", out.String())
	}

	s := start(t, args, nil)
	waitReady(t, s)
	if _, body := get(t, s.admin+"/readyz"); !strings.Contains(body, `"change_feed":"binlog"`) {
		t.Errorf("readyz %s\n%s", body, s.log)
	}
	groups := s.public + "/wp-json/fieldmgr/v1/field-groups"
	if code, body, _ := testsite.Send(t, http.MethodGet, groups, "", login, password); code != 200 || body != "[]" {
		t.Fatalf("GET: %d %s\n%s", code, body, s.log)
	}

	out.Reset()
	if err := run(context.Background(), []string{"export", "--wp-config", wpConfig, t.TempDir()}, nil, &out, &out, nil); err != nil {
		t.Errorf("export: %v\n%s", err, out.String())
	}

	out.Reset()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := run(ctx, []string{"export", "--wp-config", wpConfig, "--db-tls", "disabled", t.TempDir()}, nil, &out, &out, nil)
	if err == nil || !regexp.MustCompile(`Error (3159|1045)`).MatchString(err.Error()+out.String()) {
		t.Errorf("export in plain TCP: %v\n%s", err, out.String())
	}
}

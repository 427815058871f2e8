package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommands_ServerSettings: the subcommands that reach no database
// (openapi, probe) take the server's settings as the server does — its
// flags, wp-config.php — and need none of them; an unknown flag is
// refused as the server refuses it, and extra arguments are a usage
// problem. The probe reads only its flags.
func TestCommands_ServerSettings(t *testing.T) {
	wpConfig := filepath.Join(t.TempDir(), "wp-config.php")
	os.WriteFile(wpConfig, []byte("<?php\ndefine( 'DB_NAME', 'x' );\ndefine( 'DB_USER', 'u' );\n$table_prefix = 'wp_';\n"), 0o644)
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer ready.Close()
	settings := []string{"--wp-config", wpConfig, "--log-level", "debug", "--admin-listen", "127.0.0.1:9191"}

	var doc bytes.Buffer
	if err := run(context.Background(), append([]string{"openapi"}, settings...), nil, &doc, io.Discard, nil); err != nil || !json.Valid(doc.Bytes()) {
		t.Errorf("openapi with the server's settings: %v %.100q", err, doc.String())
	}
	var probed bytes.Buffer
	if err := run(context.Background(), append([]string{"probe", ready.URL}, settings...), nil, &probed, io.Discard, nil); err != nil || probed.String() != "ok\n" {
		t.Errorf("probe with the server's settings: %v %q", err, probed.String())
	}
	// The health check reads nothing but its flags: a configuration that
	// is broken on disk now (or variables it does not know) does not fail
	// the check of a server that started with a good one; openapi, which
	// reads the settings, says what is wrong.
	broken := []string{"WPSIDECAR_WP_CONFIG=" + filepath.Join(t.TempDir(), "gone.php"), "WPSIDECAR_NO_SUCH_SETTING=1"}
	probed.Reset()
	if err := run(context.Background(), []string{"probe", ready.URL}, broken, &probed, io.Discard, nil); err != nil || probed.String() != "ok\n" {
		t.Errorf("probe with a broken configuration on disk: %v %q", err, probed.String())
	}
	if err := run(context.Background(), []string{"openapi"}, broken, io.Discard, io.Discard, nil); err == nil || !strings.Contains(err.Error(), "WPSIDECAR_NO_SUCH_SETTING: unknown setting") {
		t.Errorf("openapi with a broken configuration: %v", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"openapi", "--no-such-flag"}, "invalid configuration:\n  flag provided but not defined: -no-such-flag (the command's --help lists its own flags, wpsidecar --help the server's)"},
		{[]string{"probe", "--no-such-flag"}, "invalid configuration:\n  flag provided but not defined: -no-such-flag (the command's --help lists its own flags, wpsidecar --help the server's)"},
		{[]string{"openapi", "extra"}, "openapi: takes no arguments"},
		{[]string{"probe", ready.URL, "extra"}, "probe: give at most one URL: wpsidecar probe [URL] (default http://127.0.0.1:9090/readyz)"},
		{[]string{"openapi", "--log-level", "loud"}, "invalid configuration:\n  " + `log-level: "loud" is not one of debug, info, warn, error`},
		// The arguments are checked before the settings say where the
		// database is (there are none here).
		{[]string{"import"}, "import: give one directory: wpsidecar import DIR"},
		{[]string{"revert", "1", "2"}, "revert: give one history entry id: wpsidecar revert ID"},
		{[]string{"revert", "abc"}, `revert: "abc" is not a history entry id`},
		{[]string{"revert", "0"}, `revert: "0" is not a history entry id`},
		{[]string{"history", "--bogus"}, "invalid configuration:\n  flag provided but not defined: -bogus (the command's --help lists its own flags, wpsidecar --help the server's)"},
	} {
		err := run(context.Background(), c.args, nil, io.Discard, io.Discard, nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestCommands_Help: each command's --help (or -h) shows how it is called
// and its own flags, not the server's, on stderr, and exits 0.
func TestCommands_Help(t *testing.T) {
	for _, c := range []struct {
		name, usage string
		flags       []string
		reads       string
	}{
		{"export", "Usage: wpsidecar export [flags] DIR", []string{"--site VALUE"}, "which say where the\ndatabase is.\n"},
		{"import", "Usage: wpsidecar import [flags] DIR", []string{"--dry-run", "--force", "--prune", "--site VALUE"}, "which say where the\ndatabase is.\n"},
		{"history", "Usage: wpsidecar history [flags]", []string{"--json", "--key VALUE", "--namespace VALUE", "--page VALUE", "--per-page VALUE", "--since VALUE", "--site VALUE"}, "which say where the\ndatabase is.\n"},
		{"revert", "Usage: wpsidecar revert [flags] ID", []string{"--force", "--site VALUE"}, "which say where the\ndatabase is.\n"},
		{"openapi", "Usage: wpsidecar openapi [flags]", nil, "WPSIDECAR_* variables and wp-config.php.\n"},
		{"probe", "Usage: wpsidecar probe [flags] [URL]", nil, "and reads nothing else: no variables, no wp-config.php.\n"},
	} {
		for _, h := range []string{"--help", "-h"} {
			var out, errOut bytes.Buffer
			if err := run(context.Background(), []string{c.name, h}, nil, &out, &errOut, nil); err != nil || out.Len() != 0 {
				t.Errorf("%s %s: %v, stdout %q", c.name, h, err, out.String())
			}
			help := errOut.String()
			var flags []string
			for _, l := range strings.Split(help, "\n") {
				if strings.HasPrefix(l, "  --") {
					flags = append(flags, strings.TrimPrefix(l, "  "))
				}
			}
			if first, _, _ := strings.Cut(help, "\n"); first != c.usage || strings.Join(flags, " ") != strings.Join(c.flags, " ") || !strings.HasSuffix(help, c.reads) {
				t.Errorf("%s %s: usage %q, flags %q, want %q %q, ending %q:\n%s", c.name, h, first, flags, c.usage, c.flags, c.reads, help)
			}
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
)

// TestCommands_StopAndExit: the binary's import stops on SIGTERM or
// SIGINT wherever it is — here waiting on a database that never answers —
// exiting 1 and saying so; a theme options configuration that is a pipe
// is refused at once; an import of a config whose references nest (PHP-made, 1.2 kB) ends
// at once, exiting 1 and naming the bound.
func TestCommands_StopAndExit(t *testing.T) {
	tdb := testdb.New(t) // first: under -short it skips before the build
	bin := filepath.Join(t.TempDir(), "wpsidecar")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	db := tdb.Store(t)
	groups, _ := fieldgrouptable.Open(db, testdb.Prefix+"fieldmgr_groups")
	groups.EnsureTable(context.Background())
	wpConfig := filepath.Join(t.TempDir(), "wp-config.php")
	os.WriteFile(wpConfig, []byte(`<?php
define( 'DB_NAME', '`+tdb.Name+`' );
define( 'DB_USER', 'root' );
define( 'DB_PASSWORD', '' );
define( 'DB_HOST', '`+testdb.ServerConfig(t).Addr+`' );
$table_prefix = 'wp_';
`), 0o644)
	// A database that takes the connection and never answers.
	silent, lerr := net.Listen("tcp", "127.0.0.1:0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	defer silent.Close()
	// Each connection it takes is told: the command is waiting on it then,
	// its signal handlers long installed (main's first statement).
	dialled := make(chan struct{}, 16)
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			select {
			case dialled <- struct{}{}:
			default:
			}
		}
	}()
	silentConfig := filepath.Join(t.TempDir(), "wp-config.php")
	os.WriteFile(silentConfig, []byte("<?php\ndefine( 'DB_NAME', 'x' );\ndefine( 'DB_USER', 'root' );\ndefine( 'DB_HOST', '"+silent.Addr().String()+"' );\n"), 0o644)
	config, _ := filepath.Abs("../../web/themeopts/testdata/config.json")
	fifo := filepath.Join(t.TempDir(), "config.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	nested, err := exec.Command("php", "-r", `$a = ["type" => "post"]; for ($i = 0; $i < 60; $i++) { $b = [&$a, &$a]; unset($a); $a = $b; unset($b); } echo serialize($a);`).Output()
	if err != nil {
		t.Fatalf("php -r: %v", err)
	}
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "fieldmgr"), 0o755)
	b, _ := json.Marshal(map[string]string{"key": "nest", "title": "N", "status": "active", "config": string(nested), "exported": ""})
	os.WriteFile(filepath.Join(dir, "fieldmgr", "nest.json"), b, 0o644)

	for _, c := range []struct {
		name       string
		config     string
		signal     syscall.Signal // 0: none
		wantCode   int
		wantStderr string
		wp         string // wp-config.php, when not the site's
	}{
		{"SIGTERM while the database does not answer", config, syscall.SIGTERM, 1, "wpsidecar: import interrupted: terminated signal received\n", silentConfig},
		{"SIGINT while the database does not answer", config, syscall.SIGINT, 1, "wpsidecar: import interrupted: interrupt signal received\n", silentConfig},
		// A pipe for a configuration is refused before anything waits on
		// it (waiting, the command would run into the 20 s bound below).
		{"a pipe at start-up", fifo, 0, 1, "wpsidecar: theme options configuration: read " + fifo + ": a named pipe (FIFO), not a regular file\n", ""},
		{"nested references", config, 0, 1, "wpsidecar: " + filepath.Join(dir, "fieldmgr", "nest.json") + ": config: over 32 MiB with its references expanded\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			wp := wpConfig
			if c.wp != "" {
				wp = c.wp
			}
			cmd := exec.Command(bin, "import", "--dry-run", "--wp-config", wp, "--themeopts-config", c.config, dir)
			cmd.Env = []string{} // the site's configuration only (not the tests' WPSIDECAR_TEST_* variables)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			for len(dialled) > 0 {
				<-dialled // an earlier command's
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			if c.signal != 0 {
				select {
				case <-dialled:
				case err := <-done:
					t.Fatalf("exited before reaching the database: %v\n%s", err, stderr.String())
				case <-time.After(20 * time.Second):
					cmd.Process.Kill()
					<-done
					t.Fatalf("never reached the database (stderr %q)", stderr.String())
				}
				cmd.Process.Signal(c.signal)
			}
			select {
			case err := <-done:
				var exit *exec.ExitError
				code := 0
				if errors.As(err, &exit) {
					code = exit.ExitCode()
				}
				if code != c.wantCode || stderr.String() != c.wantStderr || stdout.Len() != 0 {
					t.Errorf("exit %d, want %d\nstderr %q\n  want %q\nstdout %q", code, c.wantCode, stderr.String(), c.wantStderr, stdout.String())
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Errorf("still running 20 s on (stderr %q)", stderr.String())
			}
		})
	}
}

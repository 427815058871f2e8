package wpconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The bounds of reading a configuration: each input here crashed the
// sidecar (a stack overflow), hung it, or had it allocate gigabytes
// before them. Each is read in a bounded time (a hang fails the test, it
// does not hang it), on a stack of at most 64 MiB and allocating at most
// what the case allows; what cannot be read within the bounds is reported
// as the rest of the reading reports: an unresolved constant with its
// reason, a warning, or an error.

// guarded runs read in its own goroutine, failing t when it never ends
// (two minutes, or half of what is left before the test's deadline: a
// bound far above what any case takes, even under the race detector on a
// loaded machine), needs a stack over 64 MiB (Go's own limit is 1 GB;
// over this one the test binary stops) or allocates more than maxAlloc
// MiB.
func guarded(t *testing.T, maxAlloc uint64, read func()) {
	t.Helper()
	wait := 2 * time.Minute
	if d, ok := t.Deadline(); ok && time.Until(d)/2 < wait {
		wait = time.Until(d) / 2
	}
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	go func() { defer close(done); read() }()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatalf("still reading after %v: it hangs", wait.Round(time.Second))
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > maxAlloc<<20 {
		t.Errorf("allocated %d MiB; the bound is %d MiB", got>>20, maxAlloc)
	}
}

// phpQuote is s as a single-quoted PHP string.
func phpQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// mkfifo makes a named pipe that nothing writes to: opening it to read
// blocks until something does.
func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// expect checks a reading against wants, each one of:
//
//	NAME=value        the constant is defined with the value
//	NAME?reason       the constant is unresolved, the reason holding this
//	!NAME             the constant is neither
//	warning:text      a warning holds the text
//	error:text        the reading failed, the error holding the text
func expect(t *testing.T, wc *Config, err error, wants []string) {
	t.Helper()
	for _, w := range wants {
		if text, ok := strings.CutPrefix(w, "error:"); ok {
			if err == nil || !strings.Contains(err.Error(), text) {
				t.Errorf("error %v, want one saying %q", err, text)
			}
			continue
		}
		if err != nil {
			t.Fatalf("error %v; want %q", err, w)
		}
		if text, ok := strings.CutPrefix(w, "warning:"); ok {
			if !strings.Contains(strings.Join(wc.Warnings, "\n"), text) {
				t.Errorf("no warning says %q: %q", text, wc.Warnings)
			}
			continue
		}
		if name, ok := strings.CutPrefix(w, "!"); ok {
			if v, ok := wc.Constants[name]; ok {
				t.Errorf("%s defined (%.40q)", name, v)
			}
			if why, ok := wc.Unresolved[name]; ok {
				t.Errorf("%s unresolved (%.200s)", name, why)
			}
			continue
		}
		if name, why, ok := strings.Cut(w, "?"); ok {
			if got, ok := wc.Unresolved[name]; !ok || !strings.Contains(got, why) {
				t.Errorf("%s unresolved: %.300q, want a reason saying %q (defined: %.40q)", name, got, why, wc.Constants[name])
			}
			continue
		}
		name, value, _ := strings.Cut(w, "=")
		if got, ok := wc.Constants[name]; !ok || got != value {
			t.Errorf("%s = %.40q (defined %v), want %q; unresolved: %.300s", name, got, ok, value, wc.Unresolved[name])
		}
	}
}

// doubled is PHP that sets $name to seed doubled n times.
func doubled(name, seed string, n int) string {
	return fmt.Sprintf("$%s = %s;\n", name, phpQuote(seed)) + strings.Repeat(fmt.Sprintf("$%s = $%s . $%s;\n", name, name, name), n)
}

func TestReadWPConfig_Budget(t *testing.T) {
	site := func(src string, more ...string) func(*testing.T) (string, FS, map[string]string) {
		return func(*testing.T) (string, FS, map[string]string) {
			files := map[string]string{"/site/wp-config.php": src}
			for i := 0; i+1 < len(more); i += 2 {
				files[more[i]] = more[i+1]
			}
			return "/site/wp-config.php", &mapFS{files: files}, nil
		}
	}
	// onDisk writes wp-config.php into a directory of its own; its %s
	// are that directory.
	onDisk := func(src string, env map[string]string, prepare func(t *testing.T, dir string)) func(*testing.T) (string, FS, map[string]string) {
		return func(t *testing.T) (string, FS, map[string]string) {
			dir := t.TempDir()
			path := filepath.Join(dir, "wp-config.php")
			if prepare != nil {
				prepare(t, dir)
			}
			if src != "" {
				if err := os.WriteFile(path, []byte(strings.ReplaceAll(src, "%s", dir)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			e := map[string]string{}
			for k, v := range env {
				e[k] = strings.ReplaceAll(v, "%s", dir)
			}
			return path, OSFS{}, e
		}
	}
	chain := func(op string, n int) string { return "1" + strings.Repeat(op+"1", n-1) }

	// Four nested eval()s, each of the code within and a 65,536-operand
	// chain: the chains nest to the left, the evals at their bottom.
	nestedEval := "return " + chain("|", 1<<16) + ";"
	for range 3 {
		nestedEval = "return eval(" + phpQuote(nestedEval) + ")" + strings.Repeat("|1", 1<<16-1) + ";"
	}
	// Four nested eval()s of 400-operand chains: each under the depth
	// bound, together over it.
	evalsOver := "return " + chain("|", 400) + ";"
	for range 3 {
		evalsOver = "return eval(" + phpQuote(evalsOver) + ")" + strings.Repeat("|1", 399) + ";"
	}

	// A .env whose values refer to a 1 MiB one: 52 KB of ${…} that PHP
	// would expand to gigabytes.
	dotenv := func(line string) string {
		var b strings.Builder
		b.WriteString("A0=" + strings.Repeat("x", 64) + "\n")
		for i := 1; i <= 14; i++ {
			fmt.Fprintf(&b, "A%d=\"${A%d}${A%d}\"\n", i, i-1, i-1)
		}
		for i := 1; b.Len() < 52<<10; i++ {
			fmt.Fprintf(&b, line+"\n", i)
		}
		return b.String() + "LAST=wp\n"
	}
	loadEnv := "<?php $d = Dotenv\\Dotenv::createImmutable(__DIR__); $d->load();\ndefine('B', env('B0001'));\ndefine('DB_NAME', env('LAST'));"

	// Strings in strings, each a heredoc holding the next in {$…}: the
	// lexer reads them recursively.
	var nested strings.Builder
	for k := 1; k <= 30000; k++ {
		fmt.Fprintf(&nested, "<<<L%d\n{$x[", k)
	}
	nested.WriteString("'x'")
	for k := 30000; k >= 1; k-- {
		fmt.Fprintf(&nested, "]}\nL%d", k)
	}

	tests := []struct {
		name     string
		setup    func(*testing.T) (path string, fsys FS, env map[string]string)
		maxAlloc uint64 // MiB
		want     []string
	}{
		{"four nested eval()s of 65k-operand chains",
			site("<?php\ndefine('X', eval(" + phpQuote(nestedEval) + ")" + strings.Repeat("|1", 1<<16-1) + ");\ndefine('AFTER', 1);"),
			256, []string{"X?nested more than 1000 deep", "!AFTER", "warning:/site/wp-config.php: evaluation stopped"}},
		{"nested eval()s deeper together than the bound",
			site("<?php\ndefine('X', eval(" + phpQuote(evalsOver) + ")" + strings.Repeat("|1", 399) + ");"),
			16, []string{"X?nested more than 1000 deep"}},
		{"a 65k-operand ?? chain", site("<?php define('X', " + strings.Repeat("null ?? ", 1<<16) + "1);"),
			256, []string{"X?nested more than 1000 deep"}},
		{"a 65k-operand . chain", site("<?php define('X', " + chain(" . ", 1<<16) + ");"),
			256, []string{"X?nested more than 1000 deep"}},
		{"6,000 strtoupper() copies of a 1 MiB string",
			site("<?php\n" + doubled("s", "x", 20) + strings.Repeat("strtoupper($s);", 6000) + "\ndefine('DB_NAME', 'wp');"),
			256, []string{"!DB_NAME", "warning:evaluation stopped: the configuration asks for more than a configuration file needs (more than 128 MiB of strings, arrays and code)"}},
		{"the same 1 MiB string kept under 6,000 names",
			site("<?php\n" + doubled("s", "x", 20) + strings.Repeat("define('U' . __LINE__, strtoupper($s));\n", 6000) + "define('DB_NAME', 'wp');"),
			256, []string{"U23=" + strings.Repeat("X", 1<<20), "!DB_NAME", "warning:more than 128 MiB"}},
		{"a .env of 52 KB whose values expand to 2 MiB each",
			site(loadEnv, "/site/.env", dotenv(`B%04d="${A14}${A14}"`)),
			16, []string{"B?B0001 in /site/.env:16: longer than 1 MiB once its ${…} are replaced", "DB_NAME=wp"}},
		{"a .env of 52 KB whose values are copies of 1 MiB",
			site(loadEnv, "/site/.env", dotenv(`B%04d="${A14}"`)),
			256, []string{"!B", "!DB_NAME", "warning:more than 128 MiB"}},
		{"eval() of 160 KB of code, 100 times",
			site("<?php\n" + doubled("c", "$x=1;", 15) + strings.Repeat("eval($c);\n", 100) + "define('DB_NAME', 'wp');"),
			256, []string{"!DB_NAME", "warning:evaluation stopped"}},
		{"strings nested 30,000 deep", site("<?php $x = []; define('X', " + nested.String() + ");"),
			16, []string{"error:strings nested more than 32 deep"}},
		{"arrays nested 100 deep", site("<?php $a = 1;\n" + strings.Repeat("$a = [$a];\n", 100) + "define('X', $a === $a); define('Y', 'y');"),
			16, []string{"X?arrays nested more than 64 deep", "Y=y"}},
		{"the densest file the lexer takes, read whole", site("<?php " + strings.Repeat("$x=1;", lexLimit/4-5) + "define('A', $x);"),
			256, []string{"A=1"}},
		{"include '/dev/zero'", onDisk("<?php include '/dev/zero'; define('AFTER', 1);", nil, nil),
			16, []string{"AFTER=1", "warning:include of /dev/zero: a device, not a regular file; settings defined there are not seen"}},
		{"include of a named pipe", onDisk("<?php include __DIR__ . '/fifo.php'; define('AFTER', 1);", nil,
			func(t *testing.T, dir string) { mkfifo(t, filepath.Join(dir, "fifo.php")) }),
			16, []string{"AFTER=1", "warning:fifo.php: a named pipe (FIFO), not a regular file"}},
		{"include of a directory", onDisk("<?php include __DIR__; define('AFTER', 1);", nil, nil),
			16, []string{"AFTER=1", "warning:a directory, not a file"}},
		{"a .env that is a named pipe", onDisk(loadEnv, nil,
			func(t *testing.T, dir string) { mkfifo(t, filepath.Join(dir, ".env")) }),
			16, []string{"warning:/.env: a named pipe (FIFO), not a regular file; its variables are not seen"}},
		{"wp-config.php a named pipe", onDisk("", nil,
			func(t *testing.T, dir string) { mkfifo(t, filepath.Join(dir, "wp-config.php")) }),
			16, []string{"error:a named pipe (FIFO), not a regular file"}},
		{"WORDPRESS_DB_PASSWORD_FILE=/dev/zero", onDisk("<?php define('DB_PASSWORD', getenv_docker('WORDPRESS_DB_PASSWORD', ''));",
			map[string]string{"WORDPRESS_DB_PASSWORD_FILE": "/dev/zero"}, nil),
			16, []string{"DB_PASSWORD?WORDPRESS_DB_PASSWORD_FILE: a device, not a regular file"}},
		{"WORDPRESS_DB_PASSWORD_FILE a named pipe", onDisk("<?php define('DB_PASSWORD', getenv_docker('WORDPRESS_DB_PASSWORD', ''));",
			map[string]string{"WORDPRESS_DB_PASSWORD_FILE": "%s/fifo"}, func(t *testing.T, dir string) { mkfifo(t, filepath.Join(dir, "fifo")) }),
			16, []string{"DB_PASSWORD?WORDPRESS_DB_PASSWORD_FILE: a named pipe (FIFO), not a regular file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, fsys, env := tt.setup(t)
			var wc *Config
			var err error
			guarded(t, tt.maxAlloc, func() { wc, err = Read(path, envOf(env), fsys) })
			expect(t, wc, err, tt.want)
		})
	}
}

// TestReadWPConfig_SecretFilesCounted: getenv_docker's NAME_FILE reads
// count among the files read.
func TestReadWPConfig_SecretFilesCounted(t *testing.T) {
	files := map[string]string{"/run/secret": "s3cret\n"}
	env := map[string]string{}
	var src strings.Builder
	src.WriteString("<?php\n")
	for i := range 70 {
		fmt.Fprintf(&src, "define('S%d', getenv_docker('S%d', ''));\n", i, i)
		env[fmt.Sprintf("S%d_FILE", i)] = "/run/secret"
	}
	files["/site/wp-config.php"] = src.String()
	wc := read(t, files, env)
	if len(wc.Files) != MaxFiles {
		t.Errorf("%d files read, want %d", len(wc.Files), MaxFiles)
	}
	expect(t, wc, nil, []string{"S0=s3cret", fmt.Sprintf("S%d=s3cret", MaxFiles-2),
		fmt.Sprintf("S%d?S%d_FILE: more than 64 files read", MaxFiles-1, MaxFiles-1), "S69?more than 64 files read"})
}

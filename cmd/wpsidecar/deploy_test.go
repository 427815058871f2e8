//go:build packaging

// The checks of what ships beside the binary (the Dockerfile, the Compose
// files; package_test.go the Debian package) build only with -tags
// packaging, run by make test-packaging: each test's name starts with
// TestPackaging_, which the target selects.

package main

import (
	"bufio"
	"debug/elf"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
)

// TestPackaging_DockerfileBuildRecipe builds the binary with the
// Dockerfile's own build command (no Docker engine runs here) and checks
// that it is static, as the distroless base needs, and that it runs.
func TestPackaging_DockerfileBuildRecipe(t *testing.T) {
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0 go build .*) -o /out/wpsidecar (\./cmd/wpsidecar)$`).FindSubmatch(df)
	if m == nil {
		t.Fatal("Dockerfile has no `RUN CGO_ENABLED=0 go build … -o /out/wpsidecar ./cmd/wpsidecar` line")
	}
	out := filepath.Join(t.TempDir(), "wpsidecar")
	// The same shell line, writing to a temporary file instead of /out,
	// with the version a build argument would give.
	cmd := exec.Command("sh", "-c", string(m[1])+" -o "+out+" "+string(m[2]))
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "VERSION=1.2.3")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("binary needs a dynamic loader: not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("binary links %v", libs)
	}
	run := exec.Command(out, "--upstream", "http://wordpress", "--check-config")
	run.Env = []string{"WORDPRESS_DB_USER=wp"}
	if b, err := run.CombinedOutput(); err != nil || !strings.Contains(string(b), "http://wordpress") {
		t.Errorf("built binary --check-config: %v\n%s", err, b)
	}
	if b, err := exec.Command(out, "--version").Output(); err != nil || !strings.HasPrefix(string(b), "wpsidecar 1.2.3 (commit ") {
		t.Errorf("built binary --version: %v %q, want version 1.2.3 from the build argument", err, b)
	}
}

// composeConfig is `docker-compose ARGS… config` (files as -f FILE).
func composeConfig(t *testing.T, env []string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("docker-compose")
	if err != nil {
		t.Fatal("docker-compose is not installed (scripts/install-deps.sh installs it)")
	}
	cmd := exec.Command(bin, append(args, "config")...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docker-compose %v config: %v\n%s", args, err, b)
	}
	return string(b)
}

// composeService is a service of compose's normalised output: its
// top-level settings (key: value, as printed) and its environment.
type composeService struct {
	settings map[string]string
	lists    map[string][]string // a setting's list items (command, volumes)
	env      []string
}

// composeServices reads compose's normalised output, by service name.
func composeServices(config string) map[string]*composeService {
	services := map[string]*composeService{}
	var svc *composeService
	section, inEnv, key := "", false, ""
	sc := bufio.NewScanner(strings.NewReader(config))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case !strings.HasPrefix(l, " "):
			section, svc = l, nil
		case section == "services:" && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   "):
			svc = &composeService{settings: map[string]string{}, lists: map[string][]string{}}
			services[strings.TrimSuffix(strings.TrimSpace(l), ":")] = svc
		case svc != nil && strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "     "):
			if item, ok := strings.CutPrefix(l, "    - "); ok {
				svc.lists[key] = append(svc.lists[key], item)
				continue
			}
			k, v, _ := strings.Cut(strings.TrimSpace(l), ":")
			svc.settings[k] = strings.TrimSpace(v)
			inEnv, key = k == "environment", k
		case svc != nil && inEnv && strings.HasPrefix(l, "      "):
			k, v, _ := strings.Cut(strings.TrimSpace(l), ": ")
			svc.env = append(svc.env, k+"="+strings.Trim(v, `'"`))
		}
	}
	return services
}

// serviceEnv reads one service's environment from compose's normalised output.
func serviceEnv(config, service string) []string {
	if svc := composeServices(config)[service]; svc != nil {
		return svc.env
	}
	return nil
}

// sidecarEnv is a sidecar service's environment with the wp-config.php
// the official image generates in place of the one it would mount, and
// that file's path.
func sidecarEnv(t *testing.T, env []string) ([]string, string) {
	t.Helper()
	wp, _ := filepath.Abs("../../config/wpconfig/testdata/wp-config-docker.php")
	env = slices.Clone(env)
	for i, kv := range env {
		if strings.HasPrefix(kv, "WPSIDECAR_WP_CONFIG=") {
			env[i] = "WPSIDECAR_WP_CONFIG=" + wp
		}
	}
	return env, wp
}

// sidecarConfig loads a sidecar service's configuration from its
// environment (sidecarEnv).
func sidecarConfig(t *testing.T, env []string) (*config.Config, string) {
	t.Helper()
	env, wp := sidecarEnv(t, env)
	cfg, _, err := config.Load(nil, env, io.Discard)
	if err != nil {
		t.Fatalf("sidecar configuration from compose: %v", err)
	}
	return cfg, wp
}

func TestPackaging_ComposeFiles(t *testing.T) {
	plain := composeConfig(t, nil, "-f", "docker-compose.yml")
	// Published: the sidecar's public port, and Varnish's in its profile
	// (docker-compose 1.29 lists profiled services too); never the admin
	// port.
	if n := strings.Count(plain, "published:"); n != 2 || !strings.Contains(plain, "published: 8080\n      target: 8080") || strings.Contains(plain, "target: 9090") {
		t.Errorf("%d published ports, want the sidecar's and the varnish profile's:\n%s", n, plain)
	}
	if !strings.Contains(plain, "wordpress:/var/www/html:ro") {
		t.Error("the sidecar does not mount WordPress's volume read-only")
	}
	// Start in order: WordPress waits for the database, the sidecar for
	// both; the sidecar's own check is its binary probing /readyz on the
	// admin port (the image has no shell), which is not published.
	if n := strings.Count(plain, "condition: service_healthy"); n != 4 {
		t.Errorf("%d depends_on health conditions, want 4 (wordpress→db, sidecar→db, sidecar→wordpress, varnish→sidecar)", n)
	}
	if !strings.Contains(plain, "      - /usr/local/bin/wpsidecar\n      - probe\n      - http://127.0.0.1:9090/readyz\n") {
		t.Error("the sidecar's health check does not probe /readyz on the admin port")
	}
	if !strings.Contains(plain, "test -f /var/www/html/wp-config.php && curl") {
		t.Error("WordPress's health check does not wait for wp-config.php")
	}
	env := serviceEnv(plain, "sidecar")
	if !strings.Contains(strings.Join(env, "\n"), "WPSIDECAR_WP_CONFIG=/var/www/html/wp-config.php") {
		t.Fatalf("sidecar env: %q", env)
	}
	// The sidecar's environment, with the generated wp-config.php it would
	// mount, is a valid configuration that reads keys from the file.
	cfg, wp := sidecarConfig(t, env)
	if cfg.Upstream.String() != "http://wordpress:80" || cfg.DB.Host != "db:3306" || !strings.HasPrefix(cfg.Source("auth-key"), wp+":") || cfg.AdminListen != "0.0.0.0:9090" {
		t.Errorf("upstream %s db %s auth-key from %s admin %s", cfg.Upstream, cfg.DB.Host, cfg.Source("auth-key"), cfg.AdminListen)
	}

	// The varnish profile: Varnish with the repository's VCL in front,
	// published; the sidecar purges it when told where it is.
	withVarnish := composeConfig(t, []string{"WPSIDECAR_PURGE_VARNISH=http://varnish"}, "--profile", "varnish", "-f", "docker-compose.yml")
	if !strings.Contains(withVarnish, "deploy/varnish/wpsidecar.vcl:/etc/varnish/default.vcl:ro") ||
		!strings.Contains(strings.Join(serviceEnv(withVarnish, "sidecar"), "\n"), "WPSIDECAR_PURGE_VARNISH=http://varnish") {
		t.Errorf("varnish profile:\n%s", withVarnish)
	}

	keys := keyEnv()
	withKeys := composeConfig(t, keys, "-f", "docker-compose.yml", "-f", "docker-compose.keys.yml")
	for _, svc := range []string{"sidecar", "wordpress"} {
		got := strings.Join(serviceEnv(withKeys, svc), "\n")
		for _, kv := range keys {
			if !strings.Contains(got, kv) {
				t.Errorf("%s lacks %s", svc, kv)
			}
		}
	}
}

// keyEnv sets the eight keys and salts that docker-compose.keys.yml asks
// for, each its own value.
func keyEnv() []string {
	var keys []string
	for i, k := range config.KeyNames {
		keys = append(keys, "WORDPRESS_"+k+"=key"+string(rune('a'+i)))
	}
	return keys
}

// TestPackaging_ComposeScale: docker-compose.scale.yml is valid, publishes
// only the balancer's port, sets the replica up with the official image's
// replication settings, and gives each sidecar a configuration that reads
// the replica and believes only the balancer.
func TestPackaging_ComposeScale(t *testing.T) {
	scale := composeConfig(t, nil, "-f", "docker-compose.scale.yml")
	if n := strings.Count(scale, "published:"); n != 1 || !strings.Contains(scale, "published: 8080\n      target: 80") {
		t.Errorf("%d published ports, want the balancer's 8080 alone", n)
	}
	// The primary's binary log: TestPackaging_ComposeBinlogFeed.
	if !strings.Contains(strings.Join(serviceEnv(scale, "db-replica"), "\n"), "MARIADB_MASTER_HOST=db") || !slices.Contains(composeServices(scale)["db"].lists["command"], "--log-bin") {
		t.Error("no primary with a binary log and a replica of it")
	}
	if !strings.Contains(scale, "./deploy/nginx/scale-lb.conf:/etc/nginx/conf.d/default.conf:ro") && !strings.Contains(scale, "deploy/nginx/scale-lb.conf:/etc/nginx/conf.d/default.conf:ro") {
		t.Error("the balancer does not use deploy/nginx/scale-lb.conf")
	}
	lb, err := os.ReadFile("../../deploy/nginx/scale-lb.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range []string{"sidecar-1", "sidecar-2"} {
		if !strings.Contains(string(lb), "server "+svc+":8080") {
			t.Errorf("the balancer does not send to %s", svc)
		}
		cfg, _ := sidecarConfig(t, serviceEnv(scale, svc))
		if len(cfg.DB.Replicas) != 1 || cfg.DB.Replicas[0].Addr != "db-replica:3306" || len(cfg.TrustedProxies) != 1 || cfg.TrustedProxies[0].String() != "172.28.0.10/32" {
			t.Errorf("%s: replicas %v, trusted %v", svc, cfg.DB.Replicas, cfg.TrustedProxies)
		}
	}
}

// TestPackaging_ComposeGrace: every sidecar of every Compose file is given
// a stop grace period above its lame-duck delay and drain together, as its
// own configuration sets them (the defaults, unless the file changes
// them): stopped sooner, Compose kills it while it drains.
func TestPackaging_ComposeGrace(t *testing.T) {
	for _, files := range [][]string{
		{"--profile", "varnish", "-f", "docker-compose.yml"},
		{"-f", "docker-compose.yml", "-f", "docker-compose.keys.yml"},
		{"-f", "docker-compose.scale.yml"},
	} {
		sidecars := 0
		for name, svc := range composeServices(composeConfig(t, keyEnv(), files...)) {
			if !slices.ContainsFunc(svc.env, func(kv string) bool { return strings.HasPrefix(kv, "WPSIDECAR_UPSTREAM=") }) {
				continue
			}
			sidecars++
			cfg, _ := sidecarConfig(t, svc.env)
			need := cfg.ShutdownDelay + cfg.ShutdownTimeout
			// Compose's own default when the file sets none.
			grace := 10 * time.Second
			if v, ok := svc.settings["stop_grace_period"]; ok {
				var err error
				if grace, err = time.ParseDuration(v); err != nil {
					t.Fatalf("%v %s: stop_grace_period %q: %v", files, name, v, err)
				}
			}
			if grace <= need {
				t.Errorf("%v %s: stop_grace_period %s, not above --shutdown-delay %s + --shutdown-timeout %s", files, name, grace, cfg.ShutdownDelay, cfg.ShutdownTimeout)
			}
		}
		if want := map[bool]int{true: 2, false: 1}[slices.Contains(files, "docker-compose.scale.yml")]; sidecars != want {
			t.Errorf("%v: %d sidecar services, want %d", files, sidecars, want)
		}
	}
}

// TestPackaging_ComposeBinlogFeed: both Compose files start the database
// with the binary log the change feed follows and make the feed's own
// user on its first start; a MariaDB started here with the db service's
// command, given that user by the same script (the image's helpers
// played by the test), feeds a sidecar configured by the sidecar
// service's environment: /readyz says the binlog feed, answers from
// memory.
func TestPackaging_ComposeBinlogFeed(t *testing.T) {
	if f := testdb.ServerFlavor(); f != "mariadb" {
		t.Fatalf("the Compose files run MariaDB; WPSIDECAR_TEST_SERVER names %s", f)
	}
	// A password SQL must escape (a backslash), and that a DSN takes.
	const password = `feed\s3cret`
	for _, c := range []struct{ file, sidecar string }{
		{"docker-compose.yml", "sidecar"},
		{"docker-compose.scale.yml", "sidecar-1"},
	} {
		t.Run(c.file, func(t *testing.T) {
			services := composeServices(composeConfig(t, []string{"WPSIDECAR_FEED_PASSWORD=" + password}, "-f", c.file))
			db, sidecar := services["db"], services[c.sidecar]
			if db == nil || sidecar == nil {
				t.Fatalf("no db or %s service", c.sidecar)
			}
			command := db.lists["command"]
			for _, want := range []string{"--log-bin", "--binlog-format=ROW", "--binlog-row-image=FULL", "--binlog-row-metadata=FULL", "--server-id=1"} {
				if !slices.Contains(command, want) {
					t.Errorf("the db service's command %q lacks %s", command, want)
				}
			}
			// The script the image runs on a first start: mounted into its
			// init folder, and not executable, so that the entrypoint sources
			// it with its helpers (an executable one runs without them).
			var script string
			for _, v := range db.lists["volumes"] {
				if host, ok := strings.CutSuffix(v, ":/docker-entrypoint-initdb.d/wpsidecar-feed-user.sh:ro"); ok {
					script = host
				}
			}
			if fi, err := os.Stat(script); err != nil || fi.Mode()&0o111 != 0 {
				t.Fatalf("the db service's feed user script %q: %v (mode %v): want a readable file, not executable", script, err, fi)
			}

			srv := testdb.StartServerWith(t, testdb.ServerOptions{Args: command})
			port := strconv.Itoa(srv.Port)
			initdb := exec.Command("bash", "-c", `set -eo pipefail
docker_process_sql() { mariadb --no-defaults --protocol=tcp -h127.0.0.1 -P"$PORT" -uroot "$@"; }
docker_sql_escape_string_literal() { local s=${1//\\/\\\\}; s=${s//$'\n'/\\n}; printf '%s\n' "${s//\'/\\\'}"; }
mysql_note() { echo "note: $*"; }
mysql_error() { echo "error: $*" >&2; exit 1; }
. "$SCRIPT"`)
			initdb.Env = append(append(os.Environ(), db.env...), "PORT="+port, "SCRIPT="+script)
			if out, err := initdb.CombinedOutput(); err != nil {
				t.Fatalf("the feed user script: %v\n%s", err, out)
			}

			tdb := testdb.NewOn(t, srv.Config())
			var logBin int
			var format, image, metadata string
			if err := tdb.SQL.QueryRow("SELECT @@log_bin, @@binlog_format, @@binlog_row_image, @@binlog_row_metadata").Scan(&logBin, &format, &image, &metadata); err != nil {
				t.Fatal(err)
			}
			if logBin != 1 || format != "ROW" || image != "FULL" || metadata != "FULL" {
				t.Errorf("log_bin %d, binlog_format %s, binlog_row_image %s, binlog_row_metadata %s", logBin, format, image, metadata)
			}

			// The sidecar as the service configures it, its database and
			// the feed's DSN pointed at this server instead of db:3306.
			testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: "abcdefghijklmnopqrstuvwx"})
			php := httptest.NewServer(http.NotFoundHandler())
			defer php.Close()
			env, _ := sidecarEnv(t, sidecar.env)
			dsn := ""
			// The feed is what is checked here: no replica (the scale file's
			// is checked by TestPackaging_ComposeScale).
			env = slices.DeleteFunc(env, func(kv string) bool {
				return strings.HasPrefix(kv, "WPSIDECAR_DB_REPLICA=") || strings.HasPrefix(kv, "WPSIDECAR_MAX_REPLICA_LAG=")
			})
			for i, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "WPSIDECAR_BINLOG_DSN":
					dsn = v
					env[i] = k + "=" + strings.Replace(v, "tcp(db:3306)", "tcp(127.0.0.1:"+port+")", 1)
				case "WORDPRESS_DB_HOST":
					env[i] = k + "=127.0.0.1:" + port
				case "WORDPRESS_DB_USER":
					env[i] = k + "=root"
				case "WORDPRESS_DB_PASSWORD":
					env[i] = k + "="
				case "WORDPRESS_DB_NAME":
					env[i] = k + "=" + tdb.Name
				case "WORDPRESS_TABLE_PREFIX":
					env[i] = k + "=" + testdb.Prefix
				}
			}
			if want := "wpsidecar_feed:" + password + "@tcp(db:3306)/"; dsn != want {
				t.Errorf("the sidecar's WPSIDECAR_BINLOG_DSN %q, want %q", dsn, want)
			}
			s := start(t, []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--upstream", php.URL, "--environment-type", "local"}, env)
			defer s.stop()
			waitReadyz(t, s, map[string]string{"change_feed": "binlog", "database": "ok", "leader": "yes", "serve_from_feed": "memory", "upstream": "ok"})
		})
	}
}

// Package wptest stands up a real WordPress (Debian's packages: PHP-FPM,
// nginx, the wordpress package) on loopback with the sidecar in front, for
// end-to-end tests: real cookies from wp-login.php, real REST nonces, real
// application passwords, and PHP's own view of the options.
//
// Start it once per test run (TestMain) and Stop it at the end; Stop ends
// exactly the processes Start started and drops the database it made.
//
// The stack is the machine's unless the environment says otherwise:
//
//   - WPSIDECAR_TEST_WORDPRESS: the WordPress tree the site is copied from
//     (default Debian's /usr/share/wordpress; scripts/stacks.sh builds
//     others in .cache/stacks/wordpress/);
//   - WPSIDECAR_TEST_PHP: "" for the machine's php-fpm and php, "chroot"
//     for those of scripts/stacks.sh's Debian sid chroot (PHP 8.4) in
//     WPSIDECAR_STACKS (default .cache/stacks): the site's files then live
//     in the chroot's /srv, where nginx here and PHP there both see them;
//   - WPSIDECAR_TEST_DSN: the database server; on MySQL the site's
//     database and user are made with the chroot's mysql client, when
//     there is one.
package wptest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
)

// User is one of the test users users.php creates.
type User struct {
	ID                  int64  `json:"id"`
	Login               string `json:"login"`
	Email               string `json:"email"`
	Password            string `json:"password"`
	ApplicationPassword string `json:"application_password"`
	ApplicationUUID     string `json:"application_uuid"`
}

// Site is a running WordPress with the sidecar in front.
type Site struct {
	Dir        string // state: docroot, configs, logs
	Docroot    string
	PHPDocroot string // Docroot as PHP sees it (inside its chroot, with WPSIDECAR_TEST_PHP=chroot)
	WPConfig   string
	WPURL      string // nginx serving WordPress directly
	URL        string // the sidecar: the site's public URL
	Bin        string // the sidecar binary
	AdminURL   string // the sidecar's admin listener
	DBName     string
	Users      map[string]User // by role name: administrator, editor, author, subscriber, granted, denied
	repo       string
	phpRoot    string // the chroot PHP runs in; "" for the machine's
	db         *sql.DB
	dbc        *mysql.Config
	env        []string
	// Sidecar is the site's own instance, at URL and AdminURL.
	Sidecar   *Sidecar
	instances []*Sidecar // StartInstance's
	// Redis is the object cache's server (host:port) and RedisPrefix the
	// salt before the site's keys, when Options.RedisObjectCache is set.
	Redis       string
	RedisPrefix string
	// CompanionSecret is WPSIDECAR_COMPANION_SECRET, with Options.Companion.
	CompanionSecret string
	// VarnishURL is the Varnish in front of the sidecar, with Options.Varnish.
	VarnishURL string
	varnish    *exec.Cmd
	// Network is the multisite network, with Options.Network.
	Network *Network
}

// Network is what scripts/wp/network.php made: sites by name ("two",
// "three"; site 1 is the network's domain at /) and users by name (super,
// site12admin, site3admin, subscriber).
type Network struct {
	Domain string
	Sites  map[string]struct {
		ID     int64  `json:"id"`
		Domain string `json:"domain"`
		Path   string `json:"path"`
	} `json:"sites"`
	Users map[string]struct {
		ID                  int64  `json:"id"`
		Login               string `json:"login"`
		Password            string `json:"password"`
		ApplicationPassword string `json:"application_password"`
	} `json:"users"`
}

// Options adjust the site.
type Options struct {
	// EnvironmentType is WP_ENVIRONMENT_TYPE; "local" (the default) lets
	// WordPress accept application passwords over plain HTTP.
	EnvironmentType string
	// SidecarArgs are extra flags for the sidecar.
	SidecarArgs []string
	// RedisObjectCache gives WordPress a persistent object cache in the
	// Redis at WPSIDECAR_TEST_REDIS (default 127.0.0.1:6379): the test
	// drop-in scripts/wp/object-cache-redis.php, with a WP_REDIS_PREFIX of
	// the site's own (Site.RedisPrefix). The sidecar finds it by itself.
	RedisObjectCache bool
	// Companion installs the companion plugin (wordpress/) and the tests'
	// switches for it (scripts/wp/companion-test.php) as must-use plugins,
	// with a secret of the site's own (Site.CompanionSecret) in
	// wp-config.php, which the sidecar reads from there.
	Companion bool
	// MUPlugins are more must-use plugins, paths relative to the repository.
	MUPlugins []string
	// DB is the database server (its root), when not WPSIDECAR_TEST_DSN's
	// or the machine's: one with a binary log, for the change feed.
	DB *mysql.Config
	// NoSidecar stands up WordPress alone: the caller starts sidecars
	// (Bin is built) and whatever listens on URL.
	NoSidecar bool
	// Network, "subdomain" or "subdirectory", turns WordPress into a
	// multisite network on NetworkDomain (default "net.test") with
	// scripts/wp/network.php: sites two and three, users in some sites and
	// not others (Site.Network). Requests reach its sites by Host header.
	Network       string
	NetworkDomain string
	// Varnish puts Debian's Varnish (with varnish-modules) in front of the
	// sidecar at Site.VarnishURL, with deploy/varnish/wpsidecar.vcl, and has
	// the sidecar purge it: through VarnishPurge when set (a proxy of the
	// test's in front of it), with VarnishTTL as Varnish's default_ttl
	// when set (what it keeps an answer without Cache-Control for).
	Varnish      bool
	VarnishPurge func(varnishURL string) string
	VarnishTTL   time.Duration
}

// purgeVia is where the sidecar sends a Varnish's purges.
func (o Options) purgeVia(varnish string) string {
	if o.VarnishPurge != nil {
		return o.VarnishPurge(varnish)
	}
	return varnish
}

// Start builds the sidecar, stands up WordPress and starts the sidecar in
// front of it. It takes a few seconds.
func Start(o Options) (s *Site, err error) {
	repo, err := repoRoot()
	if err != nil {
		return nil, err
	}
	if o.EnvironmentType == "" {
		o.EnvironmentType = "local"
	}
	phpRoot, err := phpChroot(repo)
	if err != nil {
		return nil, err
	}
	// With a chrooted PHP the site lives in the chroot, for both sides.
	tmp := ""
	if phpRoot != "" {
		tmp = filepath.Join(phpRoot, "srv")
	}
	dir, err := os.MkdirTemp(tmp, "wpsidecar-e2e-")
	if err != nil {
		return nil, err
	}
	s = &Site{Dir: dir, Docroot: filepath.Join(dir, "wp", "wordpress"), repo: repo, phpRoot: phpRoot}
	s.PHPDocroot = s.phpPath(s.Docroot)
	s.WPConfig = filepath.Join(s.Docroot, "wp-config.php")
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()

	dbc, err := testDSN()
	if o.DB != nil {
		dbc, err = o.DB.Clone(), nil
	}
	if err != nil {
		return s, err
	}
	s.dbc = dbc
	ports, err := freePorts(5)
	if err != nil {
		return s, err
	}
	s.WPURL = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	s.URL = fmt.Sprintf("http://127.0.0.1:%d", ports[2])
	s.AdminURL = fmt.Sprintf("http://127.0.0.1:%d", ports[3])
	s.DBName = "wpsidecar_e2e_" + randomHex(4)
	admin := dbc.Clone()
	admin.DBName = ""
	if s.db, err = sql.Open("mysql", admin.FormatDSN()); err != nil {
		return s, err
	}
	mysqlAdmin, err := s.mysqlAdmin(repo, dbc)
	if err != nil {
		return s, err
	}
	s.env = append(os.Environ(),
		"WP_PORT="+strconv.Itoa(ports[0]), "WP_PROXY_PORT="+strconv.Itoa(ports[1]),
		"WP_SITEURL="+s.URL, "WP_DB_NAME="+s.DBName, "WP_DB_HOST="+dbc.Addr,
		"WP_ENVIRONMENT_TYPE="+o.EnvironmentType, "MYSQL_ADMIN="+mysqlAdmin,
		"WP_HTTP_HOST="+strings.TrimPrefix(s.URL, "http://"),
	)
	if src := os.Getenv("WPSIDECAR_TEST_WORDPRESS"); src != "" {
		s.env = append(s.env, "WP_SOURCE="+src)
	}
	if phpRoot != "" {
		s.env = append(s.env, "WP_PHP_CHROOT="+phpRoot)
	}
	extra := ""
	if o.RedisObjectCache {
		s.Redis = os.Getenv("WPSIDECAR_TEST_REDIS")
		if s.Redis == "" {
			s.Redis = "127.0.0.1:6379"
		}
		rhost, rport, err := net.SplitHostPort(s.Redis)
		if err != nil {
			return s, fmt.Errorf("WPSIDECAR_TEST_REDIS %q: %v", s.Redis, err)
		}
		s.RedisPrefix = "wpsidecar_e2e_" + randomHex(4) + "_"
		s.env = append(s.env, "WP_OBJECT_CACHE="+filepath.Join(repo, "scripts", "wp", "object-cache-redis.php"))
		extra += fmt.Sprintf("define( 'WP_REDIS_HOST', %q );\ndefine( 'WP_REDIS_PORT', %s );\ndefine( 'WP_REDIS_PREFIX', %q );\n", rhost, rport, s.RedisPrefix)
	}
	muPlugins := o.MUPlugins
	if o.Companion {
		s.CompanionSecret = randomHex(16)
		muPlugins = append(muPlugins, "wordpress/wpsidecar-companion.php", "scripts/wp/companion-test.php")
		extra += fmt.Sprintf("define( 'WPSIDECAR_COMPANION_SECRET', %q );\ndefine( 'WPSIDECAR_COMPANION_INTERVAL', 0 );\n", s.CompanionSecret)
	}
	var mu []string
	for _, p := range muPlugins {
		mu = append(mu, filepath.Join(repo, p))
	}
	s.env = append(s.env, "WP_MU_PLUGINS="+strings.Join(mu, " "))
	s.env = append(s.env, "WP_CONFIG_EXTRA="+extra)

	if out, err := s.command(filepath.Join(repo, "scripts", "wordpress.sh"), "start", filepath.Join(dir, "wp")).CombinedOutput(); err != nil {
		return s, fmt.Errorf("wordpress.sh start: %v\n%s", err, out)
	}
	out, err := s.php("users.php").Output()
	if err != nil {
		return s, fmt.Errorf("users.php: %v\n%s", err, stderrOf(err))
	}
	if err := json.Unmarshal(out, &s.Users); err != nil {
		return s, fmt.Errorf("users.php output: %v\n%s", err, out)
	}

	if o.Network != "" {
		if err := s.makeNetwork(o.Network, o.NetworkDomain); err != nil {
			return s, err
		}
	}

	s.Bin = filepath.Join(dir, "wpsidecar")
	build := exec.Command("go", "build", "-o", s.Bin, "./cmd/wpsidecar")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		return s, fmt.Errorf("go build: %v\n%s", err, out)
	}
	if o.NoSidecar {
		return s, nil
	}
	args := append([]string{"--upstream", s.WPURL, "--wp-config", s.WPConfig, "--settings-refresh", "200ms", "--shutdown-delay", "0"}, o.SidecarArgs...)
	if o.Varnish {
		s.VarnishURL = fmt.Sprintf("http://127.0.0.1:%d", ports[4])
		args = append(args, "--purge-varnish", o.purgeVia(s.VarnishURL))
	}
	s.Sidecar = &Sidecar{URL: s.URL, AdminURL: s.AdminURL, bin: s.Bin, args: args, logPath: filepath.Join(dir, "sidecar.log")}
	if err := s.Sidecar.start(); err != nil {
		return s, err
	}
	if o.Varnish {
		if err := s.startVarnish(o.VarnishTTL); err != nil {
			return s, err
		}
	}
	return s, nil
}

// makeNetwork turns the site into a multisite network (network.php).
func (s *Site) makeNetwork(mode, domain string) error {
	if domain == "" {
		domain = "net.test"
	}
	consts, err := s.php("network.php", "install", mode, domain).Output()
	if err != nil {
		return fmt.Errorf("network.php install: %v\n%s", err, stderrOf(err))
	}
	cfg, err := os.ReadFile(s.WPConfig)
	if err != nil {
		return err
	}
	const before = "\nif ( ! defined( 'ABSPATH' ) )"
	if !bytes.Contains(cfg, []byte(before)) {
		return errors.New("wptest: wp-config.php has no ABSPATH block to put the network's constants before")
	}
	cfg = bytes.Replace(cfg, []byte(before), append(append([]byte("\n"), consts...), before...), 1)
	if err := os.WriteFile(s.WPConfig, cfg, 0o644); err != nil {
		return err
	}
	out, err := s.php("network.php", "sites", domain).Output()
	if err != nil {
		return fmt.Errorf("network.php sites: %v\n%s", err, stderrOf(err))
	}
	// PHP run by the tests finds the network's main site by its domain.
	s.env = append(s.env, "WP_HTTP_HOST="+domain)
	s.Network = &Network{Domain: domain}
	if err := json.Unmarshal(out, s.Network); err != nil {
		return fmt.Errorf("network.php sites printed %q: %v", out, err)
	}
	return nil
}

// startVarnish runs varnishd in the foreground of a process of its own,
// with the repository's VCL pointed at the sidecar.
func (s *Site) startVarnish(ttl time.Duration) error {
	vcl, err := os.ReadFile(filepath.Join(s.repo, "deploy", "varnish", "wpsidecar.vcl"))
	if err != nil {
		return err
	}
	_, sidecarPort, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	local := strings.NewReplacer(`.host = "sidecar";`, `.host = "127.0.0.1";`, `.port = "8080";`, `.port = "`+sidecarPort+`";`,
		`    "sidecar";`, `    "127.0.0.1";`).Replace(string(vcl))
	// varnishd reads the VCL after dropping to its own user.
	dir := filepath.Join(s.Dir, "varnish-conf")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(s.Dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "wpsidecar.vcl")
	if err := os.WriteFile(path, []byte(local), 0o644); err != nil {
		return err
	}
	bin, err := exec.LookPath("varnishd")
	if err != nil {
		bin = "/usr/sbin/varnishd"
	}
	args := []string{"-F", "-a", strings.TrimPrefix(s.VarnishURL, "http://"), "-f", path,
		"-n", filepath.Join(s.Dir, "varnish"), "-s", "malloc,64m", "-p", "default_grace=0"}
	if ttl > 0 {
		args = append(args, "-p", fmt.Sprintf("default_ttl=%d", int(ttl.Seconds())))
	}
	s.varnish = exec.Command(bin, args...)
	s.varnish.Stdout, s.varnish.Stderr = s.Sidecar.log, s.Sidecar.log
	s.varnish.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.varnish.Start(); err != nil {
		return fmt.Errorf("varnishd (scripts/install-deps.sh installs varnish and varnish-modules): %w", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(s.VarnishURL + "/")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("varnish not answering: %v\n%s", err, s.SidecarLog())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop stops the sidecar and WordPress and removes what Start made.
func (s *Site) Stop() {
	// The sidecars first: their last purges reach Varnish.
	for _, c := range append(s.instances, s.Sidecar) {
		if c != nil {
			c.stop()
		}
	}
	if s.varnish != nil {
		StopProcess(s.varnish) // the manager stops its child
	}
	if s.repo != "" {
		s.command(filepath.Join(s.repo, "scripts", "wordpress.sh"), "stop", filepath.Join(s.Dir, "wp")).Run()
	}
	if s.RedisPrefix != "" {
		s.dropRedisKeys()
	}
	if s.db != nil {
		if s.DBName != "" {
			s.db.Exec("DROP DATABASE IF EXISTS " + s.DBName)
		}
		s.db.Close()
	}
	if os.Getenv("WPSIDECAR_KEEP_E2E") == "" {
		os.RemoveAll(s.Dir)
	}
}

// WordPress runs scripts/wordpress.sh CMD on the site: php-stop and
// php-start stop and start PHP-FPM alone.
func (s *Site) WordPress(cmd string) error {
	if out, err := s.command(filepath.Join(s.repo, "scripts", "wordpress.sh"), cmd, filepath.Join(s.Dir, "wp")).CombinedOutput(); err != nil {
		return fmt.Errorf("wordpress.sh %s: %v\n%s", cmd, err, out)
	}
	return nil
}

// RedisClient is a client of the site's object cache.
func (s *Site) RedisClient() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Redis, Protocol: 2, DisableIdentity: true})
}

func (s *Site) dropRedisKeys() {
	c := s.RedisClient()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, s.RedisPrefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if len(keys) > 0 {
		c.Del(ctx, keys...)
	}
}

// SidecarLog is what the site's own sidecar (and its Varnish) logged so far.
func (s *Site) SidecarLog() string {
	if s.Sidecar == nil {
		return ""
	}
	return s.Sidecar.Log()
}

func (s *Site) command(name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Env = s.env
	return c
}

// php is the php CLI of the PHP serving the site running scripts/wp/NAME
// DOCROOT ARGS…: the machine's, or the chroot's on the copy of
// scripts/wp that wordpress.sh put in the state dir.
func (s *Site) php(name string, args ...string) *exec.Cmd {
	if s.phpRoot == "" {
		return s.command("php", append([]string{filepath.Join(s.repo, "scripts", "wp", name), s.Docroot}, args...)...)
	}
	script := s.phpPath(filepath.Join(s.Dir, "wp", "scripts", "wp", name))
	return s.command("chroot", append([]string{s.phpRoot, "php", script, s.PHPDocroot}, args...)...)
}

// phpPath is the path p as PHP sees it.
func (s *Site) phpPath(p string) string {
	if s.phpRoot == "" {
		return p
	}
	return "/" + strings.TrimPrefix(strings.TrimPrefix(p, s.phpRoot), "/")
}

// stacksDir is where scripts/stacks.sh builds: WPSIDECAR_STACKS, else
// .cache/stacks in the repository.
func stacksDir(repo string) string {
	if d := os.Getenv("WPSIDECAR_STACKS"); d != "" {
		return d
	}
	return filepath.Join(repo, ".cache", "stacks")
}

// phpChroot reads WPSIDECAR_TEST_PHP: the chroot whose PHP serves the
// site, or "" for the machine's.
func phpChroot(repo string) (string, error) {
	switch v := os.Getenv("WPSIDECAR_TEST_PHP"); v {
	case "":
		return "", nil
	case "chroot":
		root, err := filepath.Abs(filepath.Join(stacksDir(repo), "sid"))
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(filepath.Join(root, "usr", "bin", "php")); err != nil {
			return "", fmt.Errorf("WPSIDECAR_TEST_PHP=chroot: no PHP in %s: run scripts/stacks.sh build (WPSIDECAR_STACKS names where it builds)", root)
		}
		if os.Geteuid() != 0 {
			return "", errors.New("WPSIDECAR_TEST_PHP=chroot runs PHP in a chroot, which needs root")
		}
		return root, nil
	default:
		return "", fmt.Errorf("WPSIDECAR_TEST_PHP=%q: want empty (the machine's PHP) or chroot", v)
	}
}

// mysqlAdmin is wordpress.sh's MYSQL_ADMIN for the server dbc names: the
// machine's mariadb client, or on MySQL the mysql client of the stacks'
// chroot when it is built (MariaDB's client need not speak MySQL's
// caching_sha2_password with a password; MySQL's own does).
func (s *Site) mysqlAdmin(repo string, dbc *mysql.Config) (string, error) {
	host, port, _ := net.SplitHostPort(dbc.Addr)
	client := "mariadb"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var version string
	if err := s.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return "", fmt.Errorf("database server at %s: %w", dbc.Addr, err)
	}
	if !strings.Contains(version, "MariaDB") {
		root, err := filepath.Abs(filepath.Join(stacksDir(repo), "sid"))
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(filepath.Join(root, "usr", "bin", "mysql")); err == nil && !strings.ContainsAny(root, " \t'\"") {
			client = "chroot " + root + " mysql"
		}
	}
	a := fmt.Sprintf("%s --protocol=tcp -h%s -P%s -u%s", client, host, port, dbc.User)
	if dbc.Passwd != "" {
		a += " -p" + dbc.Passwd
	}
	return a, nil
}

// PHP runs code inside WordPress (after wp-load.php) and decodes what it
// returns, JSON-encoded by PHP, into out (when out is not nil).
func (s *Site) PHP(t testing.TB, code string, out any) {
	t.Helper()
	s.Script(t, "eval.php", out, code)
}

// Script runs scripts/wp/NAME DOCROOT ARGS… with the site's environment and
// decodes the JSON it prints into out (when out is not nil).
func (s *Site) Script(t testing.TB, name string, out any, args ...string) {
	t.Helper()
	b, err := s.php(name, args...).Output()
	if err != nil {
		t.Fatalf("php %s %q: %v\n%s", name, args, err, stderrOf(err))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("php %s %q printed %q: %v", name, args, b, err)
		}
	}
}

// DB is a connection to the site's database.
func (s *Site) DB(t testing.TB) *sql.DB {
	t.Helper()
	c := s.dbc.Clone()
	c.DBName = s.DBName
	db, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Client is an HTTP client with a cookie jar that does not follow
// redirects, so tests see them.
func Client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{
		Jar:           jar,
		Timeout:       60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Login logs u in through wp-login.php on the sidecar, as a browser does,
// and returns a client holding the cookies WordPress set.
func (s *Site) Login(t testing.TB, u User) *http.Client {
	t.Helper()
	c := Client()
	base, _ := url.Parse(s.URL)
	c.Jar.SetCookies(base, []*http.Cookie{{Name: "wordpress_test_cookie", Value: "WP%20Cookie%20check", Path: "/"}})
	form := url.Values{"log": {u.Login}, "pwd": {u.Password}, "wp-submit": {"Log In"}, "testcookie": {"1"}, "redirect_to": {s.URL + "/wp-admin/"}}
	resp, err := c.PostForm(s.URL+"/wp-login.php", form)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// Users who cannot edit posts are sent to their profile instead.
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || (loc != s.URL+"/wp-admin/" && loc != s.URL+"/wp-admin/profile.php") {
		t.Fatalf("login as %s: %d Location %q", u.Login, resp.StatusCode, resp.Header.Get("Location"))
	}
	return c
}

// RESTNonce asks WordPress for a wp_rest nonce for the logged-in client,
// the way the block editor refreshes its nonce.
func (s *Site) RESTNonce(t testing.TB, c *http.Client) string {
	t.Helper()
	resp, err := c.Get(s.URL + "/wp-admin/admin-ajax.php?action=rest-nonce")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	nonce := strings.TrimSpace(string(b))
	if resp.StatusCode != 200 || len(nonce) != 10 {
		t.Fatalf("rest-nonce: %d %q", resp.StatusCode, b)
	}
	return nonce
}

// BasicAuth is the Authorization header value for login and password.
func BasicAuth(login, password string) string {
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth(login, password)
	return req.Header.Get("Authorization")
}

func testDSN() (*mysql.Config, error) {
	dsn := os.Getenv("WPSIDECAR_TEST_DSN")
	if dsn == "" {
		dsn = "root@tcp(127.0.0.1:3306)/"
	}
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("WPSIDECAR_TEST_DSN: %w", err)
	}
	if c.Net != "tcp" {
		return nil, errors.New("WPSIDECAR_TEST_DSN: the end-to-end site needs a TCP address")
	}
	return c, nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for ; dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
	}
	return "", errors.New("wptest: no go.mod above the working directory")
}

// freePorts are n loopback ports free now, for nginx, its proxy port, the
// sidecar's two listeners and Varnish. These are picked, not bound by the
// servers themselves (as testdb's MariaDB does): WordPress is installed
// with the sidecar's URL as its home before any of them runs, nginx's and
// PHP-FPM's configurations are written with their ports, and none of
// nginx, the sidecar or varnishd takes a listening socket from its parent.
// The window between the pick and the bind is the start of one suite,
// once per run; a port taken in it makes Start fail, saying which.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func waitReady(u string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		resp, err := http.Get(u)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			err = fmt.Errorf("%d %s", resp.StatusCode, bytes.TrimSpace(b))
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return last
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

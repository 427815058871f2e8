//go:build e2e

package e2e

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// front is a web server of Debian's (nginx, Apache, Caddy) serving the
// test WordPress itself through PHP-FPM, with the shipped recipe sending
// the namespaces to a sidecar whose --upstream is that same server.
type front struct {
	url         string // the web server
	secret      string // the marker's secret in its recipe
	sidecarPort int
	sidecar     *exec.Cmd
	exited      chan struct{} // closed once the sidecar has exited
	log         string        // the sidecar's log file
	admin       string
	site        *wptest.Site // the WordPress it serves
	args        []string     // more of the sidecar's arguments
}

// freePort asks the kernel for a loopback port nobody uses.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// recipe reads a shipped recipe with the sidecar's address made the
// test's.
func recipe(t *testing.T, path string, sidecarPort int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "127.0.0.1:8080", fmt.Sprintf("127.0.0.1:%d", sidecarPort))
}

// frontConfig writes the configuration of the web server kind, listening
// on port, with its recipe sending the namespaces to the sidecar on
// sidecarPort and the marker's secret (none when ""), into dir; it returns
// the command that runs the server and the one that checks the
// configuration.
func frontConfig(t *testing.T, kind, dir string, port, sidecarPort int, secret string) (run, check *exec.Cmd) {
	t.Helper()
	return frontConfigFor(t, site, kind, dir, port, sidecarPort, secret)
}

// frontConfigFor is frontConfig for the WordPress of site.
func frontConfigFor(t *testing.T, site *wptest.Site, kind, dir string, port, sidecarPort int, secret string) (run, check *exec.Cmd) {
	t.Helper()
	sock := filepath.Join(site.Dir, "wp", "php-fpm.sock")
	root := os.Geteuid() == 0
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var cmd *exec.Cmd
	switch kind {
	case "nginx":
		up := write("wpsidecar-upstream.conf", recipe(t, "deploy/nginx/wpsidecar-upstream.conf", sidecarPort))
		snippet := write("wpsidecar.conf", recipe(t, "deploy/nginx/wpsidecar.conf", sidecarPort))
		user := ""
		if root {
			user = "user root;"
		}
		// The secret as the recipe asks for it, in the http context.
		if secret != "" {
			secret = fmt.Sprintf(`map $host $wpsidecar_secret { default "%s"; }`, secret)
		}
		conf := write("nginx.conf", fmt.Sprintf(`%s
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
daemon off;
events { worker_connections 256; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path %[2]s/body;
  proxy_temp_path %[2]s/proxy;
  fastcgi_temp_path %[2]s/fastcgi;
  uwsgi_temp_path %[2]s/uwsgi;
  scgi_temp_path %[2]s/scgi;
  %[8]s
  include %[3]s;
  server {
    listen 127.0.0.1:%[4]d;
    root %[5]s;
    index index.php;
    include %[6]s;
    location / { try_files $uri $uri/ /index.php?$args; }
    location ~ \.php$ {
      try_files $uri =404;
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
      fastcgi_param HTTPS $wpsidecar_https if_not_empty;
      fastcgi_param HTTP_X_WPSIDECAR_PASSED "" if_not_empty;
      fastcgi_param HTTP_HOST $http_host;
      fastcgi_pass unix:%[7]s;
    }
  }
}
`, user, dir, up, port, site.Docroot, snippet, sock, secret))
		cmd = exec.Command("nginx", "-c", conf, "-p", dir)
		check = exec.Command("nginx", "-t", "-c", conf, "-p", dir)
	case "apache":
		snippet := write("wpsidecar.conf", recipe(t, "deploy/apache/wpsidecar.conf", sidecarPort))
		user := ""
		if root {
			user = "User www-data\nGroup www-data"
		}
		// The secret as the recipe asks for it, before its Include.
		if secret != "" {
			secret = "Define WPSIDECAR_SECRET " + secret
		}
		conf := write("apache2.conf", fmt.Sprintf(`%[3]sLogLevel warn
Listen 127.0.0.1:%[2]d
%[4]s
<VirtualHost 127.0.0.1:%[2]d>
    DocumentRoot %[5]s
    %[8]s
    Include %[6]s
    <Directory %[5]s>
        Require all granted
        AllowOverride None
        DirectoryIndex index.php
        CGIPassAuth On
        # WordPress's own .htaccess rules (pretty permalinks).
        RewriteEngine On
        RewriteBase /
        RewriteRule ^index\.php$ - [L]
        RewriteCond %%{REQUEST_FILENAME} !-f
        RewriteCond %%{REQUEST_FILENAME} !-d
        RewriteRule . /index.php [L]
    </Directory>
    <FilesMatch "\.php$">
        SetHandler "proxy:unix:%[7]s|fcgi://localhost"
    </FilesMatch>
</VirtualHost>
`, dir, port, apacheServer(dir, "rewrite", "proxy", "proxy_http", "proxy_fcgi", "headers"), user, site.Docroot, snippet, sock, secret))
		cmd = exec.Command("apache2", "-f", conf, "-DFOREGROUND")
		check = exec.Command("apache2", "-t", "-f", conf)
	case "caddy":
		snippet := write("wpsidecar.caddy", recipe(t, "deploy/caddy/wpsidecar.caddy", sidecarPort))
		conf := write("Caddyfile", fmt.Sprintf(`{
	admin off
	auto_https off
	storage file_system %[1]s/data
}
import %[2]s
http://:%[3]d {
	bind 127.0.0.1
	root * %[4]s
	import wpsidecar %[6]s
	php_fastcgi unix/%[5]s
	file_server
}
`, dir, snippet, port, site.Docroot, sock, secret))
		env := append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
		cmd = exec.Command("caddy", "run", "--config", conf, "--adapter", "caddyfile")
		check = exec.Command("caddy", "validate", "--config", conf, "--adapter", "caddyfile")
		cmd.Env, check.Env = env, env
	}
	return cmd, check
}

// startFront starts the web server kind on a free port with its recipe and
// a secret of its own for the marker, and a sidecar behind it (upstream:
// that server; trusting it).
func startFront(t *testing.T, kind string) *front {
	t.Helper()
	return startFrontWith(t, kind, randomSecret())
}

// randomSecret is a marker's secret as the recipes ask for it.
func randomSecret() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// startFrontWith is startFront with the marker's secret given ("": none).
func startFrontWith(t *testing.T, kind, secret string) *front {
	t.Helper()
	return startFrontFor(t, site, kind, secret)
}

// startFrontFor is startFrontWith for the WordPress of site, with more of
// the sidecar's arguments (e.g. its --themeopts-config).
func startFrontFor(t *testing.T, site *wptest.Site, kind, secret string, sidecarArgs ...string) *front {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755) // Apache's workers run as www-data
	port := freePort(t)
	f := &front{url: fmt.Sprintf("http://127.0.0.1:%d", port), secret: secret, log: filepath.Join(dir, "sidecar.log"), site: site, args: sidecarArgs}
	// The sidecar first, so that the recipe names the port it holds.
	f.startSidecar(t)
	cmd, _ := frontConfigFor(t, site, kind, dir, port, f.sidecarPort, secret)
	out, err := os.Create(filepath.Join(dir, kind+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s (scripts/install-deps.sh installs it): %v", kind, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("%s error log:\n%s", kind, b)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	// Answered by this web server, not by whatever else took the port
	// found free (another test's server answered "404 page not found").
	waitStarted(t, out.Name(), func() bool {
		resp, err := http.Get(f.url + "/wp-login.php")
		if err != nil {
			return false
		}
		resp.Body.Close()
		if server := resp.Header.Get("Server"); !strings.Contains(strings.ToLower(server), kind) {
			t.Fatalf("%s's port %d answered by another server (Server: %q)", kind, port, server)
		}
		return true
	})
	waitStarted(t, f.log, func() bool {
		resp, err := http.Get(f.admin + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return f
}

// startSidecar starts the front's sidecar on ports freePort found. A port
// found free may be taken before the sidecar binds it (by any connection's
// local end): then it starts again on others.
func (f *front) startSidecar(t *testing.T) {
	t.Helper()
	for try := 1; ; try++ {
		logf, err := os.OpenFile(f.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.sidecarPort, f.admin = freePort(t), fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
		cmd := exec.Command(f.site.Bin, append([]string{"--listen", fmt.Sprintf("127.0.0.1:%d", f.sidecarPort), "--admin-listen", strings.TrimPrefix(f.admin, "http://"),
			"--upstream", f.url, "--trusted-proxies", "127.0.0.1", "--wp-config", f.site.WPConfig, "--shutdown-delay", "0", "--log-level", "info"}, f.args...)...)
		cmd.Env = []string{}
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		f.sidecar = cmd
		t.Cleanup(func() { stopWaited(cmd, exited); logf.Close() })
		// Listening (its admin listener answers), or gone.
		waitStarted(t, f.log, func() bool {
			select {
			case <-exited:
				return true
			default:
			}
			resp, err := http.Get(f.admin + "/healthz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return true
		})
		select {
		case <-exited:
			b, _ := os.ReadFile(f.log)
			if try < 5 && strings.Contains(string(b), "address already in use") {
				continue
			}
			t.Fatalf("the sidecar stopped:\n%s", b)
		default:
			f.exited = exited
			return
		}
	}
}

// waitStarted waits for a server to answer; a test that fails shows the
// server's output.
func waitStarted(t *testing.T, output string, up func() bool) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(output)
			t.Logf("%s:\n%s", output, b)
		}
	})
	testwait.For(t, "the server answering", up)
}

// stopWaited is wptest.StopProcess for a process whose Wait already runs: exited
// closes when it returns.
func stopWaited(cmd *exec.Cmd, exited <-chan struct{}) {
	select {
	case <-exited:
		return
	default:
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
}

// accessLines are the sidecar's access-log lines for path so far.
func (f *front) accessLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, _ := os.ReadFile(f.log)
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["message"] == "request" && m["path"] == path {
			out = append(out, m)
		}
	}
	return out
}

// fromClient is a client whose connections come from 127.0.0.2: the
// address the sidecar must log, not the web server's 127.0.0.1.
var fromClient = &http.Client{
	Transport:     &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func askFront(t *testing.T, base, method, target string, hdr ...string) answer {
	t.Helper()
	a, _ := askFrontHeader(t, base, method, target, hdr...)
	return a
}

// askFrontHeader is askFront, and the answer's headers.
func askFrontHeader(t *testing.T, base, method, target string, hdr ...string) (answer, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, base+target, nil)
	req.Host = strings.TrimPrefix(site.URL, "http://") // the site's own: no canonical redirect
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := fromClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Allow"), resp.Header.Get("Location"), string(b)}, resp.Header
}

// servedBySidecar waits for the sidecar's access line of a request for
// path, after the before lines there were, and checks that the sidecar
// answered it itself to the client (127.0.0.2) through the web server
// (127.0.0.1).
func (f *front) servedBySidecar(t *testing.T, target, path string, before int) {
	t.Helper()
	var lines []map[string]any
	testwait.For(t, "the access log line", func() bool { lines = f.accessLines(t, path); return len(lines) > before })
	l := lines[len(lines)-1]
	if l["served_by"] != "sidecar" || l["remote_ip"] != "127.0.0.2" || l["peer_ip"] != "127.0.0.1" {
		t.Errorf("%s: the sidecar's access line %v", target, l)
	}
}

// newestEntry is the id of the newest history entry of key, as the
// sidecar at base lists it.
func newestEntry(t *testing.T, base, key string) int64 {
	t.Helper()
	a := askFront(t, base, http.MethodGet, "/wp-json/wpsidecar/v1/history?per_page=1&key="+key, adminBasic()...)
	var entries []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(a.body), &entries); a.status != 200 || err != nil || len(entries) != 1 {
		t.Fatalf("the history of %s: %d %s (%v)", key, a.status, a.body, err)
	}
	return entries[0].ID
}

// TestWebServers: with each shipped recipe in front of the real WordPress,
// the namespaces (path and ?rest_route= forms, any letter case) are the
// sidecar's, with WordPress's bodies (the history's: the sidecar's own
// answer, and its reverts); everything else is PHP's, the companion
// plugin's wpsidecar-companion/v1 included; a route the sidecar passes on
// reaches PHP although the sidecar's upstream is the same server (no
// loop); the sidecar logs the client's own address.
func TestWebServers(t *testing.T) {
	auth := adminBasic()
	probe := filepath.Join(site.Docroot, markerProbe)
	if err := os.WriteFile(probe, []byte(`<?php echo "marker: ", isset($_SERVER["HTTP_X_WPSIDECAR_PASSED"]) ? $_SERVER["HTTP_X_WPSIDECAR_PASSED"] : "none";`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(probe) })
	for _, kind := range []string{"nginx", "apache", "caddy"} {
		t.Run(kind, func(t *testing.T) {
			f := startFront(t, kind)
			const groups = "/wp-json/fieldmgr/v1/field-groups"
			// A group of this web server's, made through the sidecar: its
			// creation is the history the list below shows.
			key := "webservers_" + kind
			seedGroup(t, key)
			sidecar := fmt.Sprintf("http://127.0.0.1:%d", f.sidecarPort)
			// Each request as the twin answers it: WordPress's twin/v1, or
			// the sidecar asked directly for the history (which PHP does
			// not have), with its X-WP-Total and X-WP-TotalPages.
			served := []struct{ target, path, twin string }{
				{"/wp-json/fieldmgr/v1/field-groups", "/wp-json/fieldmgr/v1/field-groups", site.WPURL + "/wp-json/twin/v1/field-groups"},
				{"/wp-json/FieldMgr/v1/field-groups", "/wp-json/FieldMgr/v1/field-groups", site.WPURL + "/wp-json/twin/v1/field-groups"},
				{"/?rest_route=/fieldmgr/v1/field-groups", "/", site.WPURL + "/?rest_route=/twin/v1/field-groups"},
				{"/index.php?rest_route=%2Ffieldmgr%2Fv1%2Ffield-groups", "/index.php", site.WPURL + "/index.php?rest_route=%2Ftwin%2Fv1%2Ffield-groups"},
				{"/wp-json/wpsidecar/v1/history?key=" + key, "/wp-json/wpsidecar/v1/history", sidecar + "/wp-json/wpsidecar/v1/history?key=" + key},
				{"/wp-json/WPSidecar/v1/History?key=" + key, "/wp-json/WPSidecar/v1/History", sidecar + "/wp-json/wpsidecar/v1/history?key=" + key},
				{"/?rest_route=/wpsidecar/v1/history&key=" + key, "/", sidecar + "/wp-json/wpsidecar/v1/history?key=" + key},
				{"/index.php?rest_route=%2Fwpsidecar%2Fv1%2Fhistory&key=" + key, "/index.php", sidecar + "/wp-json/wpsidecar/v1/history?key=" + key},
			}
			pages := func(h http.Header) string { return h.Get("X-WP-Total") + "/" + h.Get("X-WP-TotalPages") }
			for _, c := range served {
				// The twin first. The sidecar asked directly logs a line of
				// its own (once it has answered): wait for it, so as not to
				// take it for the line of the request through the web server.
				twinPath := mustURL(c.twin).Path
				twinLines := len(f.accessLines(t, twinPath))
				wp, wpHdr := askFrontHeader(t, c.twin, http.MethodGet, "", auth...)
				if strings.HasPrefix(c.twin, sidecar) {
					testwait.For(t, "the twin's access log line", func() bool { return len(f.accessLines(t, twinPath)) > twinLines })
				}
				before := len(f.accessLines(t, c.path))
				got, gotHdr := askFrontHeader(t, f.url, http.MethodGet, c.target, auth...)
				if got.status != 200 || got.status != wp.status || got.ctype != wp.ctype || !sameBody(got.body, wp.body) || pages(gotHdr) != pages(wpHdr) {
					t.Errorf("%s:\n through %s %d %s %s %s\n twin %d %s %s %s", c.target, kind, got.status, got.ctype, pages(gotHdr), got.body, wp.status, wp.ctype, pages(wpHdr), wp.body)
				}
				if strings.HasPrefix(c.twin, sidecar) && (pages(wpHdr) != "1/1" || !strings.Contains(wp.body, `"key":"`+key+`"`)) {
					t.Errorf("%s: the sidecar's own history of %s: %s %s", c.target, key, pages(wpHdr), wp.body)
				}
				f.servedBySidecar(t, c.target, c.path, before)
			}
			// A revert in each form, each of the entry the one before made
			// (the group's creation, then its removal, …): the sidecar's.
			reverts := []struct{ target, path string }{
				{"/wp-json/wpsidecar/v1/history/{id}/revert", "/wp-json/wpsidecar/v1/history/{id}/revert"},
				{"/wp-json/WPSidecar/v1/History/{id}/Revert", "/wp-json/WPSidecar/v1/History/{id}/Revert"},
				{"/?rest_route=/wpsidecar/v1/history/{id}/revert", "/"},
				{"/index.php?rest_route=%2Fwpsidecar%2Fv1%2Fhistory%2F{id}%2Frevert", "/index.php"},
			}
			for _, c := range reverts {
				id := fmt.Sprint(newestEntry(t, sidecar, key))
				target, path := strings.ReplaceAll(c.target, "{id}", id), strings.ReplaceAll(c.path, "{id}", id)
				before := len(f.accessLines(t, path))
				want := `{"success":true,"message":"Change reverted","reverted":` + id + `}`
				if got := askFront(t, f.url, http.MethodPost, target, auth...); got.status != 200 || got.body != want {
					t.Errorf("%s through %s: %d %s, want 200 %s", target, kind, got.status, got.body, want)
				}
				f.servedBySidecar(t, target, path, before)
			}
			// A route of the namespace the sidecar does not define: passed on,
			// marked, to PHP — once, not back to the sidecar.
			const unknown = "/wp-json/fieldmgr/v1/no-such-route"
			got := askFront(t, f.url, http.MethodGet, unknown)
			wp := askFront(t, site.WPURL, http.MethodGet, unknown)
			if got.status != 404 || got != wp {
				t.Errorf("passed on: %d %s, WordPress %d %s", got.status, got.body, wp.status, wp.body)
			}
			testwait.For(t, "the unknown route's access log line", func() bool { return len(f.accessLines(t, unknown)) == 1 })
			if l := f.accessLines(t, unknown)[0]; l["served_by"] != "php" {
				t.Errorf("passed on: %v", l)
			}
			// Everything else is the web server's and PHP's alone: the
			// companion plugin's namespace too, although it starts with the
			// history's (unsigned, its report is PHP's 401).
			forbidden := errBody("rest_forbidden", "Sorry, you are not allowed to do that.", 401)
			phpOnly := []struct {
				method, target, path string
				status               int
				has                  string
			}{
				{http.MethodGet, "/hello-world/", "/hello-world/", 200, "Hello world!"},
				{http.MethodGet, "/wp-json/wp/v2/posts/1", "/wp-json/wp/v2/posts/1", 200, `"id":1,`},
				{http.MethodPost, "/wp-json/wpsidecar-companion/v1/failed-auth", "/wp-json/wpsidecar-companion/v1/failed-auth", 401, forbidden},
				{http.MethodPost, "/wp-json/WPSidecar-Companion/v1/failed-auth", "/wp-json/WPSidecar-Companion/v1/failed-auth", 401, forbidden},
				{http.MethodPost, "/?rest_route=/wpsidecar-companion/v1/failed-auth", "/", 401, forbidden},
				{http.MethodPost, "/index.php?rest_route=%2Fwpsidecar-companion%2Fv1%2Ffailed-auth", "/index.php", 401, forbidden},
			}
			logged := map[string]int{}
			for _, c := range phpOnly {
				logged[c.path] = len(f.accessLines(t, c.path))
			}
			for _, c := range phpOnly {
				if got := askFront(t, f.url, c.method, c.target); got.status != c.status || !strings.Contains(got.body, c.has) {
					t.Errorf("%s %s: %d %.100s, want %d with %s", c.method, c.target, got.status, got.body, c.status, c.has)
				}
			}
			// A request of the sidecar's after them: once its line is
			// written, so would theirs be.
			before := len(f.accessLines(t, groups))
			askFront(t, f.url, http.MethodGet, groups, auth...)
			f.servedBySidecar(t, groups, groups, before)
			for path, n := range logged {
				if got := len(f.accessLines(t, path)); got != n {
					t.Errorf("%d requests for %s that are not the sidecar's reached it", got-n, path)
				}
			}
			// A client's marker changes nothing (security round 3, item 8):
			// whatever its value, the sidecar answers as it does without one,
			// signed in (200) or not (the sidecar's 401, not PHP's 404
			// rest_no_route, which a shared cache keeps for the public URL;
			// and the sidecar's throttle counts the attempt).
			plain := askFront(t, f.url, http.MethodGet, groups)
			if plain.status != 401 || !strings.Contains(plain.body, `"code":"rest_forbidden"`) {
				t.Fatalf("anonymous: %d %s", plain.status, plain.body)
			}
			for _, v := range []string{"1", "yes", "", f.secret[:16], f.secret + " " + f.secret, "{args.0}"} {
				before := len(f.accessLines(t, groups))
				if got := askFront(t, f.url, http.MethodGet, groups, "X-WPSidecar-Passed", v); got != plain {
					t.Errorf("anonymous with the marker %q: %d %s, without it %d %s", v, got.status, got.body, plain.status, plain.body)
				}
				if got := askFront(t, f.url, http.MethodGet, groups, append([]string{"X-WPSidecar-Passed", v}, auth...)...); got.status != 200 {
					t.Errorf("signed in with the marker %q: %d %s", v, got.status, got.body)
				}
				var lines []map[string]any
				testwait.For(t, "the access log lines", func() bool { lines = f.accessLines(t, groups); return len(lines) >= before+2 })
				if l := lines[len(lines)-1]; l["served_by"] != "sidecar" {
					t.Errorf("with the marker %q: %v", v, l)
				}
			}
			// PHP never sees the marker, nor its secret: a request carrying
			// the secret (as what the sidecar passes back does) reaches PHP
			// without it.
			if got := askFront(t, f.url, http.MethodGet, "/"+markerProbe, "X-WPSidecar-Passed", f.secret); got.status != 200 || got.body != "marker: none" {
				t.Errorf("what PHP sees of the marker: %d %q", got.status, got.body)
			}
			stopWaited(f.sidecar, f.exited)
			if kind == "nginx" {
				// The sidecar down: nginx lets PHP answer the namespaces.
				got := askFront(t, f.url, http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", auth...)
				if got.status != 404 || !strings.Contains(got.body, `"code":"rest_no_route"`) {
					t.Errorf("sidecar down: %d %s", got.status, got.body)
				}
			}
			f.routes(t)
		})
	}
}

// markerProbe is a PHP file TestWebServers puts in the site's docroot: it
// tells what PHP sees of the marker.
const markerProbe = "wpsidecar-e2e-marker.php"

// routes checks which requests the recipe sends to the sidecar: a stand-in
// on the sidecar's address answers "sidecar" with the request line as it
// arrived and the marker it came with (the recipe's secret, whatever the
// client sent); everything else is PHP's.
func (f *front) routes(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", f.sidecarPort))
	if err != nil {
		t.Fatal(err)
	}
	stand := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "sidecar %s %s", r.RequestURI, r.Header.Get("X-WPSidecar-Passed"))
	})}
	go stand.Serve(l)
	defer stand.Close()
	tests := []struct {
		target  string
		sidecar bool
		hdr     []string
	}{
		{"/wp-json/fieldmgr/v1/field-groups/a%20b?x=1&y=%2F", true, nil},
		{"/wp-json/THEMEOPTS/v1/options", true, nil},
		{"/wp-json/themeopts", true, nil},
		{"/blog2/wp-json/fieldmgr/v1/field-groups", true, nil},
		{"/blog2/?rest_route=/themeopts/v1/options", true, nil},
		{"/blog2/index.php?rest_route=/fieldmgr/v1/field-groups", true, nil},
		{"/?rest_route=%2FFieldMgr%2Fv1", true, nil},
		{"/?a=1&rest_route=/themeopts/v1/options&b=2", true, nil},
		{"/wp-json/wpsidecar/v1/history?key=a&page=2", true, nil},
		{"/wp-json/WPSIDECAR/v1/history/7/revert", true, nil},
		{"/wp-json/wpsidecar", true, nil},
		{"/blog2/wp-json/wpsidecar/v1/history", true, nil},
		{"/blog2/?rest_route=/wpsidecar/v1/history", true, nil},
		{"/blog2/index.php?rest_route=%2Fwpsidecar%2Fv1%2Fhistory%2F7%2Frevert", true, nil},
		{"/?rest_route=%2FWpSidecar%2Fv1%2Fhistory", true, nil},
		{"/index.php?rest_route=/wpsidecar", true, nil},
		{"/?rest_route=/wp/v2/posts", false, nil},
		{"/wp-json/fieldmgrx/v1", false, nil},
		// The companion plugin's namespace, and others that only start
		// with the history's, are PHP's in every form.
		{"/wp-json/wpsidecar-companion/v1/failed-auth", false, nil},
		{"/wp-json/WPSIDECAR-COMPANION/v1/failed-auth", false, nil},
		{"/blog2/wp-json/wpsidecar-companion/v1/failed-auth", false, nil},
		{"/?rest_route=/wpsidecar-companion/v1/failed-auth", false, nil},
		{"/index.php?rest_route=%2Fwpsidecar-companion%2Fv1%2Ffailed-auth", false, nil},
		{"/blog2/?rest_route=/wpsidecar-companion/v1/failed-auth", false, nil},
		{"/wp-json/wpsidecarx/v1/history", false, nil},
		{"/wp-json/wpsidecar.v1/history", false, nil},
		{"/?rest_route=/wpsidecar_v1/history", false, nil},
		{"/wp-json/wp/v2/posts", false, nil},
		{"/a/b/wp-json/fieldmgr/v1/field-groups", false, nil},
		{"/hello-world/", false, nil},
		// A client's marker changes nothing; the recipe's secret is the
		// sidecar's pass-back, PHP's.
		{"/wp-json/fieldmgr/v1/field-groups", true, []string{"X-WPSidecar-Passed", "1"}},
		{"/?rest_route=/fieldmgr/v1/field-groups", true, []string{"X-WPSidecar-Passed", "yes"}},
		{"/wp-json/fieldmgr/v1/field-groups", true, []string{"X-WPSidecar-Passed", ""}},
		{"/wp-json/fieldmgr/v1/field-groups", false, []string{"X-WPSidecar-Passed", f.secret}},
		{"/?rest_route=/fieldmgr/v1/field-groups", false, []string{"X-WPSidecar-Passed", f.secret}},
	}
	for _, tt := range tests {
		got := askFront(t, f.url, http.MethodGet, tt.target, tt.hdr...)
		if want := "sidecar " + tt.target + " " + f.secret; (got.body == want) != tt.sidecar {
			t.Errorf("%s %v: %d %.80q (to the sidecar: %v)", tt.target, tt.hdr, got.status, got.body, tt.sidecar)
		}
	}
}

// TestWebServersWithoutSecret: a recipe whose marker's secret was not set
// fails closed. nginx and Apache refuse the configuration; Caddy (which
// cannot tell an argument missing) takes no marker for the sidecar's
// pass-back, an empty one included, so a client's marker still changes
// nothing, and what the sidecar passes on comes back to it and is answered
// 508, not sent round again (security round 3, item 8).
func TestWebServersWithoutSecret(t *testing.T) {
	for _, kind := range []string{"nginx", "apache"} {
		_, check := frontConfig(t, kind, t.TempDir(), freePort(t), freePort(t), "")
		out, err := check.CombinedOutput()
		if err == nil || !strings.Contains(string(out), map[string]string{"nginx": `unknown "wpsidecar_secret" variable`, "apache": "Define WPSIDECAR_SECRET"}[kind]) {
			t.Errorf("%s takes the recipe without a secret: %v\n%s", kind, err, out)
		}
	}
	f := startFrontWith(t, "caddy", "")
	const groups = "/wp-json/fieldmgr/v1/field-groups"
	plain := askFront(t, f.url, http.MethodGet, groups)
	for _, v := range []string{"", "1", "{args.0}"} {
		if got := askFront(t, f.url, http.MethodGet, groups, "X-WPSidecar-Passed", v); got != plain || got.status != 401 {
			t.Errorf("caddy without a secret, the marker %q: %d %s, without it %d %s", v, got.status, got.body, plain.status, plain.body)
		}
	}
	if got := askFront(t, f.url, http.MethodGet, "/wp-json/fieldmgr/v1/no-such-route"); got.status != 508 {
		t.Errorf("caddy without a secret, a route the sidecar passes on: %d %s", got.status, got.body)
	}
}

// apacheServer is the server part of an Apache configuration of a test's
// own: its files under dir, what Debian enables by default (the MPM,
// access, index and types) and the modules mods (Debian's names) loaded.
func apacheServer(dir string, mods ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ServerRoot %[1]s\nServerName 127.0.0.1\nPidFile %[1]s/apache.pid\nDefaultRuntimeDir %[1]s\nMutex file:%[1]s\nErrorLog %[1]s/error.log\n", dir)
	for _, m := range append([]string{"mpm_event", "authz_core", "dir", "mime"}, mods...) {
		fmt.Fprintf(&b, "LoadModule %s_module /usr/lib/apache2/modules/mod_%s.so\n", m, m)
	}
	b.WriteString("TypesConfig /etc/mime.types\n")
	return b.String()
}

// docExample is the first example of a page's (a path from the
// repository's root) in language lang: a fenced block's text.
func docExample(t *testing.T, page, lang string) string {
	t.Helper()
	doc, err := os.ReadFile("../" + page)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```"+lang+"\n")
	body, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatalf("%s has no %s example", page, lang)
	}
	return body
}

// firsts are the first submatches of pattern's matches in text.
func firsts(pattern, text string) (v []string) {
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(text, -1) {
		v = append(v, m[1])
	}
	return v
}

// TestCaddyDocExample: the Caddyfile docs/deploy/caddy.md opens with is
// whole. Its HTTPS site has a plain http:// block on the loopback for what
// the sidecar hands back, that block is the sidecar's --upstream in the
// command below it, both blocks import the snippet with the same secret,
// and Debian's Caddy takes the file (the shipped snippet and a secret in
// place of the doc's).
func TestCaddyDocExample(t *testing.T) {
	conf, command := docExample(t, "docs/deploy/caddy.md", "caddy"), docExample(t, "docs/deploy/caddy.md", "sh")
	loopback := regexp.MustCompile(`(?m)^http://:(\d+) \{\n\tbind 127\.0\.0\.1\n`).FindAllStringSubmatch(conf, -1)
	if len(loopback) != 1 {
		t.Fatalf("%d http:// blocks bound to 127.0.0.1, want 1:\n%s", len(loopback), conf)
	}
	want := "http://127.0.0.1:" + loopback[0][1]
	if up := firsts(`--upstream (\S+)`, command); len(up) != 1 || up[0] != want {
		t.Errorf("the sidecar's --upstream %q, want %s (the loopback block)", up, want)
	}
	secrets := firsts(`(?m)^\timport wpsidecar (.+)$`, conf)
	if len(secrets) != 2 || secrets[0] != secrets[1] {
		t.Fatalf("the snippet imported with %q, want in both blocks with the same secret", secrets)
	}
	dir := t.TempDir()
	snippet := filepath.Join(dir, "wpsidecar.caddy")
	if err := os.WriteFile(snippet, []byte(recipe(t, "deploy/caddy/wpsidecar.caddy", 8080)), 0o644); err != nil {
		t.Fatal(err)
	}
	const shipped = "import /etc/caddy/wpsidecar.caddy\n"
	if strings.Count(conf, shipped) != 1 {
		t.Fatalf("the example does not import the snippet as %q:\n%s", shipped, conf)
	}
	conf = strings.Replace(conf, shipped, "import "+snippet+"\n", 1)
	conf = strings.ReplaceAll(conf, "\timport wpsidecar "+secrets[0]+"\n", "\timport wpsidecar "+randomSecret()+"\n")
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	check := exec.Command("caddy", "validate", "--config", path, "--adapter", "caddyfile")
	check.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("caddy validate: %v\n%s\n%s", err, out, conf)
	}
}

// TestApacheDocExample: the Apache configuration docs/deploy/apache.md
// opens with is whole. Its HTTPS site has a second virtual host on the
// loopback for what the sidecar hands back, that host is the sidecar's
// --upstream in the commands above it, both hosts Include the recipe
// after the one Define of the secret, the loopback host tells PHP the
// request came over HTTPS, and Debian's Apache takes the file with the
// modules the page's a2enmod names (the shipped recipe, a secret in place
// of the doc's and a directory of the test's as DocumentRoot).
func TestApacheDocExample(t *testing.T) {
	conf, commands := docExample(t, "docs/deploy/apache.md", "apache"), docExample(t, "docs/deploy/apache.md", "sh")
	hosts := regexp.MustCompile(`(?ms)^<VirtualHost ([^>]+)>\n(.*?)^</VirtualHost>\n`).FindAllStringSubmatch(conf, -1)
	if len(hosts) != 2 || hosts[0][1] != "*:443" {
		t.Fatalf("the example's virtual hosts: %d, want 2, the site's *:443 first:\n%s", len(hosts), conf)
	}
	site, loopback := hosts[0][2], hosts[1][2]
	listen := firsts(`(?m)^Listen (\S+)$`, conf)
	if len(listen) != 1 || !strings.HasPrefix(listen[0], "127.0.0.1:") || hosts[1][1] != listen[0] {
		t.Fatalf("Listen %q, want one on 127.0.0.1 and the second virtual host on it (<VirtualHost %s>)", listen, hosts[1][1])
	}
	want := "http://" + listen[0]
	if up := firsts(`--upstream (\S+)`, commands); len(up) != 1 || up[0] != want {
		t.Errorf("the sidecar's --upstream %q, want %s (the loopback virtual host)", up, want)
	}
	const include = "    Include /etc/apache2/wpsidecar.conf\n"
	if strings.Count(site, include) != 1 || strings.Count(loopback, include) != 1 {
		t.Errorf("the recipe Included %d times in the site's virtual host and %d in the loopback one, want once in each, as %q",
			strings.Count(site, include), strings.Count(loopback, include), include)
	}
	secrets := firsts(`(?m)^\s*Define WPSIDECAR_SECRET (\S+)$`, conf)
	if len(secrets) != 1 || strings.Index(conf, "Define WPSIDECAR_SECRET") > strings.Index(conf, "<VirtualHost") {
		t.Fatalf("the secret Defined %d times, want once, before both virtual hosts (so both Includes read it):\n%s", len(secrets), conf)
	}
	root, loopbackRoot := firsts(`(?m)^    DocumentRoot (\S+)$`, site), firsts(`(?m)^    DocumentRoot (\S+)$`, loopback)
	if len(root) != 1 || len(loopbackRoot) != 1 || loopbackRoot[0] != root[0] {
		t.Fatalf("DocumentRoot %q in the site's virtual host and %q in the loopback one, want one, the same", root, loopbackRoot)
	}
	for _, line := range []string{"    ServerName https://", "    SetEnv HTTPS on\n", "    RemoteIPHeader X-Forwarded-For\n", "    RemoteIPInternalProxy 127.0.0.1\n"} {
		if !strings.Contains(loopback, line) {
			t.Errorf("the loopback virtual host lacks %q:\n%s", line, loopback)
		}
	}
	mods := firsts(`(?m)^a2enmod (.+)$`, commands)
	if len(mods) != 1 {
		t.Fatalf("a2enmod %q, want one line", mods)
	}

	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	docroot := filepath.Join(dir, "html")
	if err := os.Mkdir(docroot, 0o755); err != nil {
		t.Fatal(err)
	}
	snippet := write("wpsidecar.conf", recipe(t, "deploy/apache/wpsidecar.conf", 8080))
	conf = strings.ReplaceAll(conf, "Include /etc/apache2/wpsidecar.conf\n", "Include "+snippet+"\n")
	conf = strings.ReplaceAll(conf, "DocumentRoot "+root[0]+"\n", "DocumentRoot "+docroot+"\n")
	conf = strings.Replace(conf, "Define WPSIDECAR_SECRET "+secrets[0]+"\n", "Define WPSIDECAR_SECRET "+randomSecret()+"\n", 1)
	siteConf := write("site.conf", conf)
	// Debian's default modules, then what the page's a2enmod names.
	main := write("apache2.conf", apacheServer(dir, strings.Fields(mods[0])...)+"Include "+siteConf+"\n")
	out, err := exec.Command("apache2", "-t", "-f", main).CombinedOutput()
	if err != nil || string(out) != "Syntax OK\n" {
		t.Errorf("apache2 -t: %v\n%s\n%s", err, out, conf)
	}
}

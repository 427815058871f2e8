//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// front is a web server of Debian's (nginx, Apache, Caddy) serving the
// test WordPress itself through PHP-FPM, with the shipped recipe sending
// the namespaces to a sidecar whose --upstream is that same server.
type front struct {
	url         string // the web server
	sidecarPort int
	sidecar     *exec.Cmd
	log         string // the sidecar's log file
	admin       string
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

// startFront starts the web server kind on a free port with its recipe, and
// a sidecar behind it (upstream: that server; trusting it).
func startFront(t *testing.T, kind string) *front {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755) // Apache's workers run as www-data
	port, sidecarPort, adminPort := freePort(t), freePort(t), freePort(t)
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
      fastcgi_param HTTP_HOST $http_host;
      fastcgi_pass unix:%[7]s;
    }
  }
}
`, user, dir, up, port, site.Docroot, snippet, sock))
		cmd = exec.Command("nginx", "-c", conf, "-p", dir)
	case "apache":
		snippet := write("wpsidecar.conf", recipe(t, "deploy/apache/wpsidecar.conf", sidecarPort))
		var mods strings.Builder
		for _, m := range []string{"mpm_event", "authz_core", "dir", "mime", "rewrite", "proxy", "proxy_http", "proxy_fcgi", "headers"} {
			fmt.Fprintf(&mods, "LoadModule %s_module /usr/lib/apache2/modules/mod_%s.so\n", m, m)
		}
		user := ""
		if root {
			user = "User www-data\nGroup www-data"
		}
		conf := write("apache2.conf", fmt.Sprintf(`ServerRoot %[1]s
ServerName 127.0.0.1
PidFile %[1]s/apache.pid
DefaultRuntimeDir %[1]s
Mutex file:%[1]s
ErrorLog %[1]s/error.log
LogLevel warn
Listen 127.0.0.1:%[2]d
%[3]s
%[4]s
TypesConfig /etc/mime.types
<VirtualHost 127.0.0.1:%[2]d>
    DocumentRoot %[5]s
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
`, dir, port, mods.String(), user, site.Docroot, snippet, sock))
		cmd = exec.Command("apache2", "-f", conf, "-DFOREGROUND")
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
	import wpsidecar
	php_fastcgi unix/%[5]s
	file_server
}
`, dir, snippet, port, site.Docroot, sock))
		cmd = exec.Command("caddy", "run", "--config", conf, "--adapter", "caddyfile")
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	}
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
	f := &front{url: fmt.Sprintf("http://127.0.0.1:%d", port), sidecarPort: sidecarPort, log: filepath.Join(dir, "sidecar.log"), admin: fmt.Sprintf("http://127.0.0.1:%d", adminPort)}
	waitStarted(t, out.Name(), func() bool {
		resp, err := http.Get(f.url + "/wp-login.php")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
	f.startSidecar(t, sidecarPort)
	return f
}

func (f *front) startSidecar(t *testing.T, port int) {
	t.Helper()
	logf, err := os.OpenFile(f.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.sidecar = exec.Command(site.Bin, "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--admin-listen", strings.TrimPrefix(f.admin, "http://"),
		"--upstream", f.url, "--trusted-proxies", "127.0.0.1", "--wp-config", site.WPConfig, "--shutdown-delay", "0", "--log-level", "info")
	f.sidecar.Env = []string{}
	f.sidecar.Stdout, f.sidecar.Stderr = logf, logf
	f.sidecar.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := f.sidecar.Start(); err != nil {
		t.Fatal(err)
	}
	cmd := f.sidecar
	t.Cleanup(func() { stopProcess(cmd); logf.Close() })
	waitStarted(t, f.log, func() bool {
		resp, err := http.Get(f.admin + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

// waitStarted waits for a server to answer, failing with its output after
// 30 seconds (a busy machine starts processes slowly).
func waitStarted(t *testing.T, output string, up func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !up() {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(output)
			t.Fatalf("not answering after 30s:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func stopProcess(cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
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
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Allow"), resp.Header.Get("Location"), string(b)}
}

// TestWebServers: with each shipped recipe in front of the real WordPress,
// the namespaces (path and ?rest_route= forms, any letter case) are the
// sidecar's, with WordPress's bodies; everything else is PHP's; a route the
// sidecar passes on reaches PHP although the sidecar's upstream is the same
// server (no loop); the sidecar logs the client's own address.
func TestWebServers(t *testing.T) {
	auth := adminBasic()
	for _, kind := range []string{"nginx", "apache", "caddy"} {
		t.Run(kind, func(t *testing.T) {
			f := startFront(t, kind)
			served := []struct{ target, path, twin string }{
				{"/wp-json/fieldmgr/v1/field-groups", "/wp-json/fieldmgr/v1/field-groups", "/wp-json/twin/v1/field-groups"},
				{"/wp-json/FieldMgr/v1/field-groups", "/wp-json/FieldMgr/v1/field-groups", "/wp-json/twin/v1/field-groups"},
				{"/?rest_route=/fieldmgr/v1/field-groups", "/", "/?rest_route=/twin/v1/field-groups"},
				{"/index.php?rest_route=%2Ffieldmgr%2Fv1%2Ffield-groups", "/index.php", "/index.php?rest_route=%2Ftwin%2Fv1%2Ffield-groups"},
			}
			for _, c := range served {
				before := len(f.accessLines(t, c.path))
				got := askFront(t, f.url, http.MethodGet, c.target, auth...)
				wp := askFront(t, site.WPURL, http.MethodGet, c.twin, auth...)
				if got.status != 200 || got.status != wp.status || got.ctype != wp.ctype || !sameBody(got.body, wp.body) {
					t.Errorf("%s:\n through %s %d %s %s\n WordPress %d %s %s", c.target, kind, got.status, got.ctype, got.body, wp.status, wp.ctype, wp.body)
				}
				var lines []map[string]any
				waitFor(t, func() bool { lines = f.accessLines(t, c.path); return len(lines) > before })
				l := lines[len(lines)-1]
				if l["served_by"] != "sidecar" || l["remote_ip"] != "127.0.0.2" || l["peer_ip"] != "127.0.0.1" {
					t.Errorf("%s: the sidecar's access line %v", c.target, l)
				}
			}
			// A route of the namespace the sidecar does not define: passed on,
			// marked, to PHP — once, not back to the sidecar.
			const unknown = "/wp-json/fieldmgr/v1/no-such-route"
			got := askFront(t, f.url, http.MethodGet, unknown)
			wp := askFront(t, site.WPURL, http.MethodGet, unknown)
			if got.status != 404 || got != wp {
				t.Errorf("passed on: %d %s, WordPress %d %s", got.status, got.body, wp.status, wp.body)
			}
			waitFor(t, func() bool { return len(f.accessLines(t, unknown)) == 1 })
			if l := f.accessLines(t, unknown)[0]; l["served_by"] != "php" {
				t.Errorf("passed on: %v", l)
			}
			// Everything else is the web server's and PHP's alone.
			if got := askFront(t, f.url, http.MethodGet, "/hello-world/"); got.status != 200 || !strings.Contains(got.body, "Hello world!") {
				t.Errorf("a page: %d %v", got.status, got)
			}
			if got := askFront(t, f.url, http.MethodGet, "/wp-json/wp/v2/posts/1"); got.status != 200 || !strings.Contains(got.body, `"id":1,`) {
				t.Errorf("core REST: %d %.100s", got.status, got.body)
			}
			if n := len(f.accessLines(t, "/hello-world/")) + len(f.accessLines(t, "/wp-json/wp/v2/posts/1")); n != 0 {
				t.Errorf("%d requests that are not the sidecar's reached it", n)
			}
			// A client's own marker gets it PHP, as it could always ask.
			if got := askFront(t, f.url, http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", "X-WPSidecar-Passed", "1"); got.status != 404 || !strings.Contains(got.body, `"code":"rest_no_route"`) {
				t.Errorf("with the marker: %d %s", got.status, got.body)
			}
			stopProcess(f.sidecar)
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

// routes checks which requests the recipe sends to the sidecar: a stand-in
// on the sidecar's address answers "sidecar" with the request line as it
// arrived; everything else is PHP's.
func (f *front) routes(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", f.sidecarPort))
	if err != nil {
		t.Fatal(err)
	}
	stand := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "sidecar %s", r.RequestURI)
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
		{"/?rest_route=/wp/v2/posts", false, nil},
		{"/wp-json/fieldmgrx/v1", false, nil},
		{"/wp-json/wp/v2/posts", false, nil},
		{"/a/b/wp-json/fieldmgr/v1/field-groups", false, nil},
		{"/hello-world/", false, nil},
		{"/wp-json/fieldmgr/v1/field-groups", false, []string{"X-WPSidecar-Passed", "1"}},
		{"/?rest_route=/fieldmgr/v1/field-groups", false, []string{"X-WPSidecar-Passed", "yes"}},
	}
	for _, tt := range tests {
		got := askFront(t, f.url, http.MethodGet, tt.target, tt.hdr...)
		if want := "sidecar " + tt.target; (got.body == want) != tt.sidecar {
			t.Errorf("%s %v: %d %.80q (to the sidecar: %v)", tt.target, tt.hdr, got.status, got.body, tt.sidecar)
		}
	}
}

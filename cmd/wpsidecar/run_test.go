package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testlog"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
)

type syncBuffer = testlog.Buffer

// started is a sidecar running in the test through run().
type started struct {
	public, admin string
	log           *syncBuffer
	stop          func() error
}

func start(t testing.TB, args []string, env []string) *started {
	t.Helper()
	// No lame-duck phase unless a test asks for one (a later flag wins).
	args = append([]string{"--shutdown-delay", "0"}, args...)
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan [2]string, 1)
	done := make(chan error, 1)
	log := &syncBuffer{}
	go func() {
		done <- run(ctx, args, env, log, io.Discard, func(p, a net.Addr) { addrs <- [2]string{p.String(), a.String()} })
	}()
	s := &started{log: log}
	select {
	case a := <-addrs:
		s.public, s.admin = "http://"+a[0], "http://"+a[1]
	case err := <-done:
		cancel()
		t.Fatalf("run returned early: %v\n%s", err, log)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("run did not start listening")
	}
	var once sync.Once
	var err error
	s.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(15 * time.Second):
				err = errors.New("run did not return after cancel")
			}
		})
		return err
	}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("sidecar log:\n%s", log)
		}
	})
	return s
}

func sidecarArgs(t *testing.T, tdb *testdb.DB, upstream string) ([]string, []string) {
	c := tdb.ServerConn()
	args := []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--upstream", upstream, "--settings-refresh", "100ms"}
	env := []string{"WORDPRESS_DB_HOST=" + c.Addr, "WORDPRESS_DB_USER=" + c.User, "WORDPRESS_DB_PASSWORD=" + c.Passwd,
		"WORDPRESS_DB_NAME=" + tdb.Name, "WORDPRESS_TABLE_PREFIX=" + testdb.Prefix}
	return args, env
}

func get(t testing.TB, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRun_EndToEnd(t *testing.T) {
	tdb := testdb.New(t)
	release, arrived := make(chan struct{}), make(chan struct{})
	php := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(arrived)
			<-release
		}
		io.WriteString(w, "php: "+r.URL.RequestURI())
	}))
	defer php.Close()
	args, env := sidecarArgs(t, tdb, php.URL)
	// Polling by choice: no feed to report on (TestRun_AutoChangeFeed).
	s := start(t, append(args, "--change-feed", "poll"), env)

	if code, body := get(t, s.public+"/hello-world/?p=1"); code != 200 || body != "php: /hello-world/?p=1" {
		t.Errorf("pass-through: %d %q", code, body)
	}
	if code, body := get(t, s.admin+"/healthz"); code != 200 || body != "{\"status\":\"ok\"}\n" {
		t.Errorf("healthz: %d %q", code, body)
	}
	// Profiles are opt-in (--pprof).
	if code, _ := get(t, s.admin+"/debug/pprof/"); code != 404 {
		t.Errorf("/debug/pprof/ without --pprof: %d", code)
	}
	testwait.For(t, "readyz all ok", func() bool {
		code, body := get(t, s.admin+"/readyz")
		return code == 200 && body == "{\"database\":\"ok\",\"leader\":\"yes\",\"upstream\":\"ok\"}\n"
	})
	// `wpsidecar probe URL` is the container health check: it passes on a
	// ready sidecar and fails, saying why, on anything else.
	var probeOut bytes.Buffer
	if err := run(context.Background(), []string{"probe", s.admin + "/readyz"}, nil, &probeOut, io.Discard, nil); err != nil || probeOut.String() != "{\"database\":\"ok\",\"leader\":\"yes\",\"upstream\":\"ok\"}\n\n" {
		t.Errorf("probe of a ready sidecar: %v %q", err, probeOut.String())
	}
	if err := run(context.Background(), []string{"probe", s.admin + "/nothing"}, nil, io.Discard, io.Discard, nil); err == nil || !strings.Contains(err.Error(), "answered 404 Not Found") {
		t.Errorf("probe of a 404: %v", err)
	}
	// The sidecar's own routes (anonymous: WordPress's 401), and a path of
	// the namespace it does not define, which PHP answers.
	if code, body := get(t, s.public+"/wp-json/fieldmgr/v1/field-groups"); code != 401 || !strings.Contains(body, `"code":"rest_forbidden"`) {
		t.Errorf("fieldmgr: %d %q", code, body)
	}
	if code, body := get(t, s.public+"/wp-json/fieldmgr/v1/other"); code != 200 || body != "php: /wp-json/fieldmgr/v1/other" {
		t.Errorf("fieldmgr, unknown route: %d %q", code, body)
	}
	_, body := get(t, s.admin+"/metrics")
	for _, want := range []string{
		`wpsidecar_http_requests_total{code="200",route="php",served_by="php"} 2`,
		`wpsidecar_http_requests_total{code="401",route="GET /wp-json/fieldmgr/v1/field-groups",served_by="sidecar"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if code, body := get(t, s.public+"/metrics"); code != 200 || body != "php: /metrics" {
		t.Error("/metrics on the public port must be PHP's, not the admin listener's")
	}

	// Shutdown drains: a request in flight when the signal comes completes.
	type result struct {
		code int
		body string
	}
	inflight := make(chan result, 1)
	go func() {
		code, body := get(t, s.public+"/slow")
		inflight <- result{code, body}
	}()
	<-arrived // in flight: PHP has it
	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	waitLog(t, s, `"message":"shutting down: no new connections; draining in-flight requests"`)
	close(release)
	if r := <-inflight; r.code != 200 || r.body != "php: /slow" {
		t.Errorf("in-flight request during shutdown: %d %q", r.code, r.body)
	}
	if err := <-stopped; err != nil {
		t.Errorf("run: %v", err)
	}
	logs := s.log.String()
	for _, want := range []string{`"message":"database ready; site settings read"`, `"message":"wpsidecar serving"`, `"message":"shutting down: no new connections; draining in-flight requests"`, `"message":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s", want)
		}
	}
	if strings.Contains(logs, testdb.ServerConfig(t).Passwd+"@") {
		t.Error("log shows a DSN")
	}
}

func TestRun_CheckConfig(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--upstream", "http://php", "--check-config"},
		[]string{"WORDPRESS_DB_USER=wp", "WORDPRESS_DB_PASSWORD=very-secret", "WORDPRESS_AUTH_KEY=also-secret"}, &out, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "very-secret") || strings.Contains(out.String(), "also-secret") || !strings.Contains(out.String(), "db-password") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestRun_ConfigErrors(t *testing.T) {
	err := run(context.Background(), []string{"--listen", "bad"}, nil, io.Discard, io.Discard, nil)
	if !config.IsConfigError(err) || !strings.Contains(err.Error(), "upstream: required") || !strings.Contains(err.Error(), `listen: "bad"`) {
		t.Errorf("err = %v", err)
	}
}

func TestRun_ListenError(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	defer l.Close()
	err := run(context.Background(), []string{"--upstream", "http://php", "--listen", l.Addr().String(), "--admin-listen", "127.0.0.1:0"},
		[]string{"WORDPRESS_DB_USER=x"}, io.Discard, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "listen:") {
		t.Errorf("err = %v", err)
	}
}

func TestRun_TLS(t *testing.T) {
	tdb := testdb.New(t)
	php := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("X-Forwarded-Proto"))
	}))
	defer php.Close()
	dir := t.TempDir()
	cert, key, pool := selfSigned(t, dir)
	args, env := sidecarArgs(t, tdb, php.URL)
	s := start(t, append(args, "--tls-cert", cert, "--tls-key", key, "--pprof"), env)
	if code, body := get(t, s.admin+"/debug/pprof/goroutine?debug=1"); code != 200 || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("/debug/pprof/goroutine with --pprof: %d %.40q", code, body)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(strings.Replace(s.public, "http://", "https://", 1) + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "https" {
		t.Errorf("X-Forwarded-Proto seen by PHP = %q, want https", b)
	}
}

// selfSigned writes a certificate and key for 127.0.0.1 and returns a pool
// that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(priv)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}

func TestRun_SlowClientsAndLimits(t *testing.T) {
	tdb := testdb.New(t)
	bodyErr := make(chan string, 1)
	php := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		if err != nil {
			bodyErr <- err.Error()
		}
	}))
	defer php.Close()
	args, env := sidecarArgs(t, tdb, php.URL)
	s := start(t, append(args, "--read-header-timeout", "300ms", "--body-timeout", "500ms", "--idle-timeout", "500ms", "--max-header-bytes", "8192"), env)
	addr := strings.TrimPrefix(s.public, "http://")

	// closedWithin sends raw bytes and reports whether the server closed the
	// connection within d.
	closedWithin := func(raw string, d time.Duration) (string, bool) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, raw)
		c.SetReadDeadline(time.Now().Add(d))
		b, err := io.ReadAll(c)
		var ne net.Error
		return string(b), !(errors.As(err, &ne) && ne.Timeout())
	}
	if _, closed := closedWithin("GET / HTTP/1.1\r\nHost: x\r\n", 3*time.Second); !closed {
		t.Error("a client that never finishes its headers keeps the connection")
	}
	if _, closed := closedWithin("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a little", 3*time.Second); !closed {
		t.Error("a client that never finishes its body keeps the connection")
	}
	select {
	case <-bodyErr:
	case <-time.After(3 * time.Second):
		t.Error("PHP was not told the body broke off")
	}
	// An Upgrade header asks for nothing the server grants on a request
	// with a body: the body's deadline holds (security round 2, item 8).
	if _, closed := closedWithin("POST /upload HTTP/1.1\r\nHost: x\r\nUpgrade: x\r\nConnection: upgrade\r\nContent-Length: 100\r\n\r\nonly a little", 3*time.Second); !closed {
		t.Error("a client that never finishes its body keeps the connection with an Upgrade header")
	}
	select {
	case <-bodyErr:
	case <-time.After(3 * time.Second):
		t.Error("PHP was not told the body broke off (with Upgrade)")
	}
	if out, closed := closedWithin("GET /a HTTP/1.1\r\nHost: x\r\n\r\n", 3*time.Second); !closed || !strings.HasPrefix(out, "HTTP/1.1 200") {
		t.Errorf("an idle keep-alive connection is kept past --idle-timeout (closed=%v): %q", closed, out)
	}
	// --max-header-bytes is the limit itself, not the limit plus Go's
	// 4 KiB of slack: a header block a little over it is refused, one a
	// little under it is served.
	headers := func(size int) string {
		h := "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: "
		return h + strings.Repeat("a", size-len(h)-4) + "\r\n\r\n"
	}
	if out, _ := closedWithin(headers(8192+100), 3*time.Second); !strings.HasPrefix(out, "HTTP/1.1 431") {
		t.Errorf("headers of 8292 bytes with --max-header-bytes 8192: %.60q", out)
	}
	if out, _ := closedWithin(headers(8192-100), 3*time.Second); !strings.HasPrefix(out, "HTTP/1.1 200") {
		t.Errorf("headers of 8092 bytes with --max-header-bytes 8192: %.60q", out)
	}
}

func TestRun_SecretsNeverLogged(t *testing.T) {
	tdb := testdb.New(t)
	php := httptest.NewServer(http.NotFoundHandler())
	defer php.Close()
	args, env := sidecarArgs(t, tdb, php.URL)
	const secret = "pw-that-must-not-leak"
	env = append(env, "WORDPRESS_DB_PASSWORD="+secret, "WORDPRESS_AUTH_KEY=key-that-must-not-leak")
	s := start(t, append(args, "--log-level", "debug"), env)
	testwait.For(t, "the refused login logged", func() bool { return strings.Contains(s.log.String(), "database not available") })
	get(t, s.public+"/wp-json/fieldmgr/v1/x")
	s.stop()
	logs := s.log.String()
	if !strings.Contains(logs, "Access denied") {
		t.Errorf("the refused login is not logged:\n%s", logs)
	}
	if strings.Contains(logs, "must-not-leak") {
		t.Errorf("a secret reached the log:\n%s", logs)
	}
}

// TestRun_BodyTimeoutEndsWithTheBody: the body deadline bounds sending the
// body, not the answer that follows.
func TestRun_BodyTimeoutEndsWithTheBody(t *testing.T) {
	tdb := testdb.New(t)
	php := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		for i := 0; i < 6; i++ { // a slow stream, longer than the body timeout
			io.WriteString(w, "tick\n")
			w.(http.Flusher).Flush()
			// Not a wait: the pause between ticks is what makes the stream
			// outlast the body timeout.
			time.Sleep(150 * time.Millisecond)
		}
	}))
	defer php.Close()
	args, env := sidecarArgs(t, tdb, php.URL)
	s := start(t, append(args, "--body-timeout", "300ms"), env)
	resp, err := http.Post(s.public+"/stream", "text/plain", strings.NewReader("payload"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != strings.Repeat("tick\n", 6) {
		t.Errorf("stream after a body: %q %v", b, err)
	}
}

// TestRun_ThemeoptsConfig: an invalid theme options configuration stops
// the start with the problem named; a valid one is served, and SIGHUP
// reloads it (a field added to the file is accepted at once).
func TestRun_ThemeoptsConfig(t *testing.T) {
	tdb := testdb.New(t)
	php := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "php") }))
	defer php.Close()
	args, env := sidecarArgs(t, tdb, php.URL)
	path := filepath.Join(t.TempDir(), "themeopts.json")

	os.WriteFile(path, []byte(`{"opt_name":"o","sections":[{"id":"s","fields":[{"id":"a","type":"money"}]}]}`), 0o644)
	err := run(context.Background(), append(args, "--themeopts-config", path), env, io.Discard, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), `sections[0].fields[0].type: unknown field type "money"`) {
		t.Fatalf("invalid configuration: %v", err)
	}

	os.WriteFile(path, []byte(`{"opt_name":"o","sections":[{"id":"s","fields":[{"id":"a","type":"text"}]}]}`), 0o644)
	s := start(t, append(args, "--themeopts-config", path), env)
	waitReady(t, s)
	// Anonymous: 403 from the sidecar (PHP would have said "php").
	if code, body := get(t, s.public+"/wp-json/themeopts/v1/config"); code != 403 || !strings.Contains(body, "rest_forbidden") {
		t.Fatalf("themeopts/v1 not served: %d %s", code, body)
	}
	os.WriteFile(path, []byte(`{"opt_name":"o","sections":[{"id":"s","fields":[{"id":"a","type":"text"},{"id":"b","type":"switch"}]}]}`), 0o644)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the reload after SIGHUP", func() bool { return strings.Contains(s.log.String(), "SIGHUP: reloading the configuration files") })
	testwait.For(t, "the reloaded configuration logged", func() bool { return strings.Contains(s.log.String(), `"fields":2`) })
	// The admin listener describes the running configuration, reloaded:
	// what `wpsidecar openapi` prints for the same file.
	var printed bytes.Buffer
	if err := run(context.Background(), []string{"openapi", "--themeopts-config", path}, nil, &printed, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, s.admin+"/openapi.json"); code != 200 || body != printed.String() || !strings.Contains(body, `"b": {`) {
		t.Errorf("/openapi.json: %d, the same as wpsidecar openapi: %v", code, body == printed.String())
	}
}

// logHas tells whether a line of the sidecar's log holds all of parts.
func logHas(s *started, parts ...string) bool {
	for _, line := range strings.Split(s.log.String(), "\n") {
		n := 0
		for _, p := range parts {
			if strings.Contains(line, p) {
				n++
			}
		}
		if n == len(parts) {
			return true
		}
	}
	return false
}

// waitLog waits until a line of the sidecar's log holds all of parts.
func waitLog(t *testing.T, s *started, parts ...string) {
	t.Helper()
	testwait.For(t, fmt.Sprintf("a log line with %q", parts), func() bool { return logHas(s, parts...) })
}

// waitReady waits until /readyz says the database (and its site settings)
// and the upstream are there.
func waitReady(t *testing.T, s *started) {
	t.Helper()
	testwait.For(t, "readyz 200", func() bool { code, _ := get(t, s.admin+"/readyz"); return code == 200 })
}

// TestRun_BinlogChangeFeed: with --change-feed binlog on a server whose
// binary log is on, a change committed in the database reaches the
// webhook receiver without polling (the change interval is an hour), and
// /readyz and the metrics say the feed is on; on the machine's server,
// whose log is off, the sidecar says why and polls.
func TestRun_BinlogChangeFeed(t *testing.T) {
	srv := testdb.StartBinlogServer(t)
	tdb := testdb.NewOn(t, srv.Config())
	got := make(chan string, 8)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
	}))
	defer hook.Close()
	php := httptest.NewServer(http.NotFoundHandler())
	defer php.Close()
	cfgFile := filepath.Join(t.TempDir(), "themeopts.json")
	os.WriteFile(cfgFile, []byte(`{"opt_name":"o","sections":[{"id":"s","fields":[{"id":"a","type":"text"}]}]}`), 0o644)
	args := []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--upstream", php.URL, "--themeopts-config", cfgFile,
		"--change-feed", "binlog", "--change-interval", "1h", "--webhook-urls", hook.URL, "--webhook-secret", "s"}
	env := []string{"WORDPRESS_DB_HOST=127.0.0.1:" + strconv.Itoa(srv.Port), "WORDPRESS_DB_USER=root", "WORDPRESS_DB_NAME=" + tdb.Name, "WORDPRESS_TABLE_PREFIX=" + testdb.Prefix}
	s := start(t, args, env)
	testwait.For(t, "readyz saying binlog", func() bool {
		code, body := get(t, s.admin+"/readyz")
		return code == 200 && strings.Contains(body, `"change_feed":"binlog"`)
	})
	tdb.SetOption(t, "o", `a:1:{s:1:"a";s:1:"x";}`)
	select {
	case b := <-got:
		if b != `{"namespace":"themeopts","ids":["a"]}` {
			t.Errorf("webhook %s", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no webhook; log:\n%s", s.log.String())
	}
	_, m := get(t, s.admin+"/metrics")
	if !strings.Contains(m, `wpsidecar_change_feed{mode="binlog"} 1`) {
		t.Error("metrics do not say binlog")
	}
	// The feed heard the server within its heartbeat (one a second).
	var silence float64
	if i := strings.Index(m, "\nwpsidecar_change_feed_silence_seconds "); i < 0 {
		t.Error("no wpsidecar_change_feed_silence_seconds")
	} else if fmt.Sscan(m[i+len("\nwpsidecar_change_feed_silence_seconds "):], &silence); silence < 0 || silence > 2 {
		t.Errorf("silence %v s", silence)
	}
	// How long from a commit to the signed webhook, over 100 changes
	// (reported, not asserted: speed is the benchmark's business).
	var took []time.Duration
	for i := 0; i < 100; i++ {
		start := time.Now()
		tdb.SetOption(t, "o", fmt.Sprintf(`a:1:{s:1:"a";s:%d:"%d";}`, len(strconv.Itoa(i)), i))
		select {
		case <-got:
			took = append(took, time.Since(start))
		case <-time.After(5 * time.Second):
			t.Fatalf("change %d: no webhook", i)
		}
	}
	slices.Sort(took)
	t.Logf("commit to webhook received, 100 changes: p50 %s, p99 %s, max %s", took[50].Round(100*time.Microsecond), took[98].Round(100*time.Microsecond), took[99].Round(100*time.Microsecond))
	s.stop()

	// A server without a binary log: polling, and why.
	plain := testdb.NewOn(t, testdb.StartServer(t).Config())
	args2, env2 := sidecarArgs(t, plain, php.URL)
	s2 := start(t, append(args2, "--change-feed", "binlog", "--webhook-urls", hook.URL, "--webhook-secret", "s"), env2)
	testwait.For(t, "the fall-back said", func() bool { return strings.Contains(s2.log.String(), "binlog change feed unusable; polling instead") })
	if _, body := get(t, s2.admin+"/readyz"); !strings.Contains(body, `"change_feed":"poll"`) || !strings.Contains(s2.log.String(), "the binary log is off") {
		t.Errorf("readyz %s", body)
	}
	if _, m := get(t, s2.admin+"/metrics"); strings.Contains(m, "wpsidecar_change_feed_silence_seconds") {
		t.Error("a silence metric with no feed")
	}

	// --check-config asks the server: usable, or what to change.
	var out bytes.Buffer
	if err := run(context.Background(), append(args, "--check-config"), env, &out, io.Discard, nil); err != nil ||
		!strings.Contains(out.String(), "# change-feed binlog: 127.0.0.1:"+strconv.Itoa(srv.Port)+" can feed the sidecar\n") {
		t.Errorf("check-config on a binlog server: %v\n%s", err, out.String())
	}
	out.Reset()
	err := run(context.Background(), append(args2, "--change-feed", "binlog", "--check-config"), env2, &out, io.Discard, nil)
	if !errors.Is(err, changes.ErrFeedUnusable) || !strings.Contains(out.String(), "# change-feed binlog: binlog change feed unusable: the binary log is off (start the server with log_bin and a server_id: in my.cnf's [mysqld], log_bin=binlog, server_id=1, binlog_format=ROW and binlog_row_image=FULL, then restart it)") ||
		!strings.HasSuffix(out.String(), "; the sidecar would poll instead\n") {
		t.Errorf("check-config without a binary log: %v\n%s", err, out.String())
	}
}

// TestRun_OneSender: three sidecars on one site elect one leader through
// the database; each change reaches the webhook receiver once; the leader
// stopped, another leads, a change made meanwhile is not lost, and once
// the new leader is settled each change again arrives once.
func TestRun_OneSender(t *testing.T) {
	tdb := testdb.New(t)
	var mu sync.Mutex
	got := map[string]int{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Count ids, not bodies: on a loaded machine one poll may see two
		// changes and name both in one webhook.
		var c struct{ IDs []string }
		json.NewDecoder(r.Body).Decode(&c)
		mu.Lock()
		for _, id := range c.IDs {
			got[id]++
		}
		mu.Unlock()
	}))
	defer hook.Close()
	php := httptest.NewServer(http.NotFoundHandler())
	defer php.Close()
	cfgFile := filepath.Join(t.TempDir(), "themeopts.json")
	fields := ""
	for i := 0; i < 40; i++ {
		fields += fmt.Sprintf(`%s{"id":"f%d","type":"text"}`, map[bool]string{true: ",", false: ""}[i > 0], i)
	}
	os.WriteFile(cfgFile, []byte(`{"opt_name":"o","sections":[{"id":"s","fields":[`+fields+`]}]}`), 0o644)
	var ss []*started
	for i := 0; i < 3; i++ {
		args, env := sidecarArgs(t, tdb, php.URL)
		ss = append(ss, start(t, append(args, "--themeopts-config", cfgFile, "--webhook-urls", hook.URL, "--webhook-secret", "s", "--change-interval", "100ms"), env))
	}
	leader := func(step string, not int) int {
		t.Helper()
		one := -1
		testwait.For(t, "a single leader: "+step, func() bool {
			n, who := 0, -1
			for i, s := range ss {
				if i == not {
					continue
				}
				if _, body := get(t, s.admin+"/readyz"); strings.Contains(body, `"leader":"yes"`) {
					n, who = n+1, i
				}
			}
			if n == 1 {
				one = who
			}
			return n == 1
		})
		return one
	}
	// Each change sets one more id: its webhook names that id.
	set, n := "", 0
	body := func(i int) string { return fmt.Sprintf("f%d", i) }
	arrived := func(i int) bool { mu.Lock(); defer mu.Unlock(); return got[body(i)] > 0 }
	write := func(i int) {
		set += fmt.Sprintf(`s:%d:"f%d";s:1:"x";`, len(body(i)), i)
		n++
		tdb.SetOption(t, "o", fmt.Sprintf("a:%d:{%s}", n, set))
	}
	// change makes one and waits for its webhook: the next change is its
	// own poll, and whatever the sender sends is in order, so once change
	// i arrived every earlier webhook (a second send of one included) has.
	change := func(i int) {
		t.Helper()
		write(i)
		testwait.For(t, fmt.Sprintf("change %d's webhook", i), func() bool { return arrived(i) })
	}
	count := func(from, to int) (once, more, missing []int) {
		mu.Lock()
		defer mu.Unlock()
		for i := from; i < to; i++ {
			switch n := got[body(i)]; {
			case n == 1:
				once = append(once, i)
			case n > 1:
				more = append(more, i)
			default:
				missing = append(missing, i)
			}
		}
		return
	}

	first := leader("start", -1)
	// A first change every detector reports: each has its baseline, and
	// will see the next ones. A detector's first look is its baseline,
	// taken as it starts (on a loaded machine, after a write): f39 is
	// changed again until every detector has reported it.
	write(39)
	again := 0
	testwait.For(t, "every detector reporting f39", func() bool {
		all := arrived(39)
		for _, s := range ss {
			all = all && logHas(s, `"message":"stored data changed"`, `"keys":["f39"]`)
		}
		if !all {
			again++
			v := strconv.Itoa(again)
			tdb.SetOption(t, "o", fmt.Sprintf(`a:1:{s:3:"f39";s:%d:"%s";}`, len(v), v))
		}
		return all
	})
	for i := 0; i < 10; i++ {
		change(i)
	}
	if once, more, missing := count(0, 10); len(once) != 10 {
		t.Errorf("steady state: sent more than once %v, never %v", more, missing)
	}

	ss[first].stop()
	write(10) // while leadership moves
	second := leader("after the leader stopped", first)
	// The new leader sends what it noticed while following (change 10,
	// not lost), then what it notices: once the fail-over's changes have
	// all arrived, it is past the fail-over.
	for i := 11; i < 15; i++ {
		change(i)
	}
	testwait.For(t, "change 10's webhook from the second leader", func() bool { return arrived(10) })
	for i := 15; i < 25; i++ {
		change(i)
	}
	if _, _, missing := count(10, 25); len(missing) > 0 {
		t.Errorf("lost around the fail-over: %v", missing)
	}
	if once, more, _ := count(15, 25); len(once) != 10 {
		t.Errorf("steady state under the new leader (%d): sent more than once %v", second, more)
	}
	if _, m := get(t, ss[second].admin+"/metrics"); !strings.Contains(m, "\nwpsidecar_leader 1\n") {
		t.Error("the leader's metrics do not say so")
	}
}

// TestRun_Replica: with --db-replica, /readyz and the metrics say whether
// the replica is read and how far it lags.
func TestRun_Replica(t *testing.T) {
	primary := testdb.StartBinlogServer(t)
	replica := testdb.StartReplica(t, primary)
	tdb := testdb.NewOn(t, primary.Config())
	php := httptest.NewServer(http.NotFoundHandler())
	defer php.Close()
	args := []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--upstream", php.URL,
		"--db-replica", "tcp(127.0.0.1:" + strconv.Itoa(replica.Port) + ")/"}
	env := []string{"WORDPRESS_DB_HOST=127.0.0.1:" + strconv.Itoa(primary.Port), "WORDPRESS_DB_USER=root", "WORDPRESS_DB_NAME=" + tdb.Name, "WORDPRESS_TABLE_PREFIX=" + testdb.Prefix}
	s := start(t, args, env)
	testwait.For(t, "readyz saying the replica is read", func() bool {
		code, body := get(t, s.admin+"/readyz")
		return code == 200 && strings.Contains(body, `"replicas":"1 of 1 read"`)
	})
	_, m := get(t, s.admin+"/metrics")
	label := `{replica="127.0.0.1:` + strconv.Itoa(replica.Port) + `"}`
	if !strings.Contains(m, "wpsidecar_db_replica_reads"+label+" 1\n") || !strings.Contains(m, "wpsidecar_db_replica_lag_seconds"+label+" ") {
		t.Errorf("replica metrics missing:\n%s", m)
	}
}

// TestRun_ReadYourWrites: two sidecars over a primary and a replica that
// applies changes two seconds late (and may: its bound is ten). A write
// through one answers its commit; a read through the other that brings it
// back — header or cookie — sees the write, where a read without it is
// answered by the replica, from before the write. A value that is no
// GTID changes nothing.
func TestRun_ReadYourWrites(t *testing.T) {
	primary := testdb.StartBinlogServer(t)
	replica := testdb.StartReplica(t, primary)
	rdb, err := sql.Open("mysql", replica.Config().FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	delay := map[string]string{"mariadb": "CHANGE MASTER TO MASTER_DELAY = 5", "mysql": "CHANGE REPLICATION SOURCE TO SOURCE_DELAY = 5"}[replica.Flavor()]
	for _, q := range []string{"STOP REPLICA", delay, "START REPLICA"} {
		if _, err := rdb.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tdb := testdb.NewOn(t, primary.Config())
	testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: "abcdefghijklmnopqrstuvwx"})
	php := httptest.NewServer(http.NotFoundHandler())
	defer php.Close()
	cfgFile := filepath.Join(t.TempDir(), "themeopts.json")
	os.WriteFile(cfgFile, []byte(`{"opt_name":"o","sections":[{"id":"s","fields":[{"id":"a","type":"text"}]}]}`), 0o644)
	args := []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--upstream", php.URL, "--themeopts-config", cfgFile,
		"--environment-type", "local", "--db-replica", "tcp(127.0.0.1:" + strconv.Itoa(replica.Port) + ")/", "--max-replica-lag", "10s",
		"--change-feed", "poll"} // serve-from-feed reads the primary
	env := []string{"WORDPRESS_DB_HOST=127.0.0.1:" + strconv.Itoa(primary.Port), "WORDPRESS_DB_USER=root", "WORDPRESS_DB_NAME=" + tdb.Name, "WORDPRESS_TABLE_PREFIX=" + testdb.Prefix}
	a, b := start(t, args, env), start(t, args, env)
	options := "/wp-json/themeopts/v1/options"
	// The replica has the site five seconds late: time enough, on a loaded
	// machine, for the write and a read before the replica has it.
	testwait.For(t, "the replica serving", func() bool {
		_, body := get(t, b.admin+"/readyz")
		code, _, _ := testsite.Send(t, http.MethodGet, b.public+options, "", "admin", "abcdefghijklmnopqrstuvwx")
		return strings.Contains(body, `"replicas":"1 of 1 read"`) && code == 200
	})

	code, body, hdr := testsite.Send(t, http.MethodPost, a.public+options, `{"a":"written"}`, "admin", "abcdefghijklmnopqrstuvwx")
	gtid := hdr.Get("X-WPSidecar-GTID")
	if code != 200 || gtid == "" || !strings.Contains(hdr.Get("Set-Cookie"), "wpsidecar_gtid=") {
		t.Fatalf("write: %d %s %q", code, body, hdr)
	}
	read := func(h ...string) string {
		code, body, _ := testsite.Send(t, http.MethodGet, b.public+options, "", "admin", "abcdefghijklmnopqrstuvwx", h...)
		if code != 200 {
			t.Fatalf("read %q: %d %s", h, code, body)
		}
		return body
	}
	if got := read(); got != `{}` {
		t.Errorf("a read without the commit: %s; want the replica's {} (else this test shows nothing)", got)
	}
	for _, h := range [][]string{{"X-WPSidecar-GTID", gtid}, {"Cookie", hdr.Get("Set-Cookie")}} {
		if got := read(h...); got != `{"a":"written"}` {
			t.Errorf("a read with %s: %s", h[0], got)
		}
	}
	for _, bogus := range []string{"x'; DROP TABLE wp_options; --", "999-999-999999999", strings.Repeat("1-1-1,", 500)} {
		read("X-WPSidecar-GTID", bogus) // answered, whatever it is
	}
}

// TestRun_PrimaryRestart: under a load of reads and writes through a
// sidecar with a replica, the primary is stopped and started again. No
// answer is a 500; while it is down, answers are 200s or 503s with
// Retry-After; once it is back, writes succeed again; every write that
// was answered 201 is in the database.
func TestRun_PrimaryRestart(t *testing.T) {
	primary := testdb.StartBinlogServer(t)
	replica := testdb.StartReplica(t, primary)
	tdb := testdb.NewOn(t, primary.Config())
	testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: "abcdefghijklmnopqrstuvwx"})
	php := httptest.NewServer(http.NotFoundHandler())
	defer php.Close()
	args := []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--upstream", php.URL, "--settings-refresh", "100ms",
		"--environment-type", "local", "--db-replica", "tcp(127.0.0.1:" + strconv.Itoa(replica.Port) + ")/"}
	env := []string{"WORDPRESS_DB_HOST=127.0.0.1:" + strconv.Itoa(primary.Port), "WORDPRESS_DB_USER=root", "WORDPRESS_DB_NAME=" + tdb.Name, "WORDPRESS_TABLE_PREFIX=" + testdb.Prefix}
	s := start(t, args, env)
	waitReady(t, s)
	groups := s.public + "/wp-json/fieldmgr/v1/field-groups"
	// A request that gets no answer at all counts as status 0.
	send := func(method, url, body string) (int, http.Header) {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.SetBasicAuth("admin", "abcdefghijklmnopqrstuvwx")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	if code, body, _ := testsite.Send(t, http.MethodGet, groups, "", "admin", "abcdefghijklmnopqrstuvwx"); code != 200 {
		t.Fatalf("before: %d %s\n%s", code, body, s.log.String())
	}
	if code, body, _ := testsite.Send(t, http.MethodPost, groups, `{"group_key":"first","title":"T"}`, "admin", "abcdefghijklmnopqrstuvwx"); code != 201 {
		t.Fatalf("a write before: %d %s", code, body)
	}

	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		created  []string
		noRetry  int
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	record := func(code int, hdr http.Header) {
		mu.Lock()
		defer mu.Unlock()
		statuses[code]++
		if code == 503 && hdr.Get("Retry-After") == "" {
			noRetry++
		}
	}
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				record(send(http.MethodGet, groups, ""))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			key := fmt.Sprintf("g%d", i)
			code, hdr := send(http.MethodPost, groups, `{"group_key":"`+key+`","title":"T"}`)
			record(code, hdr)
			if code == 201 {
				mu.Lock()
				created = append(created, key)
				mu.Unlock()
			}
		}
	}()
	// Conditions on the load, not durations: it runs before the outage,
	// meets it, and runs on after.
	waitLoad := func(what string, cond func() bool) {
		t.Helper()
		testwait.For(t, "the load: "+what, func() bool { mu.Lock(); defer mu.Unlock(); return cond() })
	}
	waitLoad("wrote", func() bool { return len(created) >= 3 })
	primary.Stop()
	waitLoad("met the outage", func() bool { return statuses[503] >= 3 })
	primary.Start()
	restarted := time.Now()
	// Writes succeed again.
	var back time.Duration
	testwait.For(t, "writes back", func() bool {
		code, _ := send(http.MethodPost, groups, `{"group_key":"after","title":"T"}`)
		return code == 201
	})
	back = time.Since(restarted)
	mu.Lock()
	created = append(created, "after")
	mu.Unlock()
	mu.Lock()
	afterAt := len(created)
	mu.Unlock()
	waitLoad("wrote after the restart", func() bool { return len(created) >= afterAt+3 })
	close(stop)
	wg.Wait()
	t.Logf("primary restarted: statuses %v; a write succeeded %s after the restart", statuses, back.Round(time.Millisecond))
	for code := range statuses {
		if code != 200 && code != 201 && code != 503 {
			t.Errorf("%d answers %d", statuses[code], code)
		}
	}
	if noRetry > 0 {
		t.Errorf("%d 503s without Retry-After", noRetry)
	}
	for _, key := range created {
		var n int
		if err := tdb.SQL.QueryRow("SELECT COUNT(*) FROM wp_fieldmgr_groups WHERE group_key = ?", key).Scan(&n); err != nil || n != 1 {
			t.Errorf("group %s answered 201 but is not stored: %d %v", key, n, err)
		}
	}
}

// TestRun_MultisiteEverySite: on a network the sidecar answers every
// site's REST requests from that site's own tables (its options, so its
// home URL in the Link header), found by host (subdomain, mapped domain)
// or by path (subdirectory, whose REST routes follow the site's path). A
// request that finds no site, or a site WordPress blocks (archived), goes
// to PHP, which answers it as WordPress does.
func TestRun_MultisiteEverySite(t *testing.T) {
	php := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "php for "+r.Host+r.URL.RequestURI()) }))
	defer php.Close()
	network := func(t *testing.T, subdomain bool, sites ...[2]string) (*started, *testdb.DB) {
		tdb := testdb.New(t)
		tdb.AddSitemeta(t)
		tdb.AddNetworkTables(t)
		for _, q := range []string{
			"INSERT INTO wp_site (domain, path) VALUES ('example.test', '/')",
			"INSERT INTO wp_sitemeta (site_id, meta_key, meta_value) VALUES (1, 'siteurl', 'http://example.test/')",
		} {
			if _, err := tdb.SQL.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		for i, s := range sites {
			archived := strings.HasPrefix(s[0], "old.") || s[1] == "/old/"
			if _, err := tdb.SQL.Exec("INSERT INTO wp_blogs (site_id, domain, path, archived) VALUES (1, ?, ?, ?)", s[0], s[1], archived); err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				tdb.AddSite(t, int64(i+1), "http://"+s[0]+strings.TrimSuffix(s[1], "/"))
			}
		}
		args, env := sidecarArgs(t, tdb, php.URL)
		args = append(args, "--multisite")
		if subdomain {
			args = append(args, "--subdomain-install")
		}
		s := start(t, args, env)
		waitReady(t, s)
		return s, tdb
	}
	ask := func(t *testing.T, s *started, host, path string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.public+path, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if link := resp.Header.Get("Link"); link != "" {
			return link + " " + string(b)
		}
		return string(b)
	}
	const denied = `; rel="https://api.w.org/" {"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":401}}`
	check := func(t *testing.T, s *started, cases []struct{ host, path, want string }) {
		t.Helper()
		testwait.For(t, "the site map read", func() bool { return ask(t, s, cases[0].host, cases[0].path) == cases[0].want })
		for _, c := range cases {
			if got := ask(t, s, c.host, c.path); got != c.want {
				t.Errorf("%s%s:\n got %s\nwant %s", c.host, c.path, got, c.want)
			}
		}
	}
	t.Run("subdomain", func(t *testing.T) {
		s, tdb := network(t, true, [2]string{"example.test", "/"}, [2]string{"shop.example.test", "/"}, [2]string{"mapped.test", "/"}, [2]string{"old.example.test", "/"})
		check(t, s, []struct{ host, path, want string }{
			{"shop.example.test", "/wp-json/fieldmgr/v1/field-groups", "<http://shop.example.test/wp-json/>" + denied},
			{"example.test", "/wp-json/fieldmgr/v1/field-groups", "<http://example.test/wp-json/>" + denied},
			{"example.test:80", "/wp-json/fieldmgr/v1/field-groups", "<http://example.test/wp-json/>" + denied},
			{"EXAMPLE.test", "/?rest_route=/fieldmgr/v1/field-groups", "<http://example.test/wp-json/>" + denied},
			{"shop.example.test", "/?rest_route=/fieldmgr/v1/field-groups", "<http://shop.example.test/wp-json/>" + denied},
			{"mapped.test", "/wp-json/fieldmgr/v1/field-groups", "<http://mapped.test/wp-json/>" + denied},
			{"old.example.test", "/wp-json/fieldmgr/v1/field-groups", "php for old.example.test/wp-json/fieldmgr/v1/field-groups"},
			{"nope.example.test", "/wp-json/fieldmgr/v1/field-groups", "php for nope.example.test/wp-json/fieldmgr/v1/field-groups"},
			{"shop.example.test", "/a-page/", "php for shop.example.test/a-page/"},
		})
		// A site deleted from the network: its services are let go, and its
		// host finds no site (PHP answers).
		if _, err := tdb.SQL.Exec("DELETE FROM wp_blogs WHERE domain = 'shop.example.test'"); err != nil {
			t.Fatal(err)
		}
		check(t, s, []struct{ host, path, want string }{
			{"shop.example.test", "/wp-json/fieldmgr/v1/field-groups", "php for shop.example.test/wp-json/fieldmgr/v1/field-groups"},
		})
		testwait.For(t, "site 2's services let go", func() bool {
			for _, l := range strings.Split(s.log.String(), "\n") {
				if strings.Contains(l, `"blog_id":2,`) && strings.Contains(l, `"message":"a site left the network; its services are let go"`) {
					return true
				}
			}
			return false
		})
	})
	t.Run("subdirectory", func(t *testing.T) {
		s, _ := network(t, false, [2]string{"example.test", "/"}, [2]string{"example.test", "/blog2/"}, [2]string{"example.test", "/old/"})
		check(t, s, []struct{ host, path, want string }{
			{"example.test", "/blog2/wp-json/fieldmgr/v1/field-groups", "<http://example.test/blog2/wp-json/>" + denied},
			{"example.test", "/BLOG2/wp-json/fieldmgr/v1/Field-Groups", "<http://example.test/blog2/wp-json/>" + denied},
			{"example.test", "/blog2/?rest_route=/fieldmgr/v1/field-groups", "<http://example.test/blog2/wp-json/>" + denied},
			{"example.test", "/blog2/index.php?rest_route=/fieldmgr/v1/field-groups", "<http://example.test/blog2/wp-json/>" + denied},
			{"example.test", "/wp-json/fieldmgr/v1/field-groups", "<http://example.test/wp-json/>" + denied},
			{"example.test", "/blog9/wp-json/fieldmgr/v1/field-groups", "php for example.test/blog9/wp-json/fieldmgr/v1/field-groups"},
			{"example.test", "/old/wp-json/fieldmgr/v1/field-groups", "php for example.test/old/wp-json/fieldmgr/v1/field-groups"},
			{"example.test", "/blog2/a-page/", "php for example.test/blog2/a-page/"},
		})
	})
}

// TestRun_LameDuck: on the signal the sidecar first keeps answering for
// --shutdown-delay — /readyz failing, every answer closing its connection,
// new connections still accepted — then stops accepting.
func TestRun_LameDuck(t *testing.T) {
	tdb := testdb.New(t)
	php := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "php") }))
	defer php.Close()
	args, env := sidecarArgs(t, tdb, php.URL)
	s := start(t, append(args, "--shutdown-delay", "2s"), env)
	waitReady(t, s)
	client := &http.Client{Transport: &http.Transport{}}
	// get says whether the answer closed its connection.
	get := func(u string) (int, string, bool, error) {
		resp, err := client.Get(u)
		if err != nil {
			return 0, "", false, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Close, nil
	}
	if code, _, closed, err := get(s.public + "/page"); err != nil || code != 200 || closed {
		t.Fatalf("before: %d closed %v %v", code, closed, err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	testwait.For(t, "/readyz saying it is shutting down", func() bool {
		code, body, _, _ := get(s.admin + "/readyz")
		return code == 503 && body == `{"status":"shutting down"}`+"\n"
	})
	for range 3 { // on new connections, each closed after its answer
		code, body, closed, err := get(s.public + "/page")
		if err != nil || code != 200 || body != "php" || !closed {
			t.Errorf("during the delay: %d %q closed %v %v", code, body, closed, err)
		}
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := get(s.public + "/page"); err == nil {
		t.Error("still accepting after the delay")
	}
	if !strings.Contains(s.log.String(), "every answer closes its connection") {
		t.Errorf("log:\n%s", s.log.String())
	}
}

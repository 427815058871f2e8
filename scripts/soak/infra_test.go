//go:build soak

package soak

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
)

// freePort is a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// redisServer is a Redis of the harness's own, so that stopping it stops
// nothing else on the machine.
type redisServer struct {
	addr string
	dir  string
	cmd  *exec.Cmd
}

func startRedis(t testing.TB) *redisServer {
	t.Helper()
	r := &redisServer{addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), dir: t.TempDir()}
	r.start(t)
	t.Cleanup(r.stop)
	return r
}

func (r *redisServer) start(t testing.TB) {
	t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	r.cmd = exec.Command("redis-server", "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", r.dir)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("redis-server (scripts/install-deps.sh installs it): %v", err)
	}
	testwait.For(t, "redis-server accepting connections", func() bool {
		c, err := net.DialTimeout("tcp", r.addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

func (r *redisServer) stop() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	r.cmd.Wait()
	r.cmd = nil
}

// instance is one sidecar process, restartable.
type instance struct {
	name          string
	bin           string
	args          []string
	public, admin string
	logPath       string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

func newInstance(t testing.TB, name, bin, dir string, args ...string) *instance {
	pub, adm := freePort(t), freePort(t)
	i := &instance{name: name, bin: bin, logPath: filepath.Join(dir, "sidecar-"+name+".log"),
		public: fmt.Sprintf("127.0.0.1:%d", pub), admin: fmt.Sprintf("127.0.0.1:%d", adm)}
	i.args = append([]string{"--listen", i.public, "--admin-listen", i.admin}, args...)
	i.start(t)
	t.Cleanup(i.term)
	return i
}

// start runs the instance and waits until /readyz passes.
func (i *instance) start(t testing.TB) {
	t.Helper()
	log, err := os.OpenFile(i.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(i.bin, i.args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = []string{} // everything from wp-config.php and the flags
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); log.Close(); close(exited) }()
	i.mu.Lock()
	i.cmd, i.exited = cmd, exited
	i.mu.Unlock()
	testwait.For(t, fmt.Sprintf("instance %s ready (its log: %s)", i.name, i.logPath), i.ready)
}

func (i *instance) ready() bool {
	resp, err := http.Get("http://" + i.admin + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

func (i *instance) signal(s os.Signal) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.cmd != nil {
		i.cmd.Process.Signal(s)
	}
}

// term sends SIGTERM and waits for the process to end.
func (i *instance) term() {
	i.mu.Lock()
	cmd, exited := i.cmd, i.exited
	i.cmd = nil
	i.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
}

// metrics reads the process's memory, goroutines and descriptors.
func (i *instance) metrics() (rss, goroutines, fds float64, err error) {
	resp, err := http.Get("http://" + i.admin + "/metrics")
	if err != nil {
		return 0, 0, 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "process_resident_memory_bytes":
			rss = v
		case "go_goroutines":
			goroutines = v
		case "process_open_fds":
			fds = v
		}
	}
	return rss, goroutines, fds, nil
}

// balancer spreads requests over the instances whose /readyz passes (all
// of them when none does: an outage of the database fails every check),
// checked every 100 ms, as a load balancer with health checks does. A
// request whose connection could not be opened is sent to the next
// instance: nothing of it was sent.
type balancer struct {
	instances []*instance
	healthy   []atomic.Bool
	next      atomic.Uint32
	transport *http.Transport
	srv       *http.Server
}

func startBalancer(t testing.TB, listen string, instances ...*instance) *balancer {
	t.Helper()
	b := &balancer{instances: instances, healthy: make([]atomic.Bool, len(instances)),
		transport: &http.Transport{MaxIdleConnsPerHost: 64, DialContext: (&net.Dialer{Timeout: time.Second}).DialContext}}
	for i, in := range instances {
		b.healthy[i].Store(in.ready())
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.Out.Host = r.In.Host },
		Transport: b,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.WriteHeader(599) // the balancer's own: no instance answered
		},
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	b.srv = &http.Server{Handler: proxy}
	go b.srv.Serve(l)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			for i, in := range b.instances {
				b.healthy[i].Store(in.ready())
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done; b.srv.Close() })
	return b
}

// RoundTrip sends r to the next healthy instance, and to the others in
// turn while a connection cannot be opened.
func (b *balancer) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	n := len(b.instances)
	first := int(b.next.Add(1)) % n
	var order []int
	for k := range n {
		if i := (first + k) % n; b.healthy[i].Load() {
			order = append(order, i)
		}
	}
	for k := range n {
		if i := (first + k) % n; !b.healthy[i].Load() {
			order = append(order, i) // the others last
		}
	}
	var err error
	for _, i := range order {
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host = "http", b.instances[i].public
		out.Body = io.NopCloser(bytes.NewReader(body))
		var resp *http.Response
		if resp, err = b.transport.RoundTrip(out); err == nil {
			return resp, nil
		}
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" {
			return nil, err
		}
	}
	return nil, err
}

//go:build e2e

package demo

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testbrowser"
)

// bannerTimeout bounds the wait for the banner: the first run builds the
// sidecar and installs WordPress, on a busy machine too.
const bannerTimeout = 10 * time.Minute

// freePorts are n ports nothing listens on now, on 127.0.0.1, below the
// kernel's ephemeral range: the demo binds them seconds later, and the
// other packages' tests, running meanwhile, bind ports the kernel picks
// (":0") from that range — a port picked the same way could be theirs by
// then (a CI run's demo once found its port taken by another test's
// mariadbd).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000 {
			t.Fatalf("no %d free ports found between 10000 and 32000", n)
		}
		p := 10000 + rand.IntN(22000)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil || slices.Contains(ports, p) {
			continue
		}
		defer l.Close()
		ports = append(ports, p)
	}
	return ports
}

// demoEnv moves every port of the demo and its state into the test's own
// (DEMO_STATE, the last variable), in a shell that holds WPSIDECAR_
// variables the demo must not take.
func demoEnv(t *testing.T, ports []int) []string {
	// What a developer's shell may hold: the tests' own variables (CI sets
	// WPSIDECAR_STACKS) and a real site's setting, none of them the demo's.
	env := append(os.Environ(), "WPSIDECAR_STACKS=/nonexistent", "WPSIDECAR_DB_PASSWORD=not-the-demos")
	for i, v := range []string{"DEMO_PORT", "WP_PORT", "WP_PROXY_PORT", "DEMO_ADMIN_PORT", "DEMO_DB_PORT"} {
		env = append(env, v+"="+strconv.Itoa(ports[i]))
	}
	return append(env, "DEMO_STATE="+filepath.Join(t.TempDir(), "demo"))
}

// TestDemo_RefusedPorts: a port the demo needs, held by another server,
// given twice or not a port stops it before anything starts, naming the
// port, its holder and the variable that moves it.
func TestDemo_RefusedPorts(t *testing.T) {
	if testing.Short() {
		t.Skip("demo: runs scripts/demo.sh; skipped under -short")
	}
	comm, _ := os.ReadFile("/proc/self/comm")
	for _, tt := range []struct {
		name string
		// set gives the variables the case changes (holding WP_PORT when
		// nil) and what the demo must say.
		set func(ports []int) (env []string, want string)
	}{
		{"taken", func(ports []int) ([]string, string) {
			return nil, fmt.Sprintf("demo: port %d (WP_PORT) is taken by %s (pid %d); stop it, or move the demo: WP_PORT=<free port> make demo\n",
				ports[1], strings.TrimSpace(string(comm)), os.Getpid())
		}},
		{"twice", func(ports []int) ([]string, string) {
			return []string{"WP_PROXY_PORT=" + strconv.Itoa(ports[1])},
				fmt.Sprintf("demo: port %d is given to two of DEMO_PORT, WP_PORT, WP_PROXY_PORT, DEMO_ADMIN_PORT, DEMO_DB_PORT; give WP_PROXY_PORT another\n", ports[1])
		}},
		{"not a number", func([]int) ([]string, string) {
			return []string{"DEMO_ADMIN_PORT=nine"}, "demo: DEMO_ADMIN_PORT=nine is not a port number (1 to 65535)\n"
		}},
		{"too large", func([]int) ([]string, string) {
			return []string{"DEMO_DB_PORT=70000"}, "demo: DEMO_DB_PORT=70000 is not a port number (1 to 65535)\n"
		}},
		{"zero", func([]int) ([]string, string) {
			return []string{"DEMO_PORT=0"}, "demo: DEMO_PORT=0 is not a port number (1 to 65535)\n"
		}},
		{"octal-looking", func([]int) ([]string, string) {
			return []string{"DEMO_PORT=08080"}, "demo: DEMO_PORT=08080 is not a port number (1 to 65535)\n"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ports := freePorts(t, 5)
			set, want := tt.set(ports)
			if set == nil {
				l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(ports[1]))
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
			}
			env := demoEnv(t, ports)
			state := strings.TrimPrefix(env[len(env)-1], "DEMO_STATE=")
			cmd := exec.Command("scripts/demo.sh")
			// The case's variables come last: for a name given twice, the
			// last value is the one the demo gets.
			cmd.Dir, cmd.Env = "../..", append(env, set...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("demo: %v, want exit status 1\n%s", err, out)
			}
			if string(out) != want {
				t.Errorf("the demo said\n%q\nwant\n%q", out, want)
			}
			if _, err := os.Stat(state); !os.IsNotExist(err) {
				t.Errorf("the demo made its state before checking the ports: %v", err)
			}
		})
	}
}

// banner is what the demo prints once everything is up.
type banner struct {
	site, admin, adminUser, adminPassword, history, readyz, metrics string
	mode                                                            map[string]any
	fromMemory, dbReads, hitsBefore, hitsAfter                      int
	restLog, log                                                    string
	curls                                                           []string
	// leftOut are the WPSIDECAR_ variables of the shell (the test gives
	// some) that the demo kept from its sidecar.
	leftOut []string
}

var bannerLines = map[string]*regexp.Regexp{
	"site":    regexp.MustCompile(`(?m)^  WordPress behind wpsidecar: (\S+)$`),
	"admin":   regexp.MustCompile(`(?m)^  Admin: +(\S+) +user (\S+), password (\S+)$`),
	"history": regexp.MustCompile(`(?m)^  Change history: +(\S+) `),
	"health":  regexp.MustCompile(`(?m)^  Health and metrics: +(\S+) +(\S+)$`),
	"mode":    regexp.MustCompile(`(?m)^  Mode \(/readyz\): +(.+)$`),
	"served":  regexp.MustCompile(`(?m)^  Served from the feed: +20 GETs of the field groups: (\d+) answered from memory, (\d+) database reads$`),
	"kept":    regexp.MustCompile(`(?m)rest_cache hits (\d+) -> (\d+) \(access log: (.*)\)$`),
	"curl":    regexp.MustCompile(`(?m)^    (curl .+)$`),
	"log":     regexp.MustCompile(`(?m)^  Sidecar log: +(\S+) +\(the last run's: sidecar\.log\.1\)\n +\(each anonymous wp/v2 read's access line there says rest_cache=hit, miss or bypass\)$`),
	"leftOut": regexp.MustCompile(`(?m)^demo: the sidecar runs without these from your environment: (.+)$`),
}

func parseBanner(t *testing.T, s string) banner {
	t.Helper()
	m := map[string][]string{}
	for name, re := range bannerLines {
		if m[name] = re.FindStringSubmatch(s); m[name] == nil {
			t.Fatalf("the banner has no %s line (%s):\n%s", name, re, s)
		}
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	b := banner{site: m["site"][1], admin: m["admin"][1], adminUser: m["admin"][2], adminPassword: m["admin"][3],
		history: m["history"][1], readyz: m["health"][1], metrics: m["health"][2],
		fromMemory: atoi(m["served"][1]), dbReads: atoi(m["served"][2]),
		hitsBefore: atoi(m["kept"][1]), hitsAfter: atoi(m["kept"][2]), restLog: m["kept"][3], log: m["log"][1],
		leftOut: strings.Fields(m["leftOut"][1])}
	if err := json.Unmarshal([]byte(m["mode"][1]), &b.mode); err != nil {
		t.Fatalf("the banner's mode is not /readyz's JSON: %v: %s", err, m["mode"][1])
	}
	for _, c := range bannerLines["curl"].FindAllStringSubmatch(s, -1) {
		b.curls = append(b.curls, c[1])
	}
	return b
}

// demo is one run of scripts/demo.sh, up (its banner printed).
type demo struct {
	cmd *exec.Cmd
	// exited is closed when the demo has ended, how in err; read when
	// all it printed is in out.
	exited, read chan struct{}
	err          error
	mu           sync.Mutex
	out          strings.Builder
}

// startDemo runs scripts/demo.sh with env and waits for its banner; the
// test's cleanup interrupts it if the test did not.
func startDemo(t *testing.T, env []string) *demo {
	t.Helper()
	d := &demo{cmd: exec.Command("scripts/demo.sh"), exited: make(chan struct{}), read: make(chan struct{})}
	d.cmd.Dir, d.cmd.Env = "../..", env
	// Its own process group, as a terminal's foreground job: Ctrl-C goes to
	// the whole group.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	d.cmd.Stdout, d.cmd.Stderr = pw, pw
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.err = d.cmd.Wait(); pw.Close(); close(d.exited) }()
	up := make(chan struct{})
	go func() {
		defer close(d.read)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			d.mu.Lock()
			d.out.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
			if sc.Text() == "  Ctrl-C stops everything." {
				close(up)
			}
		}
	}()
	t.Cleanup(func() { d.interrupt() })
	start := time.Now()
	select {
	case <-up:
	case <-d.exited:
		<-d.read
		t.Fatalf("the demo ended before its banner:\n%s", d.output())
	case <-time.After(bannerTimeout):
		t.Fatalf("no banner in %s:\n%s", bannerTimeout, d.output())
	}
	t.Logf("banner after %s", time.Since(start).Round(time.Millisecond))
	return d
}

func (d *demo) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

// interrupt is Ctrl-C: it returns once the demo has ended, with how it
// ended (nil when it had already).
func (d *demo) interrupt() error {
	select {
	case <-d.exited:
		return nil
	default:
	}
	syscall.Kill(-d.cmd.Process.Pid, syscall.SIGINT)
	<-d.exited
	<-d.read
	return d.err
}

// TestDemo: `make demo` as a newcomer runs it, twice (the second reuses
// the site and its database). Its banner names the mode the README
// measures (the binlog feed, answers from memory), shows answers given
// from memory and a wp/v2 answer kept; every address it prints answers,
// every curl it suggests succeeds, wp-admin's Change history screen lists
// the demo's changes in a browser; Ctrl-C stops it all and frees every
// port.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("demo: runs scripts/demo.sh; skipped under -short")
	}
	ports := freePorts(t, 5)
	env := demoEnv(t, ports)
	for _, run := range []string{"first", "again"} {
		t.Run(run, func(t *testing.T) { checkDemo(t, env, ports) })
	}
}

// running are the command lines of the processes that name dir.
func running(t *testing.T, dir string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, p := range procs {
		b, _ := os.ReadFile(p) // gone since: not running
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, dir) {
			found = append(found, filepath.Base(filepath.Dir(p))+": "+cmd)
		}
	}
	return found
}

// steps are the lines the demo prints as each step starts, in order,
// before its banner: a first run, installing and building, never sits
// silent.
var steps = []string{
	"demo: checking Debian's packages (",
	"demo: building the sidecar into ",
	"demo: starting MariaDB on 127.0.0.1:",
	"demo: starting WordPress on 127.0.0.1:",
	"demo: starting the sidecar on 127.0.0.1:",
	"demo: adding the demo's field groups",
	"  WordPress behind wpsidecar: ",
}

// checkSteps: out has a line starting with each of steps, in order.
func checkSteps(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	i := 0
	for _, l := range lines {
		if i < len(steps) && strings.HasPrefix(l, steps[i]) {
			i++
		}
	}
	if i < len(steps) {
		t.Errorf("the demo printed no line %q (after the steps before it):\n%s", steps[i], out)
	}
}

func checkDemo(t *testing.T, env []string, ports []int) {
	state := strings.TrimPrefix(env[len(env)-1], "DEMO_STATE=")
	before, _ := os.ReadFile(filepath.Join(state, "sidecar.log")) // the last run's, if any
	d := startDemo(t, env)
	checkSteps(t, d.output())
	b := parseBanner(t, d.output())
	// The last run's log is kept beside this one's, and the banner says
	// where both are and what the access log says of kept answers.
	if kept, _ := os.ReadFile(filepath.Join(state, "sidecar.log.1")); len(before) > 0 && string(kept) != string(before) {
		t.Errorf("sidecar.log.1 is not the last run's log (%d bytes, the last run wrote %d)", len(kept), len(before))
	}
	if b.log != filepath.Join(state, "sidecar.log") {
		t.Errorf("the banner's log: %q", b.log)
	}
	if b.mode["change_feed"] != "binlog" || b.mode["serve_from_feed"] != "memory" {
		t.Errorf("the demo's mode: %v, want the binlog feed and answers from memory", b.mode)
	}
	// The shell's WPSIDECAR_ variables were left out, and the demo says so.
	if !slices.Contains(b.leftOut, "WPSIDECAR_DB_PASSWORD") || !slices.Contains(b.leftOut, "WPSIDECAR_STACKS") {
		t.Errorf("the demo left out %q, want WPSIDECAR_DB_PASSWORD and WPSIDECAR_STACKS among them", b.leftOut)
	}
	if b.fromMemory != 20 || b.dbReads != 0 {
		t.Errorf("of 20 GETs, %d answered from memory and %d read the database", b.fromMemory, b.dbReads)
	}
	if b.hitsAfter != b.hitsBefore+1 || b.restLog != "rest_cache=miss rest_cache=hit" {
		t.Errorf("the kept answer: hits %d -> %d, access log %q; want one hit after a miss", b.hitsBefore, b.hitsAfter, b.restLog)
	}

	// Every address answers: the site, wp-admin and the history screen
	// (sending to the sign-in form), the admin listener.
	for _, c := range []struct{ url, want string }{
		{b.site, "</html>"},
		{b.admin, `id="loginform"`},
		{b.history, `id="loginform"`},
		{b.readyz, `"change_feed":"binlog"`},
		{b.metrics, "wpsidecar_rest_cache_requests_total"},
	} {
		resp, err := http.Get(c.url)
		if err != nil {
			t.Errorf("GET %s: %v", c.url, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), c.want) {
			t.Errorf("GET %s: %d, body without %q:\n%.300s", c.url, resp.StatusCode, c.want, body)
		}
	}
	// Every curl it suggests answers 200 with JSON.
	if len(b.curls) != 6 {
		t.Errorf("%d curl commands, want 6: %q", len(b.curls), b.curls)
	}
	for _, c := range b.curls {
		got, err := exec.Command("bash", "-c", c+` -w '\n%{http_code}'`).Output()
		i := strings.LastIndexByte(string(got), '\n')
		body, code := string(got[:max(i, 0)]), string(got[i+1:])
		if err != nil || code != "200" || !json.Valid([]byte(body)) {
			t.Errorf("%s: %v, status %s, body %.300s", c, err, code, body)
		}
	}

	// Tools → Change history, signed in as the admin the banner names: the
	// demo's field groups are listed. A subtest, so that the browser has
	// stopped (its console checked) before the demo does.
	t.Run("history screen", func(t *testing.T) {
		br := testbrowser.Start(t, testbrowser.Options{})
		// wp-admin shows Gravatar avatars, which this closed network cannot
		// look up (a newcomer's machine can).
		br.AllowNetworkError(`net::ERR_NAME_NOT_RESOLVED`)
		br.SignIn(strings.TrimSuffix(b.site, "/"), b.adminUser, b.adminPassword, "")
		// The dashboard's news widget, loaded once the page is up: PHP has the
		// extensions WordPress's feeds need (the network may still be closed).
		// The page whole first: the admin bar SignIn waits for comes before
		// the widgets in a page PHP may still be sending.
		br.WaitTrue("the news widget loaded", `() => document.readyState === "complete" && !document.querySelector("#dashboard_primary .widget-loading")`)
		if news := br.Text("#dashboard_primary"); strings.Contains(news, "XML or PCRE extensions not loaded") {
			t.Errorf("wp-admin's dashboard: %q", news)
		}
		br.Navigate(b.history)
		br.WaitTrue("the list loaded or failed", `() => document.getElementById("wpsidecar-history").getAttribute("data-state") !== "loading"`)
		if state := br.Attr("#wpsidecar-history", "data-state"); state == "error" {
			t.Fatalf("the history screen says %q", br.Text("#wpsidecar-history-error"))
		}
		for _, key := range []string{"product_details", "author_profile", "accent_color"} {
			br.WaitVisible(fmt.Sprintf(`#wpsidecar-history-table tr.wpsidecar-entry[data-key=%q]`, key))
		}
		br.Screenshot("demo-history.png")
	})

	// Ctrl-C: everything stops, and every port is free again.
	interrupted := time.Now()
	if err := d.interrupt(); err != nil {
		t.Errorf("the demo, interrupted: %v", err)
	}
	t.Logf("stopped %s after Ctrl-C", time.Since(interrupted).Round(time.Millisecond))
	if o := d.output(); !strings.HasSuffix(o, "demo stopped\n") {
		t.Errorf("the demo's last words: %q", o[max(0, len(o)-300):])
	}
	for _, p := range ports {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			c.Close()
			t.Errorf("port %d still answers after the demo stopped", p)
		}
	}
	// Nor does anything it started run on (PHP-FPM listens on a socket):
	// every process of the demo names its state directory.
	if left := running(t, state); len(left) > 0 {
		t.Errorf("still running after the demo stopped:\n%s", strings.Join(left, "\n"))
	}
}

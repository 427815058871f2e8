// Package testbrowser drives a real browser, Debian's headless Chromium
// (/usr/bin/chromium, installed by scripts/install-deps.sh), for the
// end-to-end tests of the wp-admin screens: start it, navigate, wait for
// an element or an attribute, click, type, read, take screenshots, and
// fail the test on any JavaScript console error or uncaught exception the
// page reports.
//
// Every helper fails the test loudly (t.Fatalf, with what the page shows)
// when what it waits for does not come within Timeout; under `go test
// -short` Start skips the test, saying so.
package testbrowser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ExecPath is the browser: Debian's chromium package.
const ExecPath = "/usr/bin/chromium"

// Timeout bounds each step: a busy machine (two shared cores, PHP and
// MariaDB beside) loads wp-admin slowly, but never this slowly.
const Timeout = 30 * time.Second

// Options adjust the browser.
type Options struct {
	// Proxy, "host:port", sends every request of the browser through that
	// server as a proxy, loopback addresses included: the browser asks for
	// the site's own URL (WordPress's canonical host) and the server there
	// (e.g. nginx with the recipes in front of the site) answers it.
	Proxy string
	// Artifacts is where Screenshot writes; "" for ArtifactsDir(t).
	Artifacts string
}

// Browser is one Chromium with one tab, for one test.
type Browser struct {
	t         testing.TB
	ctx       context.Context
	artifacts string
	output    string // Chromium's own output, shown when it fails to start

	mu       sync.Mutex
	problems []string         // console errors and exceptions, in order
	allowed  []*regexp.Regexp // network errors the test expects (e.g. a 412)
	marks    map[string]chan struct{}
}

// Start starts Chromium with a fresh profile (t.TempDir()) and one tab;
// the test's cleanup stops it and fails the test if the page reported a
// JavaScript console error or an uncaught exception meanwhile.
func Start(t testing.TB, o Options) *Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("testbrowser: needs Chromium; skipped under -short")
	}
	if _, err := os.Stat(ExecPath); err != nil {
		t.Fatalf("testbrowser: no %s (scripts/install-deps.sh, `make deps`, installs Debian's chromium): %v", ExecPath, err)
	}
	b := &Browser{t: t, artifacts: o.Artifacts, marks: map[string]chan struct{}{}}
	if b.artifacts == "" {
		b.artifacts = ArtifactsDir(t)
	}
	profile := t.TempDir()
	b.output = filepath.Join(profile, "chromium.log")
	out, err := os.Create(b.output)
	if err != nil {
		t.Fatal(err)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), allocatorOptions(o, profile, out)...)
	ctx, cancelTab := chromedp.NewContext(actx)
	b.ctx = ctx
	// Subscribed before the first page: nothing the page says is lost.
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go b.collect(messages, done)
	t.Cleanup(func() {
		b.checkConsole()
		cancelTab()
		cancelAlloc()
		<-done
		out.Close()
	})
	if err := b.run(chromedp.Navigate("about:blank")); err != nil {
		log, _ := os.ReadFile(b.output)
		t.Fatalf("testbrowser: Chromium did not start: %v\n%s", err, log)
	}
	return b
}

// allocatorOptions are Chromium's flags: headless, as root (no sandbox),
// and quiet on the closed network (no background requests, updates or
// sync, which it would otherwise retry without end).
func allocatorOptions(o Options, profile string, out *os.File) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(ExecPath),
		chromedp.UserDataDir(profile),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(out),
	)
	if o.Proxy != "" {
		// "<-loopback>" takes back Chromium's implicit rule that loopback
		// addresses never go through a proxy.
		opts = append(opts, chromedp.ProxyServer("http://"+o.Proxy), chromedp.Flag("proxy-bypass-list", "<-loopback>"))
	}
	return opts
}

// flushPrefix starts the console message checkConsole waits for.
const flushPrefix = "testbrowser flush "

// collect records the page's console errors and uncaught exceptions, and
// closes the channel of each flush mark it sees.
func (b *Browser) collect(messages func(func(chromedp.ConsoleMessage, error) bool), done chan struct{}) {
	defer close(done)
	for m, err := range messages {
		if err != nil {
			return
		}
		b.mu.Lock()
		if ch, ok := b.marks[m.Text]; ok && strings.HasPrefix(m.Text, flushPrefix) {
			close(ch)
			delete(b.marks, m.Text)
		} else if problem(m) && !b.expected(m) {
			b.problems = append(b.problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line+1))
		}
		b.mu.Unlock()
	}
}

// problem is a message that fails the test: console.error, console.assert,
// an uncaught exception or unhandled rejection, and the browser's own
// errors (a script or style that did not load, a request refused).
func problem(m chromedp.ConsoleMessage) bool {
	switch m.Type {
	case chromedp.ConsoleError, chromedp.ConsoleException, "assert":
		return true
	}
	return false
}

// expected is a network error the test said it causes (AllowNetworkError).
func (b *Browser) expected(m chromedp.ConsoleMessage) bool {
	if m.Source != "network" {
		return false
	}
	for _, re := range b.allowed {
		if re.MatchString(m.Text) {
			return true
		}
	}
	return false
}

// AllowNetworkError lets the browser's log report a failed request whose
// text matches pattern (e.g. `status of 412` when the test provokes a
// 412): the request failing is what the test checks, not a fault of the
// page. A JavaScript error is never allowed.
func (b *Browser) AllowNetworkError(pattern string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.allowed = append(b.allowed, regexp.MustCompile(pattern))
}

// checkConsole fails the test with every problem the page reported so
// far. It first writes a mark to the console, in a task of its own (the
// browser reports an unhandled rejection in a task after the one that
// made it), and waits for the mark to come through: every message before
// it has then been recorded.
func (b *Browser) checkConsole() {
	b.t.Helper()
	mark := flushPrefix + time.Now().Format(time.RFC3339Nano)
	ch := make(chan struct{})
	b.mu.Lock()
	b.marks[mark] = ch
	b.mu.Unlock()
	if err := b.run(chromedp.Evaluate[chromedp.Void](fmt.Sprintf("setTimeout(() => console.debug(%q))", mark))); err == nil {
		select {
		case <-ch:
		case <-time.After(Timeout):
			b.t.Errorf("testbrowser: the console's mark never came through")
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 {
		b.t.Errorf("the page reported %d JavaScript console error(s):\n  %s", len(b.problems), strings.Join(b.problems, "\n  "))
		b.problems = nil
	}
}

// CheckConsole fails the test now if the page reported a console error or
// an uncaught exception since the last check (Stop checks again).
func (b *Browser) CheckConsole() {
	b.t.Helper()
	b.checkConsole()
}

// run runs actions within Timeout.
func (b *Browser) run(actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// get runs one action that returns a value, within Timeout.
func get[T any](b *Browser, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// fail ends the test with what went wrong, where the page was and a
// screenshot of it (failed.png).
func (b *Browser) fail(what string, err error) {
	b.t.Helper()
	where, _ := get(b, chromedp.Location())
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("not within %v", Timeout)
	}
	shot := ""
	if png, err := get(b, chromedp.FullScreenshot(100)); err == nil {
		if p := filepath.Join(b.artifacts, "failed.png"); os.WriteFile(p, png, 0o644) == nil {
			shot = ", screenshot " + p
		}
	}
	b.t.Fatalf("testbrowser: %s: %v (page %s%s)", what, err, where, shot)
}

// Navigate opens url and waits for its load event.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	if err := b.run(chromedp.Navigate(url)); err != nil {
		b.fail("navigate to "+url, err)
	}
}

// Location is the page's URL.
func (b *Browser) Location() string {
	b.t.Helper()
	u, err := get(b, chromedp.Location())
	if err != nil {
		b.fail("location", err)
	}
	return u
}

// SignIn signs login in to the WordPress at base through wp-login.php as a
// person would: the form filled in and submitted; it returns when
// wp-admin shows. shot, when not "", is the screenshot of the filled-in
// form.
func (b *Browser) SignIn(base, login, password, shot string) {
	b.t.Helper()
	b.Navigate(base + "/wp-login.php")
	b.WaitVisible("#user_login")
	// Set, not typed: wp-login.php focuses and selects the login field
	// 200 ms after it loads (wp_attempt_focus), and on a loaded machine
	// that lands in the middle of typing the password, whose last keys
	// then replace the login.
	b.SetValue("#user_login", login)
	b.SetValue("#user_pass", password)
	if shot != "" {
		b.Screenshot(shot)
	}
	b.Click("#wp-submit")
	b.WaitVisible("#wpadminbar")
	if loc := b.Location(); !strings.HasPrefix(loc, base+"/wp-admin/") {
		b.t.Fatalf("after signing in as %s the browser is at %s", login, loc)
	}
}

// WaitVisible waits until an element matching the CSS selector is shown.
func (b *Browser) WaitVisible(sel string) {
	b.t.Helper()
	if err := b.run(chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		b.fail("wait for "+sel+" to be visible", err)
	}
}

// WaitGone waits until no element matches the CSS selector, or the one
// that does is hidden.
func (b *Browser) WaitGone(sel string) {
	b.t.Helper()
	if err := b.wait(`(sel) => { const e = document.querySelector(sel); return !e || !e.checkVisibility(); }`, sel); err != nil {
		b.fail("wait for "+sel+" to go", err)
	}
}

// WaitAttr waits until the first element matching the CSS selector has
// the attribute name with value (e.g. data-state="ready").
func (b *Browser) WaitAttr(sel, name, value string) {
	b.t.Helper()
	err := b.wait(`(sel, name, value) => { const e = document.querySelector(sel); return !!e && e.getAttribute(name) === value; }`, sel, name, value)
	if err != nil {
		got, _ := b.attr(sel, name)
		b.fail(fmt.Sprintf("wait for %s[%s=%q] (it is %q)", sel, name, value, got), err)
	}
}

// WaitCount waits until exactly n elements match the CSS selector.
func (b *Browser) WaitCount(sel string, n int) {
	b.t.Helper()
	if err := b.wait(`(sel, n) => document.querySelectorAll(sel).length === n`, sel, n); err != nil {
		b.fail(fmt.Sprintf("wait for %d of %s (there are %d)", n, sel, b.Count(sel)), err)
	}
}

// WaitTrue waits until the JavaScript function fn, called with args
// (JSON-encoded), returns a truthy value; what names the condition in the
// failure.
func (b *Browser) WaitTrue(what, fn string, args ...any) {
	b.t.Helper()
	if err := b.wait(fn, args...); err != nil {
		b.fail("wait for "+what, err)
	}
}

// wait polls the page function fn with args until it returns a truthy
// value, on every change of the DOM. The arguments are written into the
// call as JSON (a literal, never code): chromedp's own arguments lose an
// empty string (cdproto's omitempty, under encoding/json/v2's rules).
func (b *Browser) wait(fn string, args ...any) error {
	call, err := jsCall(fn, args)
	if err != nil {
		return err
	}
	return b.read(func(ctx context.Context) error {
		_, err := chromedp.Run(ctx, chromedp.PollFunction[chromedp.Void]("() => "+call, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(0)))
		return err
	})
}

// jsCall is the JavaScript expression calling fn with args, JSON-encoded.
func jsCall(fn string, args []any) (string, error) {
	enc, err := json.Marshal(append([]any{}, args...)) // [], not null, for none
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("(%s)(...%s)", fn, enc), nil
}

// read runs f, which only reads the page, within Timeout; again when the
// page's JavaScript context it ran in went away (a navigation that had
// just ended, or began: the next document's is the one to ask).
func (b *Browser) read(f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	for {
		err := f(ctx)
		if err == nil || !contextGone(err) || ctx.Err() != nil {
			return err
		}
	}
}

// contextGone is the protocol's error for a JavaScript context that no
// longer exists.
func contextGone(err error) bool {
	for _, s := range []string{"Cannot find context with specified id", "Execution context was destroyed", "Inspected target navigated or closed"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// Click clicks the first element matching the CSS selector, once it is
// visible, with a real mouse event at its centre.
func (b *Browser) Click(sel string) {
	b.t.Helper()
	if err := b.run(chromedp.Click(chromedp.CSS(sel))); err != nil {
		b.fail("click "+sel, err)
	}
}

// Type focuses the first element matching the CSS selector and types text
// into it, key by key.
func (b *Browser) Type(sel, text string) {
	b.t.Helper()
	if err := b.run(chromedp.SendKeys(chromedp.CSS(sel), text)); err != nil {
		b.fail("type into "+sel, err)
	}
}

// SetValue sets the value of a form field (a select, a date input) and
// tells the page as a user's change would (input and change events).
func (b *Browser) SetValue(sel, value string) {
	b.t.Helper()
	err := b.wait(`(sel, value) => { const e = document.querySelector(sel); if (!e) return false;
		e.value = value; e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); return true; }`, sel, value)
	if err != nil {
		b.fail("set the value of "+sel, err)
	}
}

// Text is the visible text of the first element matching the CSS
// selector, once there is one.
func (b *Browser) Text(sel string) string {
	b.t.Helper()
	s, err := get(b, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.fail("text of "+sel, err)
	}
	return s
}

// Texts is the visible text of each element matching the CSS selector
// now (none: empty).
func (b *Browser) Texts(sel string) []string {
	b.t.Helper()
	var out []string
	b.Eval(`(sel) => Array.from(document.querySelectorAll(sel), (e) => e.innerText)`, &out, sel)
	return out
}

// Attr is the attribute name of the first element matching the CSS
// selector ("" when it has none), once there is such an element.
func (b *Browser) Attr(sel, name string) string {
	b.t.Helper()
	v, err := b.attr(sel, name)
	if err != nil {
		b.fail("attribute "+name+" of "+sel, err)
	}
	return v
}

func (b *Browser) attr(sel, name string) (string, error) {
	r, err := get(b, chromedp.AttributeValue(chromedp.CSS(sel), name))
	return r.Value, err
}

// Count is how many elements match the CSS selector now.
func (b *Browser) Count(sel string) int {
	b.t.Helper()
	var n int
	b.Eval(`(sel) => document.querySelectorAll(sel).length`, &n, sel)
	return n
}

// Eval calls the JavaScript function fn with args (JSON-encoded: values,
// never code) and decodes what it returns into out
// (nil: ignored).
func (b *Browser) Eval(fn string, out any, args ...any) {
	b.t.Helper()
	if err := b.eval(fn, out, args...); err != nil {
		b.fail("evaluate "+fn, err)
	}
}

func (b *Browser) eval(fn string, out any, args ...any) error {
	call, err := jsCall(fn, args)
	if err != nil {
		return err
	}
	var v []byte
	err = b.read(func(ctx context.Context) (err error) {
		v, err = chromedp.Run(ctx, chromedp.Evaluate[[]byte](call))
		return err
	})
	if err != nil || out == nil {
		return err
	}
	if v == nil {
		return errors.New("it returned undefined")
	}
	return json.Unmarshal(v, out)
}

// ActiveElement is a CSS-like description of the element that has the
// focus ("tag#id.class…"), to check where focus went.
func (b *Browser) ActiveElement() string {
	b.t.Helper()
	var s string
	b.Eval(`() => { const e = document.activeElement; if (!e) return "";
		return e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + Array.from(e.classList, (c) => "." + c).join(""); }`, &s)
	return s
}

// Screenshot writes the whole page as a PNG named name (e.g.
// "02-history.png") into the test's artifacts directory, logs its path
// and returns it.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	png, err := get(b, chromedp.FullScreenshot(100))
	if err != nil {
		b.fail("screenshot "+name, err)
	}
	p := filepath.Join(b.artifacts, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", p)
	return p
}

// ArtifactsDir is the directory a test's screenshots go to, made if need
// be: WPSIDECAR_ARTIFACTS, or the repository's .artifacts (ignored by
// git), then the test's name (a subtest's below its parent's). It
// outlives the test, for a look afterwards; the test's screenshots of an
// earlier run there are removed.
func ArtifactsDir(t testing.TB) string {
	t.Helper()
	base := os.Getenv("WPSIDECAR_ARTIFACTS")
	if base == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatal(err)
		}
		base = filepath.Join(root, ".artifacts")
	}
	dir := filepath.Join(base, filepath.FromSlash(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	for _, p := range old {
		os.Remove(p)
	}
	return dir
}

// repoRoot is the directory of go.mod above the working directory (a
// package's own, under go test).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testbrowser: no go.mod above the working directory")
		}
		dir = parent
	}
}

package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testlog"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

func TestThrottleBuckets(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	th := auth.NewThrottle(auth.Rate{Burst: 3, Per: 30 * time.Second}, auth.Rate{})
	for i := 0; i < 2; i++ {
		if out := th.Failed("a", "acct", false, t0); len(out) != 0 {
			t.Fatalf("failure %d: %v", i+1, out)
		}
	}
	if w := th.IPWait("a", t0); w != 0 {
		t.Errorf("one try left, yet wait %s", w)
	}
	if out := th.Failed("a", "acct", false, t0); len(out) != 1 || out[0] != (auth.Throttled{Scope: "ip", Key: "a"}) {
		t.Errorf("third failure: %v, want the client reported once", out)
	}
	if out := th.Failed("a", "acct", false, t0); len(out) != 0 {
		t.Errorf("reported again: %v", out)
	}
	if w := th.IPWait("a", t0); w != 10*time.Second {
		t.Errorf("wait %s, want 10s (one try per 10s)", w)
	}
	if w := th.IPWait("a", t0.Add(10*time.Second)); w != 0 {
		t.Errorf("after 10s: wait %s", w)
	}
	if w := th.IPWait("b", t0); w != 0 || th.AccountWait("acct", t0) != 0 {
		t.Error("another client, or an account with the limit off, waits")
	}
	var nilThrottle *auth.Throttle
	if nilThrottle.IPWait("a", t0) != 0 || nilThrottle.Failed("a", "b", false, t0) != nil {
		t.Error("a nil throttle limits")
	}

	for in, want := range map[string]string{
		"192.0.2.7":                 "192.0.2.7",
		"::ffff:192.0.2.7":          "192.0.2.7",
		"2001:db8:1:2:3:4:5:6":      "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1":      "2001:db8:1:2::/64",
		"not an address":            "not an address",
		"2001:db8:1:3:3:4:5:6%eth0": "2001:db8:1:3::/64",
	} {
		if got := auth.ClientKey(in); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestThrottle_FailedBasicAuthentication: a client that keeps failing is
// answered 429 before any check, right password or not, while other
// clients are not; an account that many clients fail for accepts only
// credentials verified before; every failure and refusal is observed, and
// one log line names each throttled client.
func TestThrottle_FailedBasicAuthentication(t *testing.T) {
	tdb := testdb.New(t)
	const password = "abcdEFGHijklMNOPqrstUVWX"
	site := testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: password})
	now := time.Unix(1_800_000_000, 0)
	// Written by the background recording of application password uses
	// too, which the test waits for before the database closes.
	var logs testlog.Buffer
	events := map[string]int{}
	o := auth.Options{Store: site.DB, Settings: site.Settings, Keys: map[string]string{"AUTH_KEY": "k"}, EnvironmentType: "local",
		Throttle: auth.NewThrottle(auth.Rate{Burst: 3, Per: time.Minute}, auth.Rate{Burst: 5, Per: time.Hour}),
		Observe:  func(event, scope string) { events[event+":"+scope]++ },
		Log:      zerolog.New(&logs), Now: func() time.Time { return now }}
	a := auth.New(o)
	defer a.Wait()
	// restarted is a process that never verified the password, sharing
	// the throttle's state.
	restarted := auth.New(o)
	defer restarted.Wait()
	try := func(ip, login, pw string) (*auth.User, error) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
		req.RemoteAddr = ip + ":40000"
		req.SetBasicAuth(login, pw)
		if login == "ADMIN" {
			return restarted.Authenticate(req)
		}
		return a.Authenticate(req)
	}
	code := func(err error) string {
		if f, ok := err.(*wpjson.Error); ok {
			return f.Code
		}
		return "no failure"
	}

	// The right password, verified once (remembered from now on).
	if u, err := try("198.51.100.1", "admin", password); err != nil || u == nil {
		t.Fatalf("right password: %+v %v", u, err)
	}
	// Client A: three wrong tries are WordPress's answers, the fourth
	// attempt is refused unchecked, with the right password too.
	for _, login := range []string{"admin", "nobody", "admin"} {
		if _, err := try("192.0.2.1", login, "wrong-password"); code(err) == "wpsidecar_too_many_attempts" {
			t.Fatalf("throttled before the limit: %v", err)
		}
	}
	_, err := try("192.0.2.1", "admin", password)
	f, ok := err.(*wpjson.Error)
	if !ok || f.Code != "wpsidecar_too_many_attempts" || f.Status != http.StatusTooManyRequests || f.Header.Get("Retry-After") != "20" ||
		f.Message != "Too many failed authentication attempts. Please try again in 20 seconds." {
		t.Fatalf("client out of tries: %#v", err)
	}
	if u, err := try("192.0.2.2", "admin", password); err != nil || u == nil {
		t.Errorf("another client is not throttled: %+v %v", u, err)
	}
	if n := strings.Count(logs.String(), `"message":"authentication throttled: too many failed attempts"`); n != 1 ||
		!strings.Contains(logs.String(), `"scope":"ip","remote_ip":"192.0.2.1"`) {
		t.Errorf("%d throttle lines:\n%s", n, logs.String())
	}
	// Twenty seconds later one try is back.
	now = now.Add(20 * time.Second)
	if u, err := try("192.0.2.1", "admin", password); err != nil || u == nil {
		t.Errorf("after Retry-After: %+v %v", u, err)
	}

	// The account: five failures from five clients empty it. A credential
	// verified before still works; one never verified is refused, and a
	// wrong one gets 429 as well.
	for i := 0; i < 3; i++ {
		try("203.0.113."+string(rune('1'+i)), "admin", "wrong-password")
	}
	if u, err := try("203.0.113.9", "admin", password); err != nil || u == nil {
		t.Errorf("a credential verified before, account out of tries: %+v %v", u, err)
	}
	if _, err := try("203.0.113.9", "ADMIN", password); code(err) != "wpsidecar_too_many_attempts" {
		t.Errorf("a credential this process never verified, account out of tries: %v", err)
	}
	if _, err := try("203.0.113.10", "admin", "wrong-password"); code(err) != "wpsidecar_too_many_attempts" {
		t.Errorf("a wrong password, account out of tries: %v", err)
	}
	// The account is the user found, whatever the spelling (security
	// round 2, item 2): each gets 429 unchecked, from fresh clients.
	for i, login := range []string{"ad%41min", "ADMIN", "ａｄｍｉｎ", "admin@example.test", "ADMIN@EXAMPLE.TEST", "admin%00", "<b>admin</b>", "ädmin", " admin "} {
		if _, err := try("198.18.0."+strconv.Itoa(i+1), login, "wrong-password"); code(err) != "wpsidecar_too_many_attempts" {
			t.Errorf("%q, account out of tries: %v", login, err)
		}
	}
	if !strings.Contains(logs.String(), `"scope":"account","remote_ip":"203.0.113.3","login":"admin","account":"user:1"`) {
		t.Errorf("no line for the account:\n%s", logs.String())
	}
	if events["failure:"] != 17 || events["throttled:ip"] != 1 || events["throttled:account"] != 11 {
		t.Errorf("observed %v", events)
	}

	// Rendered as WordPress renders errors, with Retry-After.
	rec := httptest.NewRecorder()
	wpjson.Render(rec, httptest.NewRequest(http.MethodGet, "/", nil), f)
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "20" ||
		rec.Body.String() != `{"code":"wpsidecar_too_many_attempts","message":"Too many failed authentication attempts. Please try again in 20 seconds.","data":{"status":429}}` {
		t.Errorf("rendered: %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
}

// TestThrottle_ChecksInFlight: a client's slow checks in flight count
// against its attempts, so 32 concurrent wrong passwords against an
// argon2 hash run 30 checks (the budget) and the other two are refused
// at once (security round 4, item 3: all 32 used to run). A client that
// goes before its check runs is charged the attempt, and told nothing.
func TestThrottle_ChecksInFlight(t *testing.T) {
	tdb := testdb.New(t)
	site := testsite.New(t, tdb)
	// "admin-pass-123" as argon2id, m=1024 KiB.
	tdb.AddUser(t, "argon", "argon@example.test", "$argon2id$v=19$m=1024,t=2,p=2$ckJVYUVWaklQODlNY3VTTw$nfGyJkzSI1WseuYv+ZkIP5y4WCTSRlgkEkIJGR5w6PE")
	var mu sync.Mutex
	events := map[string]int{}
	budget := auth.NewMemoryBudget(1024 << 10)
	th := auth.NewThrottle(auth.Rate{Burst: 30, Per: time.Hour}, auth.Rate{})
	a := auth.New(auth.Options{Store: site.DB, Settings: site.Settings, Keys: map[string]string{"AUTH_KEY": "k"}, BasicAuthPasswords: true,
		Throttle:     th,
		Argon2Memory: budget,
		Observe:      func(event, scope string) { mu.Lock(); events[event+":"+scope]++; mu.Unlock() }})
	defer a.Wait()
	try := func(ctx context.Context, ip, pw string) error {
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
		req.RemoteAddr = ip + ":40000"
		req.SetBasicAuth("argon", pw)
		_, err := a.Authenticate(req)
		return err
	}

	// Every check waits for memory until the budget is released, so all
	// 32 are in flight together.
	release := budget.Fill()
	results := make(chan error, 32)
	for range 32 {
		go func() { results <- try(context.Background(), "192.0.2.1", "wrong-password") }()
	}
	codes := map[string]int{}
	read := func() {
		select {
		case err := <-results:
			if f, ok := err.(*wpjson.Error); ok {
				codes[f.Code]++
			} else {
				codes[fmt.Sprint(err)]++
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no answer while the checks wait (answers so far: %v)", codes)
		}
	}
	read() // the ones over the budget answer while the others wait
	read()
	if codes["wpsidecar_too_many_attempts"] != 2 {
		t.Fatalf("answered while the checks wait: %v", codes)
	}
	release()
	for range 30 {
		read()
	}
	if codes["incorrect_password"] != 30 || codes["wpsidecar_too_many_attempts"] != 2 || len(codes) != 2 {
		t.Errorf("32 concurrent wrong passwords: %v", codes)
	}
	if events["failure:"] != 30 || events["throttled:ip"] != 2 {
		t.Errorf("observed %v", events)
	}

	// Clients that go while their checks wait for memory: they stop
	// waiting, are told nothing, and keep their attempts charged.
	release = budget.Fill()
	ctx, cancel := context.WithCancel(context.Background())
	for range 30 {
		go func() { results <- try(ctx, "192.0.2.2", "admin-pass-123") }()
	}
	for th.IPWait("192.0.2.2", time.Now()) == 0 { // all 30 hold an attempt
		runtime.Gosched()
	}
	cancel()
	clear(codes)
	for range 30 {
		read()
	}
	release()
	if codes["context canceled"] != 30 {
		t.Errorf("30 clients gone while their checks waited: %v", codes)
	}
	if err := try(context.Background(), "192.0.2.2", "admin-pass-123"); err == nil || err.(*wpjson.Error).Code != "wpsidecar_too_many_attempts" {
		t.Errorf("after 30 attempts abandoned: %v", err)
	}
	if err := try(context.Background(), "192.0.2.3", "admin-pass-123"); err != nil {
		t.Errorf("the right password from another client: %v", err)
	}
}

// TestThrottle_FastChecksInFlight: checks of fast hashes (md5, as an
// imported account keeps) hold an attempt too, so 50 concurrent guesses
// from one address get exactly its 3 checks (security round 4, review:
// they all passed the address's budget before any failure was charged,
// 399 of 400 checked), and a guess at an unknown login counts the same.
func TestThrottle_FastChecksInFlight(t *testing.T) {
	tdb := testdb.New(t)
	site := testsite.New(t, tdb)
	tdb.AddUser(t, "legacy", "legacy@example.test", "4a4fd39406de7daa0638e36f0abf2b1b") // md5, not this password
	a := auth.New(auth.Options{Store: site.DB, Settings: site.Settings, Keys: map[string]string{"AUTH_KEY": "k"}, BasicAuthPasswords: true,
		Throttle: auth.NewThrottle(auth.Rate{Burst: 3, Per: time.Hour}, auth.Rate{})})
	defer a.Wait()
	for n, login := range []string{"legacy", "nobody"} {
		results := make(chan string, 50)
		for i := range 50 {
			go func() {
				req := httptest.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
				req.RemoteAddr = "192.0.2." + strconv.Itoa(n+1) + ":40000"
				req.SetBasicAuth(login, "guess-"+strconv.Itoa(i))
				_, err := a.Authenticate(req)
				f, _ := err.(*wpjson.Error)
				results <- f.Code
			}()
		}
		codes := map[string]int{}
		for range 50 {
			codes[<-results]++
		}
		if len(codes) != 2 || codes[map[string]string{"legacy": "incorrect_password", "nobody": "invalid_username"}[login]] != 3 {
			t.Errorf("%s: 50 concurrent guesses from one address: %v", login, codes)
		}
	}
}

// TestThrottle_AccountChecksInFlight: an account's slow checks in flight
// count against its budget, from every address together, and a check
// that waits for memory past its bound is answered busy, charged to the
// address alone (review: 200 addresses each queued a check against an
// account allowed 5).
func TestThrottle_AccountChecksInFlight(t *testing.T) {
	tdb := testdb.New(t)
	site := testsite.New(t, tdb)
	tdb.AddUser(t, "argon", "argon@example.test", "$argon2id$v=19$m=1024,t=2,p=2$ckJVYUVWaklQODlNY3VTTw$nfGyJkzSI1WseuYv+ZkIP5y4WCTSRlgkEkIJGR5w6PE")
	budget := auth.NewMemoryBudget(1024 << 10)
	th := auth.NewThrottle(auth.Rate{Burst: 30, Per: time.Hour}, auth.Rate{Burst: 5, Per: time.Hour})
	a := auth.New(auth.Options{Store: site.DB, Settings: site.Settings, Keys: map[string]string{"AUTH_KEY": "k"}, BasicAuthPasswords: true,
		Throttle: th, Argon2Memory: budget})
	defer a.Wait()
	try := func(ip, pw string) error {
		req := httptest.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
		req.RemoteAddr = ip + ":40000"
		req.SetBasicAuth("argon", pw)
		_, err := a.Authenticate(req)
		return err
	}
	code := func(err error) string {
		if f, ok := err.(*wpjson.Error); ok {
			return f.Code
		}
		return fmt.Sprint(err)
	}
	release := budget.Fill()
	results := make(chan string, 20)
	for i := range 20 {
		go func() { results <- code(try("198.51.100."+strconv.Itoa(i+1), "wrong-password")) }()
	}
	codes := map[string]int{}
	for range 15 { // the five in flight wait for memory
		select {
		case c := <-results:
			codes[c]++
		case <-time.After(30 * time.Second):
			t.Fatalf("no answer while the checks wait (answers so far: %v)", codes)
		}
	}
	if codes["wpsidecar_too_many_attempts"] != 15 {
		t.Fatalf("answered while 5 checks wait: %v", codes)
	}
	release()
	for range 5 {
		codes[<-results]++
	}
	if codes["incorrect_password"] != 5 {
		t.Errorf("20 addresses against an account allowed 5: %v", codes)
	}

	// Past its wait for memory, a check is answered busy; the address is
	// charged, the account is not.
	quiet := auth.NewMemoryBudget(1024 << 10)
	quiet.SetWait(50 * time.Millisecond)
	b := auth.New(auth.Options{Store: site.DB, Settings: site.Settings, Keys: map[string]string{"AUTH_KEY": "k"}, BasicAuthPasswords: true,
		Throttle: auth.NewThrottle(auth.Rate{Burst: 1, Per: time.Hour}, auth.Rate{Burst: 1, Per: time.Hour}), Argon2Memory: quiet})
	defer b.Wait()
	release = quiet.Fill()
	req := httptest.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
	req.RemoteAddr = "203.0.113.1:40000"
	req.SetBasicAuth("argon", "admin-pass-123")
	if _, err := b.Authenticate(req); err != wpjson.ErrBusy {
		t.Errorf("a check out of memory past its wait: %v", err)
	}
	release()
	req.RemoteAddr = "203.0.113.2:40000" // the account still has its attempt
	if u, err := b.Authenticate(req); err != nil || u == nil {
		t.Errorf("the right password from another address after a busy answer: %+v %v", u, err)
	}
	req.RemoteAddr = "203.0.113.1:40000" // the first address spent its
	if _, err := b.Authenticate(req); code(err) != "wpsidecar_too_many_attempts" {
		t.Errorf("the busy address again: %v", err)
	}
}

package delivery_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes/delivery"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/harness/testlog"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
)

// TestNotifier: signed deliveries, retried while the receiver fails,
// not retried when it refuses, and a dead or hanging receiver neither
// blocks Commit nor delays the other receivers.
func TestNotifier(t *testing.T) {
	const secret = "s3cret"
	flaky := &receiver{failFor: 2, secret: secret, t: t}
	refusing := &receiver{status: http.StatusBadRequest, secret: secret, t: t}
	hang := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer hanging.Close()
	defer close(hang)
	fs, rs := httptest.NewServer(flaky), httptest.NewServer(refusing)
	defer fs.Close()
	defer rs.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // nothing listens there any more

	n := delivery.NewNotifier(delivery.NotifierOptions{
		URLs:   []*url.URL{urlOf(t, hanging.URL), urlOf(t, dead.URL), urlOf(t, fs.URL), urlOf(t, rs.URL)},
		Secret: secret, QueueSize: 4, Attempts: 5, Backoff: 10 * time.Millisecond, Timeout: time.Minute, Log: zerolog.Nop(),
		Units: wpsidecar.Units{fieldgroup.Unit{}, themeoption.Unit{}},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go n.Run(ctx)

	n.Commit(commit(wpsidecar.ThemeOptions, 0, "accent_color"))
	testwait.For(t, "the flaky receiver's delivery", func() bool { return len(flaky.got()) == 1 })
	if got := flaky.got()[0]; got != `{"namespace":"themeopts","ids":["accent_color"]}` || flaky.calls.Load() != 3 {
		t.Errorf("flaky receiver: %q after %d calls", got, flaky.calls.Load())
	}
	testwait.For(t, "the refusing receiver's call", func() bool { return refusing.calls.Load() == 1 })
	// A receiver's deliveries go one after the other, retries included: a
	// retry of the refused one would reach it before the next change.
	n.Commit(commit(wpsidecar.ThemeOptions, 0, "after_refusal"))
	testwait.For(t, "the refusing receiver's second call", func() bool { return refusing.calls.Load() >= 2 })
	refusing.mu.Lock()
	second := refusing.seen[1]
	refusing.mu.Unlock()
	if !strings.Contains(second, "after_refusal") {
		t.Errorf("refusing receiver's second call was %s: a 400 is not retried", second)
	}

	// The hanging receiver's queue fills up; Commit still returns at once
	// (this would deadlock otherwise), and the others keep getting theirs.
	for i := 0; i < 100; i++ {
		n.Commit(commit(wpsidecar.FieldGroups, 0, "k"))
	}
	testwait.For(t, "the flaky receiver's later deliveries", func() bool { return len(flaky.got()) >= 5 })
}

func TestVerify(t *testing.T) {
	body := []byte(`{"namespace":"fieldmgr","keys":["a"]}`)
	now := time.Unix(1_800_000_000, 0)
	sig := delivery.Sign("k", now.Unix(), body)
	ts := "1800000000"
	for _, c := range []struct {
		name, secret, ts, sig string
		body                  []byte
		ok                    bool
	}{
		{"good", "k", ts, sig, body, true},
		{"other secret", "x", ts, sig, body, false},
		{"other body", "k", ts, sig, []byte(`{}`), false},
		{"other timestamp", "k", "1800000001", sig, body, false},
		{"bad timestamp", "k", "soon", sig, body, false},
	} {
		if err := delivery.Verify(c.secret, c.ts, c.sig, c.body, now, time.Minute); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if err := delivery.Verify("k", ts, sig, body, now.Add(10*time.Minute), 5*time.Minute); err == nil {
		t.Error("an old delivery was accepted")
	}
}

// TestNotifier_DrainAtShutdown: what is queued, or being retried, when Run
// stops is delivered by Drain; what the drain's deadline leaves is logged
// as dropped, never lost silently.
func TestNotifier_DrainAtShutdown(t *testing.T) {
	const secret = "s3cret"
	flaky := &receiver{failFor: 1, secret: secret, t: t}
	fs := httptest.NewServer(flaky)
	defer fs.Close()
	var logs testlog.Buffer
	n := delivery.NewNotifier(delivery.NotifierOptions{URLs: []*url.URL{urlOf(t, fs.URL)}, Secret: secret, QueueSize: 8,
		Attempts: 5, Backoff: time.Hour, Timeout: time.Minute, Log: zerolog.New(&logs)})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { n.Run(ctx); close(ran) }()
	for _, k := range []string{"a", "b", "c"} {
		n.Commit(commit(wpsidecar.FieldGroups, 0, k))
	}
	testwait.For(t, "the first, failed attempt", func() bool { return flaky.calls.Load() == 1 })
	cancel() // Run is waiting an hour to retry "a"
	<-ran
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	n.Drain(dctx)
	if got := flaky.got(); len(got) != 3 || got[0] != `{"namespace":"fieldmgr","keys":["a"]}` || got[2] != `{"namespace":"fieldmgr","keys":["c"]}` {
		t.Errorf("drained: %q", got)
	}

	// A drain out of time drops and says so.
	n.Commit(commit(wpsidecar.FieldGroups, 0, "late"))
	expired, ecancel := context.WithCancel(context.Background())
	ecancel()
	n.Drain(expired)
	if !strings.Contains(logs.String(), `"message":"shutting down: queued delivery dropped"`) || !strings.Contains(logs.String(), `"late"`) {
		t.Errorf("log:\n%s", logs.String())
	}
}

// TestNotifier_LogsNoSecrets: a receiver that takes its token in the query
// (or the fragment) is logged with it masked, in every line of a failing
// delivery (security round 2, item 9).
func TestNotifier_LogsNoSecrets(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	var logs testlog.Buffer
	n := delivery.NewNotifier(delivery.NotifierOptions{URLs: []*url.URL{urlOf(t, dead.URL+"/hook?token=s3cr3t#s3cr3t")}, Secret: "k",
		Attempts: 2, Backoff: time.Millisecond, Log: zerolog.New(&logs)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	n.Commit(commit(wpsidecar.ThemeOptions, 0, "a"))
	testwait.For(t, "the delivery given up", func() bool { return strings.Contains(logs.String(), "webhook not delivered; given up") })
	cancel()
	<-done
	if strings.Contains(logs.String(), "s3cr3t") || !strings.Contains(logs.String(), "token=xxxxx") {
		t.Errorf("logs:\n%s", logs.String())
	}
}

// commit is a commit of keys, for the tests that look at keys only.
func commit(ns wpsidecar.Namespace, site int64, keys ...string) wpsidecar.Commit {
	c := wpsidecar.Commit{Namespace: ns, BlogID: site}
	for _, k := range keys {
		c.Items = append(c.Items, wpsidecar.Item{Key: k})
	}
	return c
}

// TestWebhookJSON: a commit's body names its keys each once, in order,
// whatever order its items came in; on a network, its site.
func TestWebhookJSON(t *testing.T) {
	for _, c := range []struct {
		in    wpsidecar.Commit
		field string
		want  string
	}{
		{commit(wpsidecar.FieldGroups, 0, "b", "a", "b"), "keys", `{"namespace":"fieldmgr","keys":["a","b"]}`},
		{commit(wpsidecar.ThemeOptions, 0, "é \"x\"", "10"), "ids", `{"namespace":"themeopts","ids":["10","é \"x\""]}`},
		{commit(wpsidecar.ThemeOptions, 3, "columns"), "ids", `{"namespace":"themeopts","ids":["columns"],"site":3}`},
	} {
		if got := string(delivery.WebhookJSON(c.in, c.field)); got != c.want {
			t.Errorf("%v: %s, want %s", c.in, got, c.want)
		}
	}
}

type receiver struct {
	mu      sync.Mutex
	bodies  []string // the deliveries it accepted
	seen    []string // every call's body, in order
	calls   atomic.Int32
	failFor int32 // the first failFor calls answer 500
	status  int   // then this (200 when 0)
	secret  string
	t       *testing.T
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	n := r.calls.Add(1)
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.seen = append(r.seen, string(body))
	r.mu.Unlock()
	if err := delivery.Verify(r.secret, req.Header.Get(delivery.HeaderTimestamp), req.Header.Get(delivery.HeaderSignature), body, time.Now(), 5*time.Minute); err != nil {
		r.t.Errorf("receiver: %v", err)
	}
	if req.Header.Get("Content-Type") != "application/json" || len(req.Header.Get(delivery.HeaderDelivery)) != 24 {
		r.t.Errorf("receiver: headers %v", req.Header)
	}
	if n <= r.failFor {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if r.status != 0 {
		w.WriteHeader(r.status)
		return
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, string(body))
	r.mu.Unlock()
}

func (r *receiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

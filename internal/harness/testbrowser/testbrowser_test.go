package testbrowser

import (
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that keeps what Errorf says, so a test can
// check that the harness fails a test.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.Join(r.errs, "\n")
	r.errs = nil
	return s
}

// page serves a small page whose script does what script says once
// "#go" is clicked, then marks the body data-state="done".
func page(script string) string {
	return `<!doctype html><html><head><title>t</title></head><body data-state="loading">
<label for="name">Name</label> <input id="name"> <button id="go" type="button">Go</button> <p id="out"></p>
<dialog id="dialog" aria-label="Done"><button type="button">OK</button></dialog>
<script>
document.body.dataset.state = "ready";
console.log("a log line is no problem"); console.warn("nor a warning");
document.getElementById("go").addEventListener("click", async () => {
	document.getElementById("out").textContent = "typed " + document.getElementById("name").value;
	document.getElementById("dialog").showModal();
	` + script + `
	document.body.dataset.state = "done";
});
</script></body></html>`
}

// TestBrowser: the harness's own promises, against pages of its own:
// typing, clicking, waiting for an attribute (also an empty one), where
// the focus is, a screenshot, and which of
// what a page reports fails the test (console.error, an uncaught
// exception or rejection, a failed request unless allowed) and which does
// not (logs, warnings).
func TestBrowser(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/favicon.ico":
			w.WriteHeader(http.StatusNoContent)
		case "/412":
			w.WriteHeader(http.StatusPreconditionFailed)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, page(r.URL.Query().Get("script")))
		}
	}))
	defer srv.Close()
	rec := &recorder{TB: t}
	b := Start(rec, Options{Artifacts: t.TempDir()})

	tests := []struct {
		name, script string
		allow        string // AllowNetworkError's pattern
		want         string // in the failure; "" for none
	}{
		{"quiet", ``, "", ""},
		{"console.error", `console.error("broken: %s", "yes");`, "", "error: broken: yes"},
		{"uncaught exception", `setTimeout(() => { throw new TypeError("no such thing"); });`, "", "TypeError: no such thing"},
		{"unhandled rejection", `Promise.reject(new Error("rejected"));`, "", "Error: rejected"},
		{"failed request", `await fetch("/412");`, "", "status of 412"},
		{"failed request, allowed", `await fetch("/412");`, `status of 412 \(Precondition Failed\)`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.allow != "" {
				b.AllowNetworkError(tt.allow)
			}
			b.Navigate(srv.URL + "/?script=" + url.QueryEscape(tt.script))
			b.WaitAttr("body", "data-state", "ready")
			b.Type("#name", "Ada")
			b.Click("#go")
			b.WaitAttr("body", "data-state", "done")
			b.WaitAttr("#dialog", "open", "") // an empty value: the attribute there
			if got := b.ActiveElement(); got != "button" {
				t.Errorf("the focus is on %q, not the dialog's button", got)
			}
			if got := b.Text("#out"); got != "typed Ada" {
				t.Errorf("the page says %q", got)
			}
			b.CheckConsole()
			got := rec.take()
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("the harness says %q, want %q", got, tt.want)
			}
		})
	}

	shot := b.Screenshot("01-page.png")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot: %v", err)
	}
	if w := img.Bounds().Dx(); w != 1280 {
		t.Errorf("the screenshot is %d pixels wide, not the window's 1280", w)
	}
}

package themeopts_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
)

// sharedCache is a CDN set to "cache everything": it keeps every GET
// answer, authenticated or not, unless Cache-Control says private or
// no-store, keyed by URL and the request headers the answer's Vary names;
// a no-cache answer is revalidated with its ETag and served from the cache
// on 304. What it may not do is what the sidecar's headers forbid.
type sharedCache struct {
	origin *url.URL
	mu     sync.Mutex
	store  map[string]cached
}

type cached struct {
	status int
	header http.Header
	body   []byte
}

func (c *sharedCache) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	var entry *cached
	for k, e := range c.store {
		if k == c.key(r, e.header.Get("Vary")) {
			e := e
			entry = &e
		}
	}
	c.mu.Unlock()
	req, _ := http.NewRequest(r.Method, c.origin.String()+r.URL.RequestURI(), r.Body)
	req.Header = r.Header.Clone()
	if entry != nil {
		if !strings.Contains(entry.header.Get("Cache-Control"), "no-cache") {
			writeCached(w, *entry)
			return
		}
		req.Header.Set("If-None-Match", entry.header.Get("ETag"))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && entry != nil {
		writeCached(w, *entry)
		return
	}
	e := cached{resp.StatusCode, resp.Header, body}
	cc := resp.Header.Get("Cache-Control")
	if r.Method == http.MethodGet && !strings.Contains(cc, "private") && !strings.Contains(cc, "no-store") && resp.Header.Get("Vary") != "*" {
		c.mu.Lock()
		c.store[c.key(r, resp.Header.Get("Vary"))] = e
		c.mu.Unlock()
	}
	writeCached(w, e)
}

func (c *sharedCache) key(r *http.Request, vary string) string {
	k := r.Method + " " + r.URL.RequestURI()
	for _, h := range strings.Split(vary, ",") {
		if h = strings.TrimSpace(h); h != "" {
			k += "\n" + h + ": " + strings.Join(r.Header.Values(h), ",")
		}
	}
	return k
}

func writeCached(w http.ResponseWriter, e cached) {
	for k, v := range e.header {
		w.Header()[k] = v
	}
	w.WriteHeader(e.status)
	io.Copy(w, bytes.NewReader(e.body))
}

// TestSharedCache_NeverServesOneUsersAnswerToAnother: through a shared
// cache, every user gets what the sidecar gives that user directly — the
// administrator's options never reach the anonymous visitor, the
// subscriber or another administrator's cookie-less request with a wrong
// password — whatever the order of requests.
func TestSharedCache_NeverServesOneUsersAnswerToAnother(t *testing.T) {
	f := newFixture(t)
	if _, err := f.tdb.SQL.Exec("INSERT INTO "+testdb.Prefix+"options (option_name, option_value, autoload) VALUES (?, ?, 'yes')", optName, `a:1:{s:7:"tagline";s:6:"secret";}`); err != nil {
		t.Fatal(err)
	}
	origin, _ := url.Parse(f.url)
	cdn := httptest.NewServer(&sharedCache{origin: origin, store: map[string]cached{}})
	defer cdn.Close()

	users := []struct{ name, login, pw string }{
		{"admin", "admin", adminPW}, {"anonymous", "", ""}, {"subscriber", "sub", subPW},
		{"wrong password", "admin", "wrongwrongwrongwrongwron"}, {"editor", "editor", editorPW}, {"admin again", "admin", adminPW},
	}
	get := func(base, login, pw string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, base+"/wp-json/themeopts/v1/options", nil)
		if login != "" {
			req.SetBasicAuth(login, pw)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for round := 0; round < 2; round++ {
		for _, u := range users {
			wantCode, wantBody := get(f.url, u.login, u.pw)
			code, body := get(cdn.URL, u.login, u.pw)
			if code != wantCode || body != wantBody {
				t.Errorf("round %d, %s through the cache: %d %s; directly: %d %s", round, u.name, code, body, wantCode, wantBody)
			}
			if u.login != "admin" || u.pw != adminPW {
				if strings.Contains(body, "secret") {
					t.Errorf("%s was served the administrator's options", u.name)
				}
			}
		}
	}
}

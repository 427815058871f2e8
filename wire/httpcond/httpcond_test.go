package httpcond

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

func TestETag(t *testing.T) {
	a := ETag("group", "ab", "c")
	if a != ETag("group", "ab", "c") || len(a) != 34 || a[0] != '"' || a[33] != '"' {
		t.Errorf("ETag = %s", a)
	}
	for _, other := range []string{ETag("group", "a", "bc"), ETag("list", "ab", "c"), ETag("group", "ab", "c", "")} {
		if other == a {
			t.Errorf("%s collides", other)
		}
	}
}

func TestNotModified(t *testing.T) {
	tag := ETag("x", "1")
	for _, c := range []struct {
		method, inm string
		want        bool
	}{
		{http.MethodGet, "", false},
		{http.MethodGet, tag, true},
		{http.MethodHead, tag, true},
		{http.MethodGet, `"other", ` + tag, true},
		{http.MethodGet, "W/" + tag, true}, // weak comparison for If-None-Match
		{http.MethodGet, "*", true},
		{http.MethodGet, `"other"`, false},
		{http.MethodPost, tag, false},
	} {
		r := httptest.NewRequest(c.method, "/", nil)
		if c.inm != "" {
			r.Header.Set("If-None-Match", c.inm)
		}
		w := httptest.NewRecorder()
		got := NotModified(w, r, tag)
		if got != c.want || w.Header().Get("ETag") != tag || (got && w.Code != http.StatusNotModified) {
			t.Errorf("%s If-None-Match %q: %v, status %d", c.method, c.inm, got, w.Code)
		}
	}
}

func TestIfMatch(t *testing.T) {
	tag := ETag("x", "1")
	r := httptest.NewRequest(http.MethodPut, "/", nil)
	if p := IfMatch(r); p != nil || p.Check(tag) != nil {
		t.Errorf("no If-Match: %v", p)
	}
	for _, c := range []struct {
		im   []string
		want error
	}{
		{[]string{tag}, nil},
		{[]string{`"old"`, tag}, nil},
		{[]string{`"old"`}, wpjson.ErrPreconditionFailed},
		{[]string{`"old"`, tag[:10]}, wpjson.ErrPreconditionFailed},
		{[]string{"W/" + tag}, wpjson.ErrPreconditionFailed}, // strong comparison for If-Match
		{[]string{"*"}, nil},
		{[]string{`"a"`, tag}, nil}, // two header lines
	} {
		r := httptest.NewRequest(http.MethodPut, "/", nil)
		for _, v := range c.im {
			r.Header.Add("If-Match", v)
		}
		if got := IfMatch(r).Check(tag); got != c.want {
			t.Errorf("If-Match %q: %v, want %v", c.im, got, c.want)
		}
	}
}

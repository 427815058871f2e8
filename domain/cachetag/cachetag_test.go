package cachetag

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The tests' namespaces, as their handlers name their tags.
const (
	fieldGroups  = "fieldmgr"
	themeOptions = "themeopts"
)

func TestSet(t *testing.T) {
	h := http.Header{}
	Set(h, themeOptions, Key(themeOptions, "a b,c"), Key(themeOptions, "é"))
	if h.Get("Cache-Tag") != "themeopts,themeopts:a%20b%2Cc,themeopts:%C3%A9" || h.Get("Surrogate-Key") != "themeopts themeopts:a%20b%2Cc themeopts:%C3%A9" {
		t.Errorf("tags: %v", h)
	}
	many := []string{fieldGroups}
	for i := 0; i < 1000; i++ {
		many = append(many, Key(fieldGroups, "group_with_a_long_key_"+strings.Repeat("x", i%26)))
	}
	Set(h, many...)
	if h.Get("Cache-Tag") != "fieldmgr" || h.Get("Surrogate-Key") != "fieldmgr" {
		t.Errorf("long tag list not cut back: %d bytes", len(h.Get("Cache-Tag")))
	}
}

// TestStale: what a change makes stale is spelled as the answers spell it.
func TestStale(t *testing.T) {
	tests := []struct {
		site      int64
		namespace string
		listed    bool
		keys      []string
		want      []string
	}{
		{0, themeOptions, false, []string{"a b"}, []string{"themeopts", "themeopts:a%20b"}},
		{2, themeOptions, false, []string{"logo"}, []string{"site2:themeopts", "site2:themeopts:logo"}},
		{3, fieldGroups, true, []string{"g"}, []string{"site3:fieldmgr", "site3:fieldmgr:list", "site3:fieldmgr:g"}},
		{0, fieldGroups, true, nil, []string{"fieldmgr", "fieldmgr:list"}},
	}
	for _, tt := range tests {
		if got := Stale(tt.site, tt.namespace, tt.listed, tt.keys); !slices.Equal(got, tt.want) {
			t.Errorf("Stale(%d, %s, %v, %q) = %q, want %q", tt.site, tt.namespace, tt.listed, tt.keys, got, tt.want)
		}
		// Each stale tag is one an answer of the site carries.
		h := http.Header{}
		Set(h, append([]string{tt.namespace}, keysOf(tt.namespace, tt.keys)...)...)
		Prefix(h, SitePrefix(tt.site))
		for _, tag := range tt.want {
			if tag != SitePrefix(tt.site)+List(tt.namespace) && !slices.Contains(strings.Split(h.Get("Cache-Tag"), ","), tag) {
				t.Errorf("site %d: stale tag %s is on no answer (%s)", tt.site, tag, h.Get("Cache-Tag"))
			}
		}
	}
}

func keysOf(ns string, keys []string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, Key(ns, k))
	}
	return out
}

// TestPrefix: shared header values are replaced, never written into.
func TestPrefix(t *testing.T) {
	shared := New("ns", "ns:a b")
	h := http.Header{}
	shared.Set(h)
	Prefix(h, "site2:")
	if h.Get("Cache-Tag") != "site2:ns,site2:ns:a%20b" || h.Get("Surrogate-Key") != "site2:ns site2:ns:a%20b" {
		t.Errorf("prefixed: %v", h)
	}
	again := http.Header{}
	shared.Set(again)
	if again.Get("Cache-Tag") != "ns,ns:a%20b" {
		t.Errorf("the shared value changed: %v", again)
	}
	empty := http.Header{}
	Prefix(empty, "site2:")
	if len(empty) != 0 {
		t.Errorf("no tags, yet %v", empty)
	}
}

func TestBroad(t *testing.T) {
	for tag, want := range map[string]string{
		"site2:rest:post:14": "site2:rest", "rest:lists": "rest", "rest": "rest", "fieldmgr:g1": "fieldmgr",
		"site10:themeopts:accent": "site10:themeopts", "site:x": "site", "sitex:y:z": "sitex", "site2:": "site2:",
	} {
		if got := Broad(tag); got != want {
			t.Errorf("Broad(%q) = %q, want %q", tag, got, want)
		}
	}
}

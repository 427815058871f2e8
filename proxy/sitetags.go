package proxy

import (
	"net/http"
	"strings"
)

// SiteTag is a cache tag as a site of a network names it: prefix is the
// site's (SiteOptions.TagPrefix), and the tag as escaped for the headers.
// Purges name tags this way.
func SiteTag(prefix, tag string) string { return prefix + tag }

// siteTags has every answer's cache tags name the site (TagPrefix), so
// that a purge of one site's tags never reaches another's answers.
func siteTags(prefix string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(&tagWriter{ResponseWriter: w, prefix: prefix}, r)
		})
	}
}

// tagHeaders are the tag headers (as Go keys them) and their separators.
var tagHeaders = [2][2]string{{"Cache-Tag", ","}, {"Surrogate-Key", " "}}

// tagWriter prefixes the tag headers once, as the answer's head is written.
type tagWriter struct {
	http.ResponseWriter
	prefix string
	done   bool
}

func (t *tagWriter) WriteHeader(code int) {
	t.tag()
	t.ResponseWriter.WriteHeader(code)
}

func (t *tagWriter) Write(b []byte) (int, error) {
	t.tag()
	return t.ResponseWriter.Write(b)
}

func (t *tagWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

func (t *tagWriter) tag() {
	if t.done {
		return
	}
	t.done = true
	h := t.Header()
	for _, hs := range tagHeaders {
		// The values may be shared between answers: replaced, never changed.
		name, sep := hs[0], hs[1]
		if v := h[name]; len(v) > 0 && v[0] != "" {
			tags := strings.Split(v[0], sep)
			for i, tag := range tags {
				tags[i] = SiteTag(t.prefix, tag)
			}
			h[name] = []string{strings.Join(tags, sep)}
		}
	}
}

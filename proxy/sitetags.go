package proxy

import (
	"net/http"

	"github.com/wpsidecar/wpsidecar/cachetag"
)

// siteTags has every answer's cache tags name the site (TagPrefix), so
// that a purge of one site's tags never reaches another's answers.
func siteTags(prefix string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(&tagWriter{ResponseWriter: w, prefix: prefix}, r)
		})
	}
}

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
	cachetag.Prefix(t.Header(), t.prefix)
}

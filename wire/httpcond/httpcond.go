// Package httpcond implements the conditional requests of the sidecar's
// routes (docs/api.md §5): strong ETags computed from stored data,
// If-None-Match on reads (304) and If-Match on writes (412).
package httpcond

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/wpsidecar/wpsidecar/internal/contentcoding"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// ETag is a strong entity tag over parts of stored data (not over rendered
// bytes, so that a change of rendering alone does not change it, and data
// that did not change keeps its tag). kind names what is tagged, so that
// equal data of different resources gets different tags.
func ETag(kind string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(kind))
	for _, p := range parts {
		// Length-prefixed, so that ("ab","c") and ("a","bc") differ.
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(p))))
		h.Write([]byte(p))
	}
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// NotModified sets the ETag header and, when the request's If-None-Match
// names etag (weak comparison, "*" included, in any coding:
// contentcoding.NoneMatch), answers 304 without a body and returns true.
// Headers already set (Cache-Control, Vary) go with the 304.
func NotModified(w http.ResponseWriter, r *http.Request, etag string) bool {
	w.Header().Set("ETag", etag)
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || !contentcoding.NoneMatch(r.Header.Values("If-None-Match"), etag) {
		return false
	}
	w.WriteHeader(http.StatusNotModified)
	return true
}

// Precondition is a request's If-Match.
type Precondition struct {
	tags []string
}

// IfMatch is the request's If-Match, or nil when it has none.
func IfMatch(r *http.Request) *Precondition {
	v := r.Header.Values("If-Match")
	if len(v) == 0 {
		return nil
	}
	return &Precondition{tags: contentcoding.TagList(strings.Join(v, ","))}
}

// Check is wpjson.ErrPreconditionFailed unless etag, the stored state's tag, is
// one of the If-Match tags (strong comparison: a weak tag never matches)
// or If-Match is "*". A nil Precondition always holds.
func (p *Precondition) Check(etag string) error {
	if p == nil {
		return nil
	}
	for _, t := range p.tags {
		if t == "*" || t == etag {
			return nil
		}
	}
	return wpjson.ErrPreconditionFailed
}

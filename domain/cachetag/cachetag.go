// Package cachetag is the one place cache tags are spelled: the tags an
// answer names in Cache-Tag and Surrogate-Key (docs/api.md §11), how they
// are escaped and prefixed with a network site's id, and the tags a change
// makes stale, which purges name. Answers and purges both use it, so they
// cannot drift apart.
package cachetag

import (
	"net/http"
	"strconv"
	"strings"
)

// A namespace's tag is its name (wpsidecar.Namespace): every answer names
// it first, and it covers the others when the list is cut short. The
// namespaces' handlers name their own tags with this package's spelling;
// it names no namespace.

// Key is the tag of one stored entity of a namespace (a group's key, an
// option's id), or of another of its answers (the field types' schemas).
func Key(namespace, key string) string { return namespace + ":" + key }

// List is the tag of every answer that lists namespace's items, for a
// namespace whose unit is Listed: a change of any item makes it stale.
func List(namespace string) string { return Key(namespace, "list") }

// Stale are the tags a change of keys in namespace makes stale (its List
// too when listed), escaped and named as site blogID's answers name them
// (0: a single site).
func Stale(blogID int64, namespace string, listed bool, keys []string) []string {
	tags := []string{namespace}
	if listed {
		tags = append(tags, List(namespace))
	}
	for _, k := range keys {
		tags = append(tags, Key(namespace, k))
	}
	prefix := SitePrefix(blogID)
	for i, t := range tags {
		tags[i] = prefix + Escape(t)
	}
	return tags
}

// SitePrefix starts every tag of a network's site blogID, so that a purge
// of one site's tags never reaches another's answers; "" for a single site
// (0).
func SitePrefix(blogID int64) string {
	if blogID == 0 {
		return ""
	}
	return "site" + strconv.FormatInt(blogID, 10) + ":"
}

// Broad is the broader tag that covers tag, as answers name it: its
// namespace's, with its site's prefix ("site2:rest:post:14" is covered by
// "site2:rest", "fieldmgr:g1" by "fieldmgr"). Every answer names its
// namespace's tag first.
func Broad(tag string) string {
	prefix := ""
	if rest, ok := strings.CutPrefix(tag, "site"); ok {
		if n, after, ok := strings.Cut(rest, ":"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			prefix, tag = "site"+n+":", after
		}
	}
	ns, _, _ := strings.Cut(tag, ":")
	return prefix + ns
}

// maxHeader bounds the tag headers; CDNs cap them (Cloudflare at 16 KB for
// all tags), and a longer list is cut back to its first tag, the
// namespace's, which covers the rest.
const maxHeader = 4096

// headers are the tag headers (as Go keys them) and their separators.
var headers = [2][2]string{{"Cache-Tag", ","}, {"Surrogate-Key", " "}}

// Fit tells whether tags fit in the tag headers whole (New cuts a longer
// list back to its first tag).
func Fit(tags ...string) bool {
	n := 0
	for _, t := range tags {
		if n += len(Escape(t)) + 1; n > maxHeader {
			return false
		}
	}
	return true
}

// Set names the stored entities an answer is made of, for CDN purges. The
// first tag should be the namespace's.
func Set(h http.Header, tags ...string) { New(tags...).Set(h) }

// Tags are an answer's tag headers, made once for an answer served many
// times.
type Tags struct{ cacheTag, surrogateKey []string }

// New escapes tags and joins them as the headers carry them.
func New(tags ...string) Tags {
	enc := make([]string, 0, len(tags))
	n := 0
	for _, t := range tags {
		e := Escape(t)
		if n += len(e) + 1; n > maxHeader {
			enc = enc[:1]
			break
		}
		enc = append(enc, e)
	}
	return Tags{one(strings.Join(enc, headers[0][1])), one(strings.Join(enc, headers[1][1]))}
}

// Set puts the tags in h. The values are shared between answers: one
// element at full capacity, so that an Add copies rather than writes into
// them.
func (t Tags) Set(h http.Header) {
	h[headers[0][0]], h[headers[1][0]] = t.cacheTag, t.surrogateKey
}

func one(v string) []string { return []string{v}[:1:1] }

// Prefix makes the tag headers in h name a network's site (SitePrefix).
// The values may be shared between answers: replaced, never changed.
func Prefix(h http.Header, prefix string) {
	for _, hs := range headers {
		name, sep := hs[0], hs[1]
		if v := h[name]; len(v) > 0 && v[0] != "" {
			tags := strings.Split(v[0], sep)
			for i, tag := range tags {
				tags[i] = prefix + tag
			}
			h[name] = []string{strings.Join(tags, sep)}
		}
	}
}

// Escape is a tag as the headers carry it (and purges must name it):
// characters outside A-Za-z0-9_-.: percent-encoded, so that no separator or
// space gets in.
func Escape(s string) string {
	const hexdigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_-.:", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexdigits[c>>4])
		b.WriteByte(hexdigits[c&15])
	}
	return b.String()
}

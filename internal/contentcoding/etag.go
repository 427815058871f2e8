package contentcoding

import "strings"

// Tag is the entity tag of the answer whose identity tag is etag, coded
// with c: "abc" coded br is "abc-br". A coded answer is other bytes than
// the identity one, so a strong tag must differ (RFC 9110 §8.8.3.3); the
// suffix inside the quotes keeps it one tag. Identity, or a tag that is
// not a quoted one, stays as it is.
func Tag(etag string, c Coding) string {
	if c == Identity || len(etag) < 2 || !strings.HasSuffix(etag, `"`) {
		return etag
	}
	return etag[:len(etag)-1] + "-" + c.String() + `"`
}

// Base is the identity tag of t, a tag Tag made or an identity tag.
func Base(t string) string {
	for _, c := range codings {
		if b, ok := strings.CutSuffix(t, "-"+c.String()+`"`); ok {
			return b + `"`
		}
	}
	return t
}

// BaseList is an entity-tag list (If-Match) with each coded tag replaced
// by its identity tag: a write is conditional on the data, which either
// tag names.
func BaseList(v string) string {
	tags := TagList(v)
	for i, t := range tags {
		if w, ok := strings.CutPrefix(t, "W/"); ok {
			tags[i] = "W/" + Base(w)
		} else {
			tags[i] = Base(t)
		}
	}
	return strings.Join(tags, ", ")
}

// NoneMatch tells whether If-None-Match (its field lines) names etag, an
// identity tag, in any coding: "*", or a tag equal to etag or to one of
// its coded tags by the weak comparison (RFC 9110 §13.1.2), so that a
// client holding the answer in one coding revalidates it in another.
func NoneMatch(values []string, etag string) bool {
	if etag == "" {
		return false
	}
	etag = strings.TrimPrefix(etag, "W/")
	for _, v := range values {
		for _, t := range TagList(v) {
			if t == "*" || Base(strings.TrimPrefix(t, "W/")) == etag {
				return true
			}
		}
	}
	return false
}

// TagList splits an entity-tag list (If-Match, If-None-Match); a comma
// inside a quoted tag stays.
func TagList(s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimLeft(s, " \t,") {
		end := 0
		if strings.HasPrefix(s, `"`) || strings.HasPrefix(s, `W/"`) {
			start := strings.Index(s, `"`) + 1
			if i := strings.Index(s[start:], `"`); i >= 0 {
				end = start + i + 1
			} else {
				end = len(s)
			}
		} else if end = strings.IndexByte(s, ','); end < 0 {
			end = len(s)
		}
		if t := strings.TrimSpace(s[:end]); t != "" {
			out = append(out, t)
		}
		s = s[end:]
	}
	return out
}

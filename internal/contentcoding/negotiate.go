// Package contentcoding chooses and applies the content coding of the
// sidecar's own answers: Accept-Encoding negotiated as RFC 9110 §12.5.3
// says, br, zstd and gzip made once per body and kept in a bounded cache,
// and the entity tags of the coded answers.
package contentcoding

import (
	"strings"
)

// Coding is a content coding the sidecar can send.
type Coding uint8

// The codings, Identity first; among equal q-values the server prefers
// Brotli, then Zstd, then Gzip (the order of how small they make JSON).
const (
	Identity Coding = iota
	Gzip
	Zstd
	Brotli
)

// String is the coding's name in Content-Encoding and in ETag suffixes.
func (c Coding) String() string {
	switch c {
	case Gzip:
		return "gzip"
	case Zstd:
		return "zstd"
	case Brotli:
		return "br"
	}
	return "identity"
}

// codings are the compressing codings in the server's order of preference.
var codings = [...]Coding{Brotli, Zstd, Gzip}

// unset marks a coding the header does not name.
const unset = -1

// Negotiate chooses the coding of an answer to a request with these
// Accept-Encoding values (all the field lines; none: the field is absent).
//
// The coding with the highest q-value wins, the server's preference
// (br > zstd > gzip > identity) breaking ties; a coding the header does not
// name takes the q-value of "*", or 0 without one, except identity, which
// is acceptable unless refused, after any coding the client accepts. Without the field, or when nothing is
// acceptable (identity;q=0 or *;q=0 with no coding allowed), the answer is
// identity: what WordPress sends whatever the header says. Names are
// case-insensitive ("x-gzip" is gzip, RFC 9110 §8.4.1.3); a malformed
// element is ignored, as if absent.
func Negotiate(values []string) Coding {
	if len(values) == 0 {
		return Identity
	}
	q := [4]int{unset, unset, unset, unset} // by Coding, in thousandths
	star := unset
	for _, v := range values {
		for _, elem := range strings.Split(v, ",") {
			name, weight, ok := parseElement(elem)
			if !ok {
				continue
			}
			switch strings.ToLower(name) {
			case "*":
				if star == unset {
					star = weight
				}
			case "identity":
				setFirst(&q[Identity], weight)
			case "gzip", "x-gzip":
				setFirst(&q[Gzip], weight)
			case "zstd":
				setFirst(&q[Zstd], weight)
			case "br":
				setFirst(&q[Brotli], weight)
			}
		}
	}
	for c := range q {
		if q[c] == unset {
			q[c] = star
		}
	}
	if q[Identity] == unset {
		// Acceptable, but the client states no preference for it: below
		// any coding it accepts at all.
		q[Identity] = 1
	}
	best, bestQ := Identity, q[Identity]
	for _, c := range codings {
		if q[c] > 0 && q[c] >= bestQ && (q[c] > bestQ || best == Identity) {
			best, bestQ = c, q[c]
		}
	}
	return best
}

// setFirst keeps the first q-value a coding is named with.
func setFirst(q *int, weight int) {
	if *q == unset {
		*q = weight
	}
}

// parseElement reads one element of Accept-Encoding: a token and its
// weight (1000 without one). Parameters other than q make it malformed
// (the grammar has none), as does a q-value outside the grammar.
func parseElement(elem string) (name string, weight int, ok bool) {
	name, params, hasParams := strings.Cut(elem, ";")
	name = strings.Trim(name, " \t")
	if !isToken(name) {
		return "", 0, false
	}
	if !hasParams {
		return name, 1000, true
	}
	params = strings.Trim(params, " \t")
	v, found := strings.CutPrefix(params, "q=")
	if !found {
		if v, found = strings.CutPrefix(params, "Q="); !found {
			return "", 0, false
		}
	}
	weight, ok = qvalue(v)
	return name, weight, ok
}

// qvalue parses RFC 9110's qvalue, "0" to "1" with up to three decimals,
// in thousandths.
func qvalue(s string) (int, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	whole := int(s[0]-'0') * 1000
	if len(s) == 1 {
		return whole, true
	}
	if s[1] != '.' {
		return 0, false
	}
	frac, scale := 0, 100
	for _, d := range []byte(s[2:]) {
		if d < '0' || d > '9' {
			return 0, false
		}
		frac += int(d-'0') * scale
		scale /= 10
	}
	if whole == 1000 && frac != 0 {
		return 0, false
	}
	return whole + frac, true
}

// isToken tells whether s is an RFC 9110 token (or "*", which is one).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

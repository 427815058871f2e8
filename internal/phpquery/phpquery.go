// Package phpquery reads a query string as PHP fills $_GET from it, for
// the few names the sidecar must read exactly as WordPress will
// (rest_route, _method, _wpnonce, _envelope). PHP's reading differs from
// Go's url.ParseQuery in ways a client can use to make the sidecar and
// WordPress disagree on what a request is: a name is decoded leniently
// (a '%' that starts no escape is itself), ends at its first NUL, loses
// its leading spaces, has its spaces and dots made underscores, and ends
// at a '[' that opens an array.
package phpquery

import "strings"

// Decode is s as PHP's urldecode makes it: '+' a space, '%' and two hex
// digits the byte they name, any other '%' itself. It never fails.
func Decode(s string) string {
	if !strings.ContainsAny(s, "+%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// Name is the name PHP files a field of raw name (as sent, encoded)
// under in $_GET, and whether it is an array's element (name[…]=). ""
// when PHP files it under none (an empty name, or one of spaces).
func Name(raw string) (name string, array bool) {
	n := Decode(raw)
	if i := strings.IndexByte(n, 0); i >= 0 {
		n = n[:i] // PHP's names are C strings
	}
	n = strings.TrimLeft(n, " ")
	b := []byte(n)
	for i, c := range b {
		switch c {
		case ' ', '.':
			b[i] = '_'
		case '[':
			if i == 0 {
				return "", false // PHP drops an empty name before it looks for an index
			}
			if strings.IndexByte(n[i+1:], ']') < 0 {
				// No index: the '[' and what follows are part of the
				// name, with their spaces, dots and '[' made underscores.
				for j := i; j < len(b); j++ {
					if b[j] == ' ' || b[j] == '.' || b[j] == '[' {
						b[j] = '_'
					}
				}
				return string(b), false
			}
			return string(b[:i]), i > 0
		}
	}
	return string(b), false
}

// Field is one field of a query string as PHP reads it.
type Field struct {
	Name  string // as PHP files it (Name)
	Array bool   // an array's element
	Value string // decoded
}

// MaxInputVars is PHP's max_input_vars as php.ini ships it: PHP reads
// the first so many fields of a query string and ignores the rest.
const MaxInputVars = 1000

// Fields are the fields of the query string raw, in order, those PHP
// files under no name left out, and the fields past MaxInputVars, which
// PHP ignores. want, when not nil, is asked first of each raw name and
// leaves it out when false: most fields of a long query are not decoded
// at all.
func Fields(raw string, want func(rawName string) bool) []Field {
	var out []Field
	for n := 0; raw != ""; {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		if kv == "" {
			continue // PHP's tokenizer skips empty fields: they do not count
		}
		if n++; n > MaxInputVars {
			break
		}
		k, v, _ := strings.Cut(kv, "=")
		if want != nil && !want(k) {
			continue
		}
		name, array := Name(k)
		if name == "" {
			continue
		}
		out = append(out, Field{Name: name, Array: array, Value: Decode(v)})
	}
	return out
}

// TooMany tells whether the query string raw has more fields than
// MaxInputVars: a site whose PHP reads more (or fewer) than php.ini's
// default may read its names otherwise than Fields does.
func TooMany(raw string) bool {
	n := 0
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		if kv != "" {
			if n++; n > MaxInputVars {
				return true
			}
		}
	}
	return false
}

// MayBe tells whether a raw field name may be filed as one of names:
// whether it holds one of them as is, or holds what decoding or PHP's
// rewriting may turn into one ('%', '+', '.', ' ', '['). A cheap filter
// for Fields.
func MayBe(names ...string) func(rawName string) bool {
	return func(raw string) bool {
		if strings.ContainsAny(raw, "%+. [") {
			return true
		}
		for _, n := range names {
			if strings.Contains(raw, n) {
				return true
			}
		}
		return false
	}
}

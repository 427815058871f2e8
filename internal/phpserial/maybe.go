package phpserial

import (
	"regexp"
	"strings"
)

var (
	serializedLenRe   = regexp.MustCompile(`^[aOEs]:[0-9]+:`)
	serializedValueRe = regexp.MustCompile(`^[bid]:[0-9.E+-]+;$`)
)

// IsSerialized is WordPress's is_serialized($data) (strict): whether
// maybe_unserialize would try to unserialize s. It does not check lengths,
// and it says no to C: data, d:NAN; and d:INF;.
func IsSerialized(s string) bool {
	s = strings.Trim(s, " \t\n\r\x00\x0b")
	if s == "N;" {
		return true
	}
	if len(s) < 4 || s[1] != ':' {
		return false
	}
	if last := s[len(s)-1]; last != ';' && last != '}' {
		return false
	}
	switch s[0] {
	case 's':
		return s[len(s)-2] == '"' && serializedLenRe.MatchString(s)
	case 'a', 'O', 'E':
		return serializedLenRe.MatchString(s)
	case 'b', 'i', 'd':
		return serializedValueRe.MatchString(s)
	}
	return false
}

// MaybeUnserialize is maybe_unserialize: a string WordPress considers
// serialized is unserialized (an error where PHP's unserialize would return
// false), anything else is the string itself.
func MaybeUnserialize(s string) (Value, error) {
	if !IsSerialized(s) {
		return Value{Kind: String, Str: s}, nil
	}
	return Unserialize(strings.Trim(s, " \t\n\r\x00\x0b"))
}

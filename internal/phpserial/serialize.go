package phpserial

import (
	"bytes"
	"math"
	"strconv"
	"strings"
)

// Serialize encodes v as PHP's serialize() does. A float read by
// Unserialize is written back with the text it was read with, and a
// reference read by Unserialize is written back as a reference (R: or r:,
// numbered as PHP numbers them), so that what PHP serialized comes back byte
// for byte and the output is never larger than the data it holds. A value
// changed since it was read through a reference (other entries, other
// scalar) is written whole, not as a reference to data it no longer holds.
func Serialize(v Value) string {
	s := serializer{}
	s.write(v, true)
	return s.b.String()
}

type serializer struct {
	b    strings.Builder
	n    int // the number PHP gives the value being written
	seen map[*cell]written
}

// written is where a reference or an object was first written, and what.
type written struct {
	n int
	v Value
}

// write follows php_var_serialize_intern and php_add_var_hash: every value
// is numbered; a reference held in two places or more, and an object, is
// written whole the first time and as R:n (a reference, which takes no
// number) or r:n (the same object) after. The top-level value is not a
// reference (serialize() takes it by value).
func (s *serializer) write(v Value, top bool) {
	s.n++
	isRef := !top && v.ref != nil && v.ref.members > 1
	key := v.obj
	if key == nil && isRef {
		key = v.ref
	}
	if key != nil {
		if w, ok := s.seen[key]; ok && (v.cyclic || same(w.v, v)) {
			if isRef {
				s.n--
				s.b.WriteString("R:")
			} else {
				s.b.WriteString("r:")
			}
			s.b.WriteString(strconv.Itoa(w.n))
			s.b.WriteByte(';')
			return
		} else if !ok && !v.cyclic {
			if s.seen == nil {
				s.seen = map[*cell]written{}
			}
			s.seen[key] = written{n: s.n, v: v}
		}
	}
	b := &s.b
	switch v.Kind {
	case Null:
		b.WriteString("N;")
	case Bool:
		if v.Bool {
			b.WriteString("b:1;")
		} else {
			b.WriteString("b:0;")
		}
	case Int:
		b.WriteString("i:")
		b.WriteString(strconv.FormatInt(v.Int, 10))
		b.WriteByte(';')
	case Float:
		b.WriteString("d:")
		if v.FloatText != "" {
			b.WriteString(v.FloatText)
		} else {
			b.WriteString(FormatFloat(v.Float, 'E'))
		}
		b.WriteByte(';')
	case String:
		writeLenString(b, 's', v.Str)
		b.WriteByte(';')
	case Enum:
		writeLenString(b, 'E', v.Str)
		b.WriteByte(';')
	case Array:
		b.WriteString("a:")
		s.writeEntries(v.Entries)
	case Object:
		if v.Custom {
			writeLenString(b, 'C', v.Class)
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(len(v.Str)))
			b.WriteString(":{")
			b.WriteString(v.Str)
			b.WriteByte('}')
			return
		}
		writeLenString(b, 'O', v.Class)
		b.WriteByte(':')
		s.writeEntries(v.Entries)
	}
}

// same tells whether b is still the data a was: the same scalar, or the
// same entries (shared, not equal).
func same(a, b Value) bool {
	if a.Kind != b.Kind || a.Bool != b.Bool || a.Int != b.Int || math.Float64bits(a.Float) != math.Float64bits(b.Float) ||
		a.Str != b.Str || a.FloatText != b.FloatText || a.Class != b.Class || a.Custom != b.Custom || len(a.Entries) != len(b.Entries) {
		return false
	}
	return len(a.Entries) == 0 || &a.Entries[0] == &b.Entries[0]
}

func writeLenString(b *strings.Builder, tag byte, s string) {
	b.WriteByte(tag)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteString(`:"`)
	b.WriteString(s)
	b.WriteByte('"')
}

func (s *serializer) writeEntries(entries []Entry) {
	b := &s.b
	b.WriteString(strconv.Itoa(len(entries)))
	b.WriteString(":{")
	for _, e := range entries {
		if e.Key.IsInt {
			b.WriteString("i:")
			b.WriteString(strconv.FormatInt(e.Key.Int, 10))
			b.WriteByte(';')
		} else {
			writeLenString(b, 's', e.Key.Str)
			b.WriteByte(';')
		}
		s.write(e.Value, false)
	}
	b.WriteByte('}')
}

// FormatFloat prints f as PHP does with serialize_precision -1: the
// shortest digits that read back as f, fixed notation for decimal exponents
// from -4 to 16, otherwise d.dddE+x (expChar 'E' for serialize, 'e' for
// json_encode), and "1.0E+25" rather than "1E+25".
func FormatFloat(f float64, expChar byte) string {
	switch {
	case math.IsNaN(f):
		return "NAN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	return string(appendFloat(nil, f, expChar))
}

// appendFloat appends FormatFloat(f, expChar) of a finite f to dst.
func appendFloat(dst []byte, f float64, expChar byte) []byte {
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64) // -d.ddde±xx
	at := bytes.LastIndexByte(dst[start:], 'e') + start
	x, _ := strconv.Atoi(string(dst[at+1:]))
	if x < -4 || x >= 17 {
		dst = dst[:at]
		if bytes.IndexByte(dst[start:], '.') < 0 {
			dst = append(dst, '.', '0')
		}
		dst = append(dst, expChar)
		if x < 0 {
			dst, x = append(dst, '-'), -x
		} else {
			dst = append(dst, '+')
		}
		return strconv.AppendInt(dst, int64(x), 10)
	}
	return strconv.AppendFloat(dst[:start], f, 'f', -1, 64)
}

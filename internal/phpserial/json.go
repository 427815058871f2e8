package phpserial

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxJSON bounds the JSON of one value, the size of the largest row
// Unserialize reads: references let a few hundred bytes of serialized data
// stand for terabytes of JSON (PHP's json_encode runs out of memory on them,
// a fatal error for WordPress).
const MaxJSON = MaxInput

// ErrTooLarge is wrapped by EncodeJSON's error for a value whose JSON would
// be larger than MaxJSON.
var ErrTooLarge = errors.New("phpserial: JSON larger than the limit")

// EncodeJSON renders v as PHP's json_encode does, keys in order: an array
// whose keys are 0..n-1 in order is a JSON array (so an empty array is []),
// any other array or an object is a JSON object; floats print as PHP prints
// them; NaN and infinities, which json_encode refuses, become null; an
// enum is its "Class:Case" name and a C: object is {}. A value read through
// a reference is written out in full, as json_encode does; a value inside
// itself (json_encode's recursion) is null. The JSON is measured before it
// is written (each value that references share once, so a row that nests
// references is measured as fast as it was read): larger than MaxJSON, it
// is not written and EncodeJSON fails with ErrTooLarge.
func EncodeJSON(v Value) ([]byte, error) {
	var m jsonSizer
	size := m.size(v)
	if size > MaxJSON {
		return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, MaxJSON)
	}
	var b bytes.Buffer
	b.Grow(int(size))
	writeJSON(&b, v)
	return b.Bytes(), nil
}

// CheckJSON is EncodeJSON's error without the JSON: ErrTooLarge when the
// JSON of v would be larger than MaxJSON. It measures, each value that
// references share once, and writes nothing: a reader of a stored value can
// refuse it as it reads it, and write its JSON later.
func CheckJSON(v Value) error {
	var m jsonSizer
	if m.size(v) > MaxJSON {
		return fmt.Errorf("%w: over %d bytes", ErrTooLarge, MaxJSON)
	}
	return nil
}

// JSON is EncodeJSON for values known to fit (built by the program, or
// already checked by EncodeJSON). It never fails: a value whose JSON would
// be larger than MaxJSON is written as far as it fits, its array's or
// object's elements that do not fit in the budget left as null (like
// json_encode's JSON_PARTIAL_OUTPUT_ON_ERROR), or null itself. Code that
// answers a stored value should use EncodeJSON and answer the error.
func JSON(v Value) []byte {
	if b, err := EncodeJSON(v); err == nil {
		return b
	}
	if (v.Kind != Array && v.Kind != Object) || v.Custom {
		return []byte("null")
	}
	var m jsonSizer
	var b bytes.Buffer
	list := v.Kind == Array && v.IsList()
	b.WriteByte("{["[btoi(list)])
	for i, e := range v.Entries {
		if i > 0 {
			b.WriteByte(',')
		}
		if !list {
			JSONString(&b, e.Key.String())
			b.WriteByte(':')
		}
		if int64(b.Len())+m.size(e.Value)+1 <= MaxJSON {
			writeJSON(&b, e.Value)
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte("}]"[btoi(list)])
	return b.Bytes()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// IsList tells whether an array's keys are 0..n-1 in order.
func (v Value) IsList() bool {
	for i, e := range v.Entries {
		if !e.Key.IsInt || e.Key.Int != int64(i) {
			return false
		}
	}
	return true
}

func writeJSON(b *bytes.Buffer, v Value) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Int, Float:
		switch {
		case v.JSONText != "":
			b.WriteString(v.JSONText)
		case v.Kind == Int:
			b.Write(strconv.AppendInt(b.AvailableBuffer(), v.Int, 10))
		case math.IsNaN(v.Float) || math.IsInf(v.Float, 0):
			b.WriteString("null")
		default:
			b.Write(appendFloat(b.AvailableBuffer(), v.Float, 'e'))
		}
	case String, Enum:
		JSONString(b, v.Str)
	case Array, Object:
		if v.Custom {
			b.WriteString("{}")
			return
		}
		list := v.Kind == Array && v.IsList()
		b.WriteByte("{["[btoi(list)])
		for i, e := range v.Entries {
			if i > 0 {
				b.WriteByte(',')
			}
			if !list {
				JSONString(b, e.Key.String())
				b.WriteByte(':')
			}
			writeJSON(b, e.Value)
		}
		b.WriteByte("}]"[btoi(list)])
	}
}

// plainJSON tells whether s is written as it is between quotes.
func plainJSON(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80:
			// 0xe2 starts U+2028 and U+2029, which encoding/json escapes.
			if c == 0xe2 {
				return false
			}
			ascii = false
		case c < 0x20 || c == '"' || c == '\\':
			return false
		}
	}
	return ascii || utf8.ValidString(s)
}

// JSONString writes s as a JSON string, as the sidecar writes every
// string: <, > and & as they are, bytes that are not UTF-8 as "?" (what
// wp_json_encode's fallback makes of them; json_encode itself fails).
func JSONString(b *bytes.Buffer, s string) {
	if plainJSON(s) {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	if !utf8.ValidString(s) {
		var v strings.Builder
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				v.WriteByte('?')
			} else {
				v.WriteString(s[i : i+size])
			}
			i += size
		}
		s = v.String()
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Truncate(b.Len() - 1)
}

// jsonSizer measures the JSON of values exactly (what writeJSON writes),
// without writing it. The
// entries a reference shares are measured once: the memo is what keeps a
// value that nests references cheap to measure.
type jsonSizer struct {
	memo    map[sharedEntries]int64
	scratch bytes.Buffer
	digits  []byte
}

// sharedEntries names entries shared by references: where they are, how
// many, and whether they are written as a list.
type sharedEntries struct {
	at   *Entry
	n    int
	list bool
}

// add is a+b, or MaxJSON+1 for anything larger than MaxJSON.
func add(a, b int64) int64 {
	if a+b > MaxJSON {
		return MaxJSON + 1
	}
	return a + b
}

// size is len(EncodeJSON(v)), or MaxJSON+1 when that is larger than
// MaxJSON.
func (m *jsonSizer) size(v Value) int64 {
	switch v.Kind {
	case Null:
		return 4
	case Bool:
		if v.Bool {
			return 4
		}
		return 5
	case Int, Float:
		switch {
		case v.JSONText != "":
			return int64(len(v.JSONText))
		case v.Kind == Int:
			m.digits = strconv.AppendInt(m.digits[:0], v.Int, 10)
			return int64(len(m.digits))
		case math.IsNaN(v.Float) || math.IsInf(v.Float, 0):
			return 4
		}
		m.digits = appendFloat(m.digits[:0], v.Float, 'e')
		return int64(len(m.digits))
	case String, Enum:
		return m.str(v.Str)
	case Array, Object:
		if v.Custom {
			return 2
		}
		list := v.Kind == Array && v.IsList()
		var key sharedEntries
		if len(v.Entries) > 0 && (v.ref != nil || v.obj != nil) {
			key = sharedEntries{&v.Entries[0], len(v.Entries), list}
			if n, ok := m.memo[key]; ok {
				return n
			}
		}
		n := int64(2 + max(len(v.Entries)-1, 0)) // brackets and commas
		for _, e := range v.Entries {
			if !list {
				if e.Key.IsInt {
					m.digits = strconv.AppendInt(m.digits[:0], e.Key.Int, 10)
					n = add(n, int64(len(m.digits))+3) // "n":
				} else {
					n = add(n, m.str(e.Key.Str)+1)
				}
			}
			n = add(n, m.size(e.Value))
		}
		if key.at != nil {
			if m.memo == nil {
				m.memo = map[sharedEntries]int64{}
			}
			m.memo[key] = n
		}
		return n
	}
	return 0
}

// str is the length of s as JSONString writes it.
func (m *jsonSizer) str(s string) int64 {
	if plainJSON(s) {
		return int64(len(s)) + 2
	}
	m.scratch.Reset()
	JSONString(&m.scratch, s)
	return int64(m.scratch.Len())
}

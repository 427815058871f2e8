package phpserial

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON renders v as PHP's json_encode does, keys in order: an array whose
// keys are 0..n-1 in order is a JSON array (so an empty array is []), any
// other array or an object is a JSON object; floats print as PHP prints
// them; NaN and infinities, which json_encode refuses, become null; an
// enum is its "Class:Case" name and a C: object is {}.
func JSON(v Value) []byte {
	var b bytes.Buffer
	writeJSON(&b, v)
	return b.Bytes()
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
		if v.JSONText != "" {
			b.WriteString(v.JSONText)
			return
		}
		if v.Kind == Int {
			b.WriteString(strconv.FormatInt(v.Int, 10))
		} else if math.IsNaN(v.Float) || math.IsInf(v.Float, 0) {
			b.WriteString("null")
		} else {
			b.WriteString(FormatFloat(v.Float, 'e'))
		}
	case String, Enum:
		JSONString(b, v.Str)
	case Array, Object:
		if v.Custom {
			b.WriteString("{}")
			return
		}
		if v.Kind == Array && v.IsList() {
			b.WriteByte('[')
			for i, e := range v.Entries {
				if i > 0 {
					b.WriteByte(',')
				}
				writeJSON(b, e.Value)
			}
			b.WriteByte(']')
			return
		}
		b.WriteByte('{')
		for i, e := range v.Entries {
			if i > 0 {
				b.WriteByte(',')
			}
			JSONString(b, e.Key.String())
			b.WriteByte(':')
			writeJSON(b, e.Value)
		}
		b.WriteByte('}')
	}
}

// JSONString writes s as a JSON string, as the sidecar writes every
// string: <, > and & as they are, bytes that are not UTF-8 as "?" (what
// wp_json_encode's fallback makes of them; json_encode itself fails).
func JSONString(b *bytes.Buffer, s string) {
	plain := true
	for i := 0; plain && i < len(s); i++ {
		c := s[i]
		// 0xe2 starts U+2028 and U+2029, which encoding/json escapes.
		plain = c >= 0x20 && c < 0x80 && c != '"' && c != '\\' || c >= 0x80 && c != 0xe2
	}
	if plain && utf8.ValidString(s) {
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

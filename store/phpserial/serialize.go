package phpserial

import (
	"math"
	"strconv"
	"strings"
)

// Serialize encodes v as PHP's serialize() does. A float read by
// Unserialize is written back with the text it was read with.
func Serialize(v Value) string {
	var b strings.Builder
	write(&b, v)
	return b.String()
}

func write(b *strings.Builder, v Value) {
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
		writeEntries(b, v.Entries)
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
		writeEntries(b, v.Entries)
	}
}

func writeLenString(b *strings.Builder, tag byte, s string) {
	b.WriteByte(tag)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteString(`:"`)
	b.WriteString(s)
	b.WriteByte('"')
}

func writeEntries(b *strings.Builder, entries []Entry) {
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
		write(b, e.Value)
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
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±xx
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	if x < -4 || x >= 17 {
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		sign := "+"
		if x < 0 {
			sign, x = "-", -x
		}
		return mant + string(expChar) + sign + strconv.Itoa(x)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

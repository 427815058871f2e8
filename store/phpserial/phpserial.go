// Package phpserial reads and writes PHP's serialize() format as WordPress
// stores it (maybe_serialize/maybe_unserialize), keeping the order of array
// keys. Objects and references are read as plain data: nothing is ever
// instantiated or executed. Corrupt input is an error, never a panic.
package phpserial

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the PHP type of a Value.
type Kind uint8

// The kinds of value serialize() writes.
const (
	Null Kind = iota
	Bool
	Int
	Float
	String
	Array
	Object // O: (properties in Entries) and C: (raw payload in Str)
	Enum   // E: "Class:Case" in Str
)

// Value is one PHP value.
type Value struct {
	Kind  Kind
	Bool  bool
	Int   int64
	Float float64
	// Str is the string's bytes, an enum's "Class:Case", or a C: object's
	// payload. FloatText keeps a float's text as read, so that writing it back
	// gives the same bytes.
	Str       string
	FloatText string
	// JSONText is a number's text as FromJSONStrict read it: JSON writes
	// it back as the client sent it.
	JSONText string
	// Class names an object's class.
	Class string
	// Custom marks a C: (Serializable) object, whose payload is Str.
	Custom bool
	// Entries are an array's or object's elements in order.
	Entries []Entry
}

// Entry is one key => value pair.
type Entry struct {
	Key   Key
	Value Value
}

// Key is an array key: PHP keys are integers or strings, and a string that
// looks like a canonical integer is an integer key.
type Key struct {
	IsInt bool
	Int   int64
	Str   string
}

// StrKey makes the key PHP would make of s ("10" becomes integer 10).
func StrKey(s string) Key {
	if n, ok := intLike(s); ok {
		return Key{IsInt: true, Int: n}
	}
	return Key{Str: s}
}

// IntKey is an integer key.
func IntKey(n int64) Key { return Key{IsInt: true, Int: n} }

// String renders the key as PHP would print it.
func (k Key) String() string {
	if k.IsInt {
		return strconv.FormatInt(k.Int, 10)
	}
	return k.Str
}

// intLike reports whether PHP would turn the string key s into an integer:
// an optional minus and digits, no leading zeros, within int64.
func intLike(s string) (int64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	digits := s
	if s[0] == '-' {
		digits = s[1:]
	}
	if digits == "" || (digits[0] == '0' && len(digits) > 1) || (s[0] == '-' && digits == "0") {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// Get returns the value of an array or object under key, looked up as PHP
// would ($a["10"] finds integer key 10).
func (v Value) Get(key string) (Value, bool) {
	k := StrKey(key)
	for _, e := range v.Entries {
		if e.Key == k {
			return e.Value, true
		}
	}
	return Value{}, false
}

// Truthy is PHP's boolean conversion.
func (v Value) Truthy() bool {
	switch v.Kind {
	case Bool:
		return v.Bool
	case Int:
		return v.Int != 0
	case Float:
		return v.Float != 0
	case String:
		return v.Str != "" && v.Str != "0"
	case Array:
		return len(v.Entries) > 0
	case Object, Enum:
		return true
	}
	return false
}

// AsInt is PHP's (int) of a number or numeric string; ok is false for
// anything else.
func (v Value) AsInt() (int64, bool) {
	switch v.Kind {
	case Int:
		return v.Int, true
	case Float:
		if math.IsNaN(v.Float) || math.IsInf(v.Float, 0) {
			return 0, false
		}
		return int64(v.Float), true
	case String:
		s := strings.TrimSpace(v.Str)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return int64(f), true
		}
	case Bool:
		if v.Bool {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Limits bound what Unserialize accepts from untrusted bytes.
const (
	MaxDepth = 4096 // PHP's unserialize_max_depth
	MaxInput = 64 << 20
)

// ErrSyntax is wrapped by every decoding error.
var ErrSyntax = errors.New("phpserial: invalid serialized data")

// Unserialize decodes one serialized value that spans all of data.
func Unserialize(data string) (Value, error) {
	if len(data) > MaxInput {
		return Value{}, fmt.Errorf("%w: %d bytes is over the limit", ErrSyntax, len(data))
	}
	// Values are numbered for r:/R: only when the data can hold one.
	d := &decoder{s: data, track: strings.Contains(data, "r:") || strings.Contains(data, "R:")}
	v, err := d.value(0)
	if err != nil {
		return Value{}, err
	}
	if d.i != len(d.s) {
		return Value{}, d.fail("trailing bytes")
	}
	return v, nil
}

type decoder struct {
	s     string
	i     int
	track bool
	slots []Value // values in the order PHP numbers them for r:/R:
}

func (d *decoder) fail(what string) error {
	return fmt.Errorf("%w at byte %d: %s", ErrSyntax, d.i, what)
}

func (d *decoder) expect(c byte) error {
	if d.i >= len(d.s) || d.s[d.i] != c {
		return d.fail(fmt.Sprintf("expected %q", c))
	}
	d.i++
	return nil
}

// until returns the text up to the next c and moves past c.
func (d *decoder) until(c byte) (string, error) {
	j := strings.IndexByte(d.s[d.i:], c)
	if j < 0 {
		return "", d.fail(fmt.Sprintf("missing %q", c))
	}
	t := d.s[d.i : d.i+j]
	d.i += j + 1
	return t, nil
}

// phpInt reads an integer value or key as PHP's unserialize does: one out
// of range is PHP_INT_MAX (or PHP_INT_MIN).
func (d *decoder) phpInt(c byte) (int64, error) {
	t, err := d.until(c)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(t, "+"), 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return n, nil // ParseInt gives the nearest bound
	}
	if err != nil || t == "" {
		return 0, d.fail("bad integer " + strconv.Quote(t))
	}
	return n, nil
}

func (d *decoder) intUntil(c byte) (int64, error) {
	t, err := d.until(c)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(t, "+"), 10, 64)
	if err != nil || t == "" {
		return 0, d.fail("bad integer " + strconv.Quote(t))
	}
	return n, nil
}

// lenString reads `len:"bytes"` and returns the bytes.
func (d *decoder) lenString() (string, error) {
	n, err := d.intUntil(':')
	if err != nil {
		return "", err
	}
	if n < 0 || n > int64(len(d.s)-d.i) {
		return "", d.fail("string length out of range")
	}
	if err := d.expect('"'); err != nil {
		return "", err
	}
	if d.i+int(n) > len(d.s) {
		return "", d.fail("string runs past the end")
	}
	t := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	if err := d.expect('"'); err != nil {
		return "", err
	}
	return t, nil
}

func (d *decoder) value(depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, d.fail("nested too deeply")
	}
	if d.i+1 >= len(d.s) {
		return Value{}, d.fail("unexpected end")
	}
	tag := d.s[d.i]
	if tag == 'N' {
		d.i++
		if err := d.expect(';'); err != nil {
			return Value{}, err
		}
		return d.push(Value{Kind: Null}), nil
	}
	d.i++
	if err := d.expect(':'); err != nil {
		return Value{}, err
	}
	switch tag {
	case 'b':
		t, err := d.until(';')
		if err != nil {
			return Value{}, err
		}
		if t != "0" && t != "1" {
			return Value{}, d.fail("bad boolean")
		}
		return d.push(Value{Kind: Bool, Bool: t == "1"}), nil
	case 'i':
		n, err := d.phpInt(';')
		if err != nil {
			return Value{}, err
		}
		return d.push(Value{Kind: Int, Int: n}), nil
	case 'd':
		t, err := d.until(';')
		if err != nil {
			return Value{}, err
		}
		f, err := parseFloat(t)
		if err != nil {
			return Value{}, d.fail("bad float " + strconv.Quote(t))
		}
		return d.push(Value{Kind: Float, Float: f, FloatText: t}), nil
	case 's':
		t, err := d.lenString()
		if err != nil {
			return Value{}, err
		}
		if err := d.expect(';'); err != nil {
			return Value{}, err
		}
		return d.push(Value{Kind: String, Str: t}), nil
	case 'E':
		t, err := d.lenString()
		if err != nil {
			return Value{}, err
		}
		if err := d.expect(';'); err != nil {
			return Value{}, err
		}
		if !strings.Contains(t, ":") {
			return Value{}, d.fail("enum without case")
		}
		return d.push(Value{Kind: Enum, Str: t}), nil
	case 'a':
		slot := d.reserve()
		v := Value{Kind: Array}
		entries, err := d.entries(depth, true)
		if err != nil {
			return Value{}, err
		}
		v.Entries = entries
		d.fill(slot, v)
		return v, nil
	case 'O':
		class, err := d.lenString()
		if err != nil {
			return Value{}, err
		}
		if err := d.expect(':'); err != nil {
			return Value{}, err
		}
		slot := d.reserve()
		entries, err := d.entries(depth, false)
		if err != nil {
			return Value{}, err
		}
		v := Value{Kind: Object, Class: class, Entries: entries}
		d.fill(slot, v)
		return v, nil
	case 'C':
		class, err := d.lenString()
		if err != nil {
			return Value{}, err
		}
		if err := d.expect(':'); err != nil {
			return Value{}, err
		}
		n, err := d.intUntil(':')
		if err != nil {
			return Value{}, err
		}
		if n < 0 || n > int64(len(d.s)-d.i) {
			return Value{}, d.fail("payload length out of range")
		}
		if err := d.expect('{'); err != nil {
			return Value{}, err
		}
		if d.i+int(n) > len(d.s) {
			return Value{}, d.fail("payload runs past the end")
		}
		payload := d.s[d.i : d.i+int(n)]
		d.i += int(n)
		if err := d.expect('}'); err != nil {
			return Value{}, err
		}
		return d.push(Value{Kind: Object, Class: class, Custom: true, Str: payload}), nil
	case 'r', 'R':
		n, err := d.intUntil(';')
		if err != nil {
			return Value{}, err
		}
		if n < 1 || n > int64(len(d.slots)) {
			return Value{}, d.fail("reference to an unknown value")
		}
		v := d.slots[n-1] // a copy: references are read as data
		if tag == 'r' {
			d.push(v)
		}
		return v, nil
	}
	d.i -= 2
	return Value{}, d.fail(fmt.Sprintf("unknown type %q", tag))
}

// entries reads `n:{key;value…}` of an array (keys int or string) or an
// object (property names).
func (d *decoder) entries(depth int, array bool) ([]Entry, error) {
	n, err := d.intUntil(':')
	if err != nil {
		return nil, err
	}
	// Every entry takes at least 4 bytes ("i:0;N;"), which bounds n by the
	// input and keeps a forged count from allocating.
	if n < 0 || n > int64(len(d.s)-d.i)/4 {
		return nil, d.fail("element count out of range")
	}
	if err := d.expect('{'); err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, n)
	var at map[Key]int // where each key is, once a key repeats
	for k := int64(0); k < n; k++ {
		key, err := d.key(array)
		if err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		// A repeated key keeps its first place and takes the last value,
		// as PHP's array does.
		if at == nil && k > 0 && containsKey(entries, key) {
			at = make(map[Key]int, len(entries))
			for i, e := range entries {
				at[e.Key] = i
			}
		}
		if i, ok := at[key]; ok {
			entries[i].Value = v
			continue
		}
		if at != nil {
			at[key] = len(entries)
		}
		entries = append(entries, Entry{Key: key, Value: v})
	}
	if err := d.expect('}'); err != nil {
		return nil, err
	}
	return entries, nil
}

// containsKey tells whether key is among entries' keys (checked while no
// key repeated, which costs a map only for rows that do repeat).
func containsKey(entries []Entry, key Key) bool {
	for _, e := range entries {
		if e.Key == key {
			return true
		}
	}
	return false
}

func (d *decoder) key(array bool) (Key, error) {
	if d.i+1 >= len(d.s) {
		return Key{}, d.fail("unexpected end in key")
	}
	tag := d.s[d.i]
	d.i++
	if err := d.expect(':'); err != nil {
		return Key{}, err
	}
	switch tag {
	case 'i':
		n, err := d.phpInt(';')
		if err != nil {
			return Key{}, err
		}
		return Key{IsInt: true, Int: n}, nil
	case 's':
		t, err := d.lenString()
		if err != nil {
			return Key{}, err
		}
		if err := d.expect(';'); err != nil {
			return Key{}, err
		}
		if array {
			return StrKey(t), nil
		}
		return Key{Str: t}, nil
	}
	d.i -= 2
	return Key{}, d.fail("key is not an integer or string")
}

func (d *decoder) push(v Value) Value {
	if d.track {
		d.slots = append(d.slots, v)
	}
	return v
}

// reserve numbers a container before its elements, as PHP does.
func (d *decoder) reserve() int {
	if !d.track {
		return -1
	}
	d.slots = append(d.slots, Value{})
	return len(d.slots) - 1
}

// fill puts a finished container in its reserved place.
func (d *decoder) fill(slot int, v Value) {
	if slot >= 0 {
		d.slots[slot] = v
	}
}

func parseFloat(t string) (float64, error) {
	switch t {
	case "NAN":
		return math.NaN(), nil
	case "INF":
		return math.Inf(1), nil
	case "-INF":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(t, 64)
}

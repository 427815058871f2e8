// Package phpserial reads and writes PHP's serialize() format as WordPress
// stores it (maybe_serialize/maybe_unserialize), keeping the order of array
// keys. Objects are read as plain data: nothing is ever instantiated or
// executed. Corrupt input is an error, never a panic.
//
// References (R: and r:) stay references. A value read through one shares
// the referenced value's data (its Entries) instead of copying it, and
// remembers which reference it is, so that Serialize writes R:/r: back as PHP
// does: what PHP serialized reads and writes back byte for byte, and a row
// whose references nest (an array holding the same array twice, forty deep)
// costs what its bytes cost, not 2^40 copies. Walks that must expand the
// references (JSON) measure the expanded size first, each shared value once,
// and refuse what is larger than MaxJSON (see EncodeJSON).
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
	// Entries are an array's or object's elements in order. A value read
	// through a reference shares them with the value it refers to.
	Entries []Entry

	// ref is the PHP reference (R:) the value belongs to, obj the identity
	// of an object (r:); both are set only by Unserialize, on data holding
	// references. cyclic marks a reference to an array or object that was
	// still being read (a value inside itself): its data reads as null.
	ref, obj *cell
	cyclic   bool
}

// cell is the identity of one PHP reference set or one object. members
// counts a reference set's places below the top level, once read: PHP
// writes R: only for a reference held in two places or more.
type cell struct{ members int32 }

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
	var v Value
	d := &decoder{s: data, track: strings.Contains(data, "r:") || strings.Contains(data, "R:")}
	if err := d.value(0, &v); err != nil {
		return Value{}, err
	}
	if d.i != len(d.s) {
		return Value{}, d.fail("trailing bytes")
	}
	if d.refs {
		countMembers(v, map[sharedEntries]bool{})
	}
	return v, nil
}

// countMembers counts the places below v that hold each reference, once
// each: the places of entries that references share are the same places.
// A place overwritten by a repeated key, or inside a value that was, is no
// longer one.
func countMembers(v Value, seen map[sharedEntries]bool) {
	if len(v.Entries) == 0 {
		return
	}
	at := sharedEntries{at: &v.Entries[0], n: len(v.Entries)}
	if seen[at] {
		return
	}
	seen[at] = true
	for _, e := range v.Entries {
		if e.Value.ref != nil {
			e.Value.ref.members++
		}
		countMembers(e.Value, seen)
	}
}

// A decoder reads each value straight into its place (the top-level
// result or an entry of its array), and numbers the places as PHP numbers
// values for r:/R:, so that a reference marks the value it refers to where
// it is, and the values read through it share that value's data.
type decoder struct {
	s     string
	i     int
	track bool
	slots []*Value // the places of values in the order PHP numbers them
	refs  bool     // whether an R: was read
	// finished are arrays and objects as they were when finished, by
	// identity, once a reference to one still open was read.
	finished map[*cell]Value
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

// refUntil reads the number of an r: or R:, digits only as PHP reads it.
func (d *decoder) refUntil(c byte) (int64, error) {
	t, err := d.until(c)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || t == "" || t[0] < '0' || t[0] > '9' {
		return 0, d.fail("bad reference " + strconv.Quote(t))
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

// value reads one value into *dst.
func (d *decoder) value(depth int, dst *Value) error {
	if depth > MaxDepth {
		return d.fail("nested too deeply")
	}
	if d.i+1 >= len(d.s) {
		return d.fail("unexpected end")
	}
	tag := d.s[d.i]
	if tag == 'N' {
		d.i++
		if err := d.expect(';'); err != nil {
			return err
		}
		return d.put(dst, Value{Kind: Null})
	}
	d.i++
	if err := d.expect(':'); err != nil {
		return err
	}
	switch tag {
	case 'b':
		t, err := d.until(';')
		if err != nil {
			return err
		}
		if t != "0" && t != "1" {
			return d.fail("bad boolean")
		}
		return d.put(dst, Value{Kind: Bool, Bool: t == "1"})
	case 'i':
		n, err := d.phpInt(';')
		if err != nil {
			return err
		}
		return d.put(dst, Value{Kind: Int, Int: n})
	case 'd':
		t, err := d.until(';')
		if err != nil {
			return err
		}
		f, err := parseFloat(t)
		if err != nil {
			return d.fail("bad float " + strconv.Quote(t))
		}
		return d.put(dst, Value{Kind: Float, Float: f, FloatText: t})
	case 's':
		t, err := d.lenString()
		if err != nil {
			return err
		}
		if err := d.expect(';'); err != nil {
			return err
		}
		return d.put(dst, Value{Kind: String, Str: t})
	case 'E':
		t, err := d.lenString()
		if err != nil {
			return err
		}
		if err := d.expect(';'); err != nil {
			return err
		}
		if !strings.Contains(t, ":") {
			return d.fail("enum without case")
		}
		return d.put(dst, Value{Kind: Enum, Str: t, obj: d.identity()})
	case 'a':
		d.open(dst, false)
		entries, err := d.entries(depth, true)
		if err != nil {
			return err
		}
		d.close(dst, Value{Kind: Array, Entries: entries})
		return nil
	case 'O':
		class, err := d.lenString()
		if err != nil {
			return err
		}
		if err := d.expect(':'); err != nil {
			return err
		}
		d.open(dst, true)
		entries, err := d.entries(depth, false)
		if err != nil {
			return err
		}
		d.close(dst, Value{Kind: Object, Class: class, Entries: entries})
		return nil
	case 'C':
		return d.custom(dst)
	case 'r', 'R':
		return d.reference(tag, dst)
	}
	d.i -= 2
	return d.fail(fmt.Sprintf("unknown type %q", tag))
}

// custom reads a C: value (a class's own serialization) into *dst.
func (d *decoder) custom(dst *Value) error {
	class, err := d.lenString()
	if err != nil {
		return err
	}
	if err := d.expect(':'); err != nil {
		return err
	}
	n, err := d.intUntil(':')
	if err != nil {
		return err
	}
	if n < 0 || n > int64(len(d.s)-d.i) {
		return d.fail("payload length out of range")
	}
	if err := d.expect('{'); err != nil {
		return err
	}
	if d.i+int(n) > len(d.s) {
		return d.fail("payload runs past the end")
	}
	payload := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	if err := d.expect('}'); err != nil {
		return err
	}
	return d.put(dst, Value{Kind: Object, Class: class, Custom: true, Str: payload, obj: d.identity()})
}

// reference reads an r: or R: value into *dst.
func (d *decoder) reference(tag byte, dst *Value) error {
	at, err := d.refUntil(';')
	if err != nil {
		return err
	}
	// A value that refers to its own place is refused, as PHP does.
	if at < 1 || at > int64(len(d.slots)) || d.slots[at-1] == dst {
		return d.fail("reference to an unknown value")
	}
	p := d.slots[at-1]
	// What p holds: an array or object read while it was open is the
	// whole of it once it is finished.
	v := *p
	if v.cyclic {
		if d.finished == nil {
			d.finished = map[*cell]Value{} // see close
		}
		if whole, ok := d.finished[v.obj]; ok && v.obj != nil {
			v = whole
		} else if whole, ok := d.finished[v.ref]; ok && v.ref != nil {
			v = whole
		}
	}
	if tag == 'r' {
		// r: is the same object again (PHP refuses it for anything
		// else), a new value of its own, outside p's reference.
		if p.obj == nil {
			return d.fail("r: to a value that is not an object")
		}
		v.ref = nil
		return d.put(dst, v)
	}
	// R: makes p and dst one PHP reference; dst shares p's data.
	if p.ref == nil {
		p.ref = &cell{}
		d.refs = true
	}
	v.ref = p.ref
	*dst = v
	return nil
}

// put stores a value read whole and numbers its place.
func (d *decoder) put(dst *Value, v Value) error {
	*dst = v
	if d.track {
		d.slots = append(d.slots, dst)
	}
	return nil
}

// open numbers an array's or object's place before its elements, as PHP
// does; a reference to it from within reads as null (cyclic), or as the
// object itself when it is one.
func (d *decoder) open(dst *Value, object bool) {
	*dst = Value{cyclic: true}
	if d.track {
		if object {
			dst.obj = d.identity()
		}
		d.slots = append(d.slots, dst)
	}
}

// close stores the finished array or object, keeping what references to
// it made of its place while it was read.
func (d *decoder) close(dst *Value, v Value) {
	v.ref, v.obj = dst.ref, dst.obj
	*dst = v
	// Once a reference found an array or object open, each is kept
	// whole as it is finished, for a reference to that reference from
	// outside it (inside, it is null, or the data would hold itself).
	if d.finished != nil {
		if v.obj != nil {
			d.finished[v.obj] = v
		}
		if v.ref != nil {
			d.finished[v.ref] = v
		}
	}
}

// identity is a new object's identity, for r: to find it again.
func (d *decoder) identity() *cell {
	if !d.track {
		return nil
	}
	return &cell{}
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
	// At most n entries: the array never grows past its capacity, so each
	// value is read into a place that stays where it is.
	entries := make([]Entry, 0, n)
	var at map[Key]int // where each key is, once a key repeats
	for k := int64(0); k < n; k++ {
		key, err := d.key(array)
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
		i, repeated := at[key]
		if repeated {
			// The new value takes the old one's place, as in PHP: a
			// number that named the old value names the place, so now
			// the new value (or, while it is read, the value itself).
			entries[i].Value = Value{}
		} else {
			i = len(entries)
			if at != nil {
				at[key] = i
			}
			entries = append(entries, Entry{Key: key})
		}
		if err := d.value(depth+1, &entries[i].Value); err != nil {
			return nil, err
		}
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

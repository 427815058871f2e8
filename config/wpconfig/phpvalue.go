package wpconfig

import (
	"math"
	"strconv"
	"strings"
)

// value is a PHP value as the evaluator knows it, or unknown: what the
// file's code would compute only when run by PHP (a request's Host, a
// function the sidecar does not evaluate), with the reason.
type value struct {
	k   vkind
	s   string // a string; an unknown's reason
	n   int64
	f   float64
	b   bool
	arr *phpArray
	env *dotenvCall
	// from names the environment variable a value was read from, and where
	// that variable was set, for --check-config.
	from string
}

type vkind uint8

const (
	vNull vkind = iota
	vBool
	vInt
	vFloat
	vString
	vArray
	vObject // an array cast to an object: properties
	vDotenv // a Dotenv instance, not yet loaded
	vUnknown
)

// phpArray is an ordered map; integer keys are kept as their decimal text.
type phpArray struct {
	keys []string
	vals []value
	// index finds a key of a long array without a scan, so that building
	// or reading one costs what its length does, not its square.
	index map[string]int
	// size counts the elements, the nested arrays' too (a key set again
	// is counted again); depth is 1 for an array of scalars, one more for
	// each level of arrays inside. Both are kept as elements are set, so
	// that bounding them walks nothing.
	size, depth int
}

// indexFrom is the length from which an array keeps an index.
const indexFrom = 16

func (a *phpArray) find(key string) int {
	if a.index != nil {
		if i, ok := a.index[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range a.keys {
		if k == key {
			return i
		}
	}
	return -1
}

func (a *phpArray) get(key string) (value, bool) {
	if i := a.find(key); i >= 0 {
		return a.vals[i], true
	}
	return value{}, false
}

func (a *phpArray) set(key string, v value) {
	a.size++
	d := 1
	if v.k == vArray || v.k == vObject {
		a.size += v.arr.size
		d += v.arr.depth
	}
	a.depth = max(a.depth, d)
	if i := a.find(key); i >= 0 {
		a.vals[i] = v
		return
	}
	a.keys = append(a.keys, key)
	a.vals = append(a.vals, v)
	switch {
	case a.index != nil:
		a.index[key] = len(a.keys) - 1
	case len(a.keys) >= indexFrom:
		a.index = make(map[string]int, 2*len(a.keys))
		for i, k := range a.keys {
			a.index[k] = i
		}
	}
}

func (a *phpArray) remove(key string) {
	i := a.find(key)
	if i < 0 {
		return
	}
	a.keys = append(a.keys[:i], a.keys[i+1:]...)
	a.vals = append(a.vals[:i], a.vals[i+1:]...)
	if a.index != nil {
		delete(a.index, key)
		for j := i; j < len(a.keys); j++ {
			a.index[a.keys[j]] = j
		}
	}
}

// newArray is an array of one element, as a cast makes it.
func newArray(key string, v value) *phpArray {
	a := &phpArray{}
	a.set(key, v)
	return a
}

func str(s string) value            { return value{k: vString, s: s} }
func boolean(b bool) value          { return value{k: vBool, b: b} }
func integer(n int64) value         { return value{k: vInt, n: n} }
func float(f float64) value         { return value{k: vFloat, f: f} }
func unknownValue(why string) value { return value{k: vUnknown, s: why} }

func (v value) known() bool { return v.k != vUnknown }

// String is PHP's string conversion, as define() then echo print it.
func (v value) String() string {
	switch v.k {
	case vBool:
		if v.b {
			return "1"
		}
		return ""
	case vInt:
		return strconv.FormatInt(v.n, 10)
	case vFloat:
		return phpFloat(v.f)
	case vString:
		return v.s
	case vArray:
		return "Array"
	}
	return ""
}

func phpFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	case math.IsNaN(f):
		return "NAN"
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'G', 14, 64)
}

// truthy is PHP's boolean conversion.
func (v value) truthy() bool {
	switch v.k {
	case vBool:
		return v.b
	case vInt:
		return v.n != 0
	case vFloat:
		return v.f != 0
	case vString:
		return v.s != "" && v.s != "0"
	case vArray:
		return len(v.arr.keys) > 0
	case vObject, vDotenv:
		return true
	}
	return false
}

// numeric reads a value as a number, as PHP 8 does for a numeric string.
func (v value) numeric() (float64, bool) {
	switch v.k {
	case vInt:
		return float64(v.n), true
	case vFloat:
		return v.f, true
	case vBool:
		if v.b {
			return 1, true
		}
		return 0, true
	case vNull:
		return 0, true
	case vString:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.s), 64)
		return f, err == nil && strings.TrimSpace(v.s) != ""
	}
	return 0, false
}

// looseEqual is PHP 8's ==, for the kinds configuration compares.
func looseEqual(a, b value) bool {
	if a.k == vBool || b.k == vBool || (a.k == vNull && b.k != vString) || (b.k == vNull && a.k != vString) {
		return a.truthy() == b.truthy()
	}
	if a.k == vNull || b.k == vNull { // null == "": both are ""
		return a.String() == b.String()
	}
	if a.k == vArray || b.k == vArray || a.k == vObject || b.k == vObject {
		return strictEqual(a, b)
	}
	an, aok := a.numeric()
	bn, bok := b.numeric()
	if aok && bok {
		return an == bn
	}
	return a.String() == b.String()
}

// strictEqual is ===.
func strictEqual(a, b value) bool {
	if a.k != b.k {
		return false
	}
	switch a.k {
	case vNull:
		return true
	case vBool:
		return a.b == b.b
	case vInt:
		return a.n == b.n
	case vFloat:
		return a.f == b.f
	case vString:
		return a.s == b.s
	case vArray, vObject:
		if len(a.arr.keys) != len(b.arr.keys) {
			return false
		}
		for i, k := range a.arr.keys {
			w, ok := b.arr.get(k)
			if !ok || !strictEqual(a.arr.vals[i], w) {
				return false
			}
		}
		return true
	}
	return false
}

// key is a value used as an array key: integers and integer strings alike.
func (v value) key() string {
	switch v.k {
	case vBool:
		if v.b {
			return "1"
		}
		return "0"
	case vFloat:
		return strconv.FormatInt(int64(v.f), 10)
	}
	return v.String()
}

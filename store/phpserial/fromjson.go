package phpserial

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrJSON is wrapped by every error of FromJSON.
var ErrJSON = errors.New("phpserial: invalid JSON")

// FromJSON reads JSON as PHP's json_decode($data, true) does: objects
// become arrays with their keys in order (a key that is a canonical integer
// becomes an integer key; a repeated key keeps its first place and takes its
// last value), integer literals become int (float when they do not fit in
// 64 bits), other numbers float, lists arrays with keys 0..n-1. Unlike PHP
// it refuses numbers too large for a float, which json_encode could not
// write back. Nesting is limited to MaxDepth.
func FromJSON(data []byte) (Value, error) {
	if !utf8.Valid(data) {
		return Value{}, fmt.Errorf("%w: not valid UTF-8", ErrJSON)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := fromJSON(dec, 0)
	if err != nil {
		return Value{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return Value{}, fmt.Errorf("%w: data after the value", ErrJSON)
	}
	return v, nil
}

func fromJSON(dec *json.Decoder, depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, fmt.Errorf("%w: nested deeper than %d", ErrJSON, MaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return Value{}, fmt.Errorf("%w: %v", ErrJSON, err)
	}
	switch t := tok.(type) {
	case nil:
		return Value{Kind: Null}, nil
	case bool:
		return Value{Kind: Bool, Bool: t}, nil
	case string:
		return Value{Kind: String, Str: t}, nil
	case json.Number:
		return jsonNumber(string(t))
	case json.Delim:
		v := Value{Kind: Array}
		if t == '[' {
			for i := int64(0); dec.More(); i++ {
				e, err := fromJSON(dec, depth+1)
				if err != nil {
					return Value{}, err
				}
				v.Entries = append(v.Entries, Entry{Key: IntKey(i), Value: e})
			}
			return v, closing(dec)
		}
		index := map[Key]int{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return Value{}, fmt.Errorf("%w: %v", ErrJSON, err)
			}
			k := StrKey(kt.(string))
			e, err := fromJSON(dec, depth+1)
			if err != nil {
				return Value{}, err
			}
			if i, seen := index[k]; seen {
				v.Entries[i].Value = e
				continue
			}
			index[k] = len(v.Entries)
			v.Entries = append(v.Entries, Entry{Key: k, Value: e})
		}
		return v, closing(dec)
	}
	return Value{}, fmt.Errorf("%w: unexpected %v", ErrJSON, tok)
}

// closing reads the ] or } that dec.More said comes next, or fails at the
// end of the input.
func closing(dec *json.Decoder) error {
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%w: %v", ErrJSON, err)
	}
	return nil
}

func jsonNumber(s string) (Value, error) {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return Value{Kind: Int, Int: n}, nil
		}
	}
	// Beyond a float's range PHP's json_decode gives INF (or -INF), and
	// 0.0 below it; what to make of such a value is the caller's business.
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return Value{}, fmt.Errorf("%w: number %s: %v", ErrJSON, s, err)
	}
	return Value{Kind: Float, Float: f}, nil
}

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
// 64 bits), other numbers float, lists arrays with keys 0..n-1. Nesting is
// limited to MaxDepth.
//
// A number beyond a float's range is what PHP makes of it: 1e700 (or 400
// nines) is INF, -1e700 -INF, 1e-700 0; Serialize writes d:INF; as PHP's
// serialize(json_decode(...)) does. It is not refused here: json_encode
// refuses INF (a REST route answers rest_encode_error) and JSON writes it
// as null, so callers that store numbers refuse non-finite ones themselves.
func FromJSON(data []byte) (Value, error) { return readJSON(data, false) }

// FromJSONStrict reads JSON keeping it as sent, for data stored as JSON
// rather than as PHP values: objects stay objects (stdClass, so {} and []
// differ and no key becomes an integer), a key given twice is an error, and
// numbers keep their text (JSONText) for JSON to write back.
func FromJSONStrict(data []byte) (Value, error) { return readJSON(data, true) }

func readJSON(data []byte, strict bool) (Value, error) {
	if !utf8.Valid(data) {
		return Value{}, fmt.Errorf("%w: not valid UTF-8", ErrJSON)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := fromJSON(dec, 0, strict)
	if err != nil {
		return Value{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return Value{}, fmt.Errorf("%w: data after the value", ErrJSON)
	}
	return v, nil
}

func fromJSON(dec *json.Decoder, depth int, strict bool) (Value, error) {
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
		v, err := jsonNumber(string(t))
		if strict {
			v.JSONText = string(t)
		}
		return v, err
	case json.Delim:
		v := Value{Kind: Array}
		if t == '[' {
			for i := int64(0); dec.More(); i++ {
				e, err := fromJSON(dec, depth+1, strict)
				if err != nil {
					return Value{}, err
				}
				v.Entries = append(v.Entries, Entry{Key: IntKey(i), Value: e})
			}
			return v, closing(dec)
		}
		if strict {
			v.Kind, v.Class = Object, "stdClass"
		}
		index := map[Key]int{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return Value{}, fmt.Errorf("%w: %v", ErrJSON, err)
			}
			k := StrKey(kt.(string))
			if strict {
				k = Key{Str: kt.(string)}
			}
			e, err := fromJSON(dec, depth+1, strict)
			if err != nil {
				return Value{}, err
			}
			if i, seen := index[k]; seen {
				if strict {
					return Value{}, fmt.Errorf("%w: duplicate key %q", ErrJSON, k.Str)
				}
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

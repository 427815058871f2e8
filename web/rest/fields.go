package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// fields is the tree _fields names: each member either whole (nil) or
// only the nested members it names.
type fields map[string]fields

// fieldTree builds the tree as rest_filter_response_fields does: "a.b"
// keeps b of a; a member named whole drops the nested names given for it,
// before or after.
func fieldTree(list []string) fields {
	root := fields{}
	for _, f := range list {
		parts := strings.Split(strings.TrimSpace(f), ".")
		ref := root
		whole := false
		for _, p := range parts[:len(parts)-1] {
			sub, ok := ref[p]
			if ok && sub == nil {
				whole = true // the parent is kept whole already
				break
			}
			if !ok {
				sub = fields{}
				ref[p] = sub
			}
			ref = sub
		}
		if !whole {
			ref[parts[len(parts)-1]] = nil
		}
	}
	return root
}

// filterFields keeps of a JSON answer what t names, as WordPress's
// _fields does: on each object of a list, or on the object itself; nested
// members where t names them. Bytes of what is kept are not changed. What
// PHP would make of an emptied array is kept too: [] for an object with
// nothing left, an object for a list with gaps.
func filterFields(b []byte, t fields) ([]byte, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return b, nil
	}
	var out bytes.Buffer
	switch b[0] {
	case '[':
		elems, err := splitArray(b)
		if err != nil {
			return nil, err
		}
		out.WriteByte('[')
		for i, e := range elems {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := filterValue(&out, e, t); err != nil {
				return nil, err
			}
		}
		out.WriteByte(']')
	case '{':
		if err := filterValue(&out, b, t); err != nil {
			return nil, err
		}
	default:
		return b, nil
	}
	return out.Bytes(), nil
}

// filterValue writes v with only the members (or list indexes) t names.
func filterValue(out *bytes.Buffer, v []byte, t fields) error {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) > 0 && v[0] == '{':
		members, err := splitObject(v)
		if err != nil {
			return err
		}
		var kept []member
		for _, m := range members {
			if _, ok := t[m.key]; ok {
				kept = append(kept, m)
			}
		}
		if len(kept) == 0 {
			out.WriteString("[]")
			return nil
		}
		out.WriteByte('{')
		for i, m := range kept {
			if i > 0 {
				out.WriteByte(',')
			}
			out.Write(m.rawKey)
			out.WriteByte(':')
			if err := keep(out, m.val, t[m.key]); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	case len(v) > 0 && v[0] == '[':
		elems, err := splitArray(v)
		if err != nil {
			return err
		}
		var idx []int
		for i := range elems {
			if _, ok := t[strconv.Itoa(i)]; ok {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			out.WriteString("[]")
			return nil
		}
		asList := idx[len(idx)-1] == len(idx)-1 // 0..n-1: still a list in PHP
		out.WriteByte("{["[b2i(asList)])
		for n, i := range idx {
			if n > 0 {
				out.WriteByte(',')
			}
			if !asList {
				out.WriteString(`"` + strconv.Itoa(i) + `":`)
			}
			if err := keep(out, elems[i], t[strconv.Itoa(i)]); err != nil {
				return err
			}
		}
		out.WriteByte("}]"[b2i(asList)])
	default:
		out.Write(v)
	}
	return nil
}

// keep writes a kept member: whole, or filtered further when t names
// members of it and it has members.
func keep(out *bytes.Buffer, v []byte, t fields) error {
	v = bytes.TrimSpace(v)
	if t == nil || len(v) == 0 || (v[0] != '{' && v[0] != '[') {
		out.Write(v)
		return nil
	}
	return filterValue(out, v, t)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

type member struct {
	rawKey []byte
	key    string
	val    []byte
}

// splitObject reads an object's members in order, keys as sent.
func splitObject(b []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []member
	for dec.More() {
		start := int(dec.InputOffset())
		for start < len(b) && (b[start] == ',' || b[start] == ' ' || b[start] == '\n' || b[start] == '\t' || b[start] == '\r') {
			start++
		}
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		rawKey := b[start:dec.InputOffset()]
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		out = append(out, member{rawKey: rawKey, key: key, val: val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return out, nil
}

// splitArray reads an array's elements in order.
func splitArray(b []byte) ([]json.RawMessage, error) {
	var out []json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

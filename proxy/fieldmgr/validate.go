package fieldmgr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wpsidecar/wpsidecar/proxy/wpjson"
)

// node is a JSON value that keeps the order of object keys, which the
// contract makes part of the data (the order of config.fields is the order
// of fields in the editor).
type node struct {
	kind    byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	members []member
	elems   []node
	str     string
	num     json.Number
	b       bool
}

type member struct {
	key string
	val node
}

const maxDepth = 64

// parseJSON reads exactly one JSON value.
func parseJSON(data []byte) (node, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	n, err := parseNode(d, 0)
	if err != nil {
		return node{}, err
	}
	if _, err := d.Token(); err != io.EOF {
		return node{}, errors.New("trailing data after the JSON value")
	}
	return n, nil
}

func parseNode(d *json.Decoder, depth int) (node, error) {
	if depth > maxDepth {
		return node{}, errors.New("nested too deeply")
	}
	t, err := d.Token()
	if err != nil {
		return node{}, err
	}
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := node{kind: 'o'}
			seen := map[string]bool{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return node{}, err
				}
				k, _ := kt.(string)
				if seen[k] {
					return node{}, fmt.Errorf("duplicate key %q", k)
				}
				seen[k] = true
				val, err := parseNode(d, depth+1)
				if err != nil {
					return node{}, err
				}
				n.members = append(n.members, member{k, val})
			}
			_, err := d.Token() // }
			return n, err
		case '[':
			n := node{kind: 'a'}
			for d.More() {
				val, err := parseNode(d, depth+1)
				if err != nil {
					return node{}, err
				}
				n.elems = append(n.elems, val)
			}
			_, err := d.Token() // ]
			return n, err
		}
	case string:
		return node{kind: 's', str: v}, nil
	case json.Number:
		return node{kind: 'n', num: v}, nil
	case bool:
		return node{kind: 'b', b: v}, nil
	case nil:
		return node{kind: 'z'}, nil
	}
	return node{}, fmt.Errorf("unexpected %v", t)
}

// beyondFloat finds a number PHP's json_decode would read as INF: stored,
// it would make every later JSON answer of the group fail
// (rest_encode_error). It names the first one's path.
func beyondFloat(n node, path string) (string, bool) {
	switch n.kind {
	case 'n':
		f, _ := strconv.ParseFloat(n.num.String(), 64)
		return path, math.IsInf(f, 0)
	case 'o':
		for _, m := range n.members {
			p := m.key
			if path != "" {
				p = path + "." + m.key
			}
			if p, bad := beyondFloat(m.val, p); bad {
				return p, true
			}
		}
	case 'a':
		for i, e := range n.elems {
			if p, bad := beyondFloat(e, fmt.Sprintf("%s[%d]", path, i)); bad {
				return p, true
			}
		}
	}
	return "", false
}

func (n node) get(key string) (node, bool) {
	for _, m := range n.members {
		if m.key == key {
			return m.val, true
		}
	}
	return node{}, false
}

// encode writes n as compact JSON, keys in order, <>& unescaped.
func (n node) encode(b *bytes.Buffer) {
	switch n.kind {
	case 'o':
		b.WriteByte('{')
		for i, m := range n.members {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeString(b, m.key)
			b.WriteByte(':')
			m.val.encode(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.encode(b)
		}
		b.WriteByte(']')
	case 's':
		encodeString(b, n.str)
	case 'n':
		b.WriteString(n.num.String())
	case 'b':
		b.WriteString(strconv.FormatBool(n.b))
	default:
		b.WriteString("null")
	}
}

func encodeString(b *bytes.Buffer, s string) {
	plain := utf8.ValidString(s)
	for i := 0; plain && i < len(s); i++ {
		c := s[i]
		plain = c >= 0x20 && c != '"' && c != '\\' && c != 0xe2 // 0xe2 starts U+2028/U+2029, which encoding/json escapes
	}
	if plain {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Truncate(b.Len() - 1) // the encoder's newline
}

func (n node) json() string {
	var b bytes.Buffer
	n.encode(&b)
	return b.String()
}

// Patterns of the contract (docs/api.md §2).
var (
	groupKeyRe  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,191}$`)
	postTypeRe  = regexp.MustCompile(`^[a-z0-9_-]{1,20}$`)
	taxonomyRe  = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)
	fieldNameRe = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)
)

var (
	configTypes = []string{"post", "taxonomy", "user", "options_page"}
	positions   = []string{"normal", "side", "advanced"}
)

// defaultConfig is the config of a group created without one.
const defaultConfig = `{"type":"post","post_type":"post","position":"normal","fields":{}}`

// invalid is a client mistake, answered 400 with its message.
func invalid(format string, a ...any) error {
	return &wpjson.Error{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, a...), Bare: true}
}

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// validateConfig checks a config object and returns it as compact JSON to
// store, keys in the order sent, an empty fields list as {}.
func validateConfig(n node) (string, error) {
	if n.kind != 'o' {
		return "", invalid("config: must be an object")
	}
	typ, ok := n.get("type")
	if !ok {
		return "", invalid("config.type: required")
	}
	if typ.kind != 's' || !oneOf(typ.str, configTypes) {
		return "", invalid("config.type: must be one of %s", strings.Join(configTypes, ", "))
	}
	switch typ.str {
	case "post":
		pt, ok := n.get("post_type")
		if !ok {
			return "", invalid("config.post_type: required when type is post")
		}
		if pt.kind != 's' || !postTypeRe.MatchString(pt.str) {
			return "", invalid("config.post_type: must be 1-20 characters of a-z, 0-9, _ and -")
		}
	case "taxonomy":
		tx, ok := n.get("taxonomy")
		if !ok {
			return "", invalid("config.taxonomy: required when type is taxonomy")
		}
		if tx.kind != 's' || !taxonomyRe.MatchString(tx.str) {
			return "", invalid("config.taxonomy: must be 1-32 characters of a-z, 0-9, _ and -")
		}
	}
	if pos, ok := n.get("position"); ok && (pos.kind != 's' || !oneOf(pos.str, positions)) {
		return "", invalid("config.position: must be one of %s", strings.Join(positions, ", "))
	}
	for i, m := range n.members {
		if m.key != "fields" {
			continue
		}
		if m.val.kind == 'a' && len(m.val.elems) == 0 {
			n.members[i].val = node{kind: 'o'} // PHP's empty array: none
			continue
		}
		if m.val.kind != 'o' {
			return "", invalid("config.fields: must be an object")
		}
		for _, f := range m.val.members {
			if err := validateField(f.key, f.val); err != nil {
				return "", err
			}
		}
	}
	return n.json(), nil
}

func validateField(name string, def node) error {
	path := "config.fields." + name
	if !fieldNameRe.MatchString(name) {
		return invalid("config.fields.%s: field names are 1-64 characters of a-z, 0-9 and _", strconv.Quote(name))
	}
	if def.kind != 'o' {
		return invalid("%s: must be an object", path)
	}
	typ, ok := def.get("type")
	if !ok {
		return invalid("%s.type: required", path)
	}
	if typ.kind != 's' {
		return invalid("%s.type: must be a string", path)
	}
	ft, ok := typeByName[typ.str]
	if !ok {
		return invalid("%s.type: unknown field type %q", path, typ.str)
	}
	if label, ok := def.get("label"); !ok || label.kind != 's' || strings.TrimSpace(label.str) == "" {
		return invalid("%s.label: must be a non-empty string", path)
	}
	for _, m := range def.members {
		if m.key == "type" || m.key == "label" {
			continue
		}
		var s *setting
		for i := range ft.settings {
			if ft.settings[i].name == m.key {
				s = &ft.settings[i]
			}
		}
		if s == nil {
			return invalid("%s.%s: not a setting of field type %q", path, m.key, ft.name)
		}
		if err := checkType(m.val, *s); err != nil {
			return invalid("%s.%s: %v", path, m.key, err)
		}
	}
	return nil
}

func checkType(v node, s setting) error {
	ok := false
	switch s.typ {
	case "string":
		ok = v.kind == 's'
	case "boolean":
		ok = v.kind == 'b'
	case "number":
		ok = v.kind == 'n'
	case "integer":
		ok = v.kind == 'n' && !strings.ContainsAny(v.num.String(), ".eE")
	case "object":
		ok = v.kind == 'o' || (v.kind == 'a' && len(v.elems) == 0)
	case "array":
		ok = v.kind == 'a'
	}
	if !ok {
		article := "a"
		if s.typ == "integer" || s.typ == "object" || s.typ == "array" {
			article = "an"
		}
		return fmt.Errorf("must be %s %s", article, s.typ)
	}
	if s.enum != nil && !oneOf(v.str, s.enum) {
		return fmt.Errorf("must be one of %s", strings.Join(s.enum, ", "))
	}
	return nil
}

// validTitle: a non-empty string of at most 255 characters.
func validTitle(n node) (string, error) {
	if n.kind != 's' {
		return "", invalid("title: must be a string")
	}
	title := n.str
	if strings.TrimSpace(title) == "" {
		return "", invalid("title: must not be empty")
	}
	if utf8.RuneCountInString(title) > 255 {
		return "", invalid("title: at most 255 characters")
	}
	return title, nil
}

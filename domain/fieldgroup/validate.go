package fieldgroup

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// node is a JSON value as the client sent it: object keys in order, {}
// and [] told apart, numbers' text kept — phpserial's order-keeping model,
// read strictly (a key given twice is refused).
type node = phpserial.Value

// ParseJSON reads JSON as the namespace reads a body: strictly (a key
// given twice is refused), object keys in order, {} and [] told apart.
func ParseJSON(data []byte) (phpserial.Value, error) {
	n, err := phpserial.FromJSONStrict(data)
	if err != nil {
		return node{}, errors.New(strings.TrimPrefix(err.Error(), phpserial.ErrJSON.Error()+": "))
	}
	return n, nil
}

func isObject(n node) bool { return n.Kind == phpserial.Object }

// jsonOf is n as compact JSON, as stored and answered.
func jsonOf(n node) string { return string(phpserial.JSON(n)) }

// BeyondFloat finds a number PHP's json_decode would read as INF: stored,
// it would make every later JSON answer of the group fail
// (rest_encode_error). It names the first one's path below path.
func BeyondFloat(n phpserial.Value, path string) (string, bool) {
	switch {
	case n.Kind == phpserial.Float:
		return path, math.IsInf(n.Float, 0)
	case isObject(n):
		for _, e := range n.Entries {
			p := e.Key.String()
			if path != "" {
				p = path + "." + p
			}
			if p, bad := BeyondFloat(e.Value, p); bad {
				return p, true
			}
		}
	case n.Kind == phpserial.Array:
		for i, e := range n.Entries {
			if p, bad := BeyondFloat(e.Value, fmt.Sprintf("%s[%d]", path, i)); bad {
				return p, true
			}
		}
	}
	return "", false
}

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

// DefaultConfig is the config of a group created without one.
const DefaultConfig = `{"type":"post","post_type":"post","position":"normal","fields":{}}`

// invalid is a value the rules refuse; fieldmgr/v1 answers it 400 with
// its message.
func invalid(format string, a ...any) error {
	return &wpsidecar.Invalid{Message: fmt.Sprintf(format, a...)}
}

// ValidateConfig checks a config object and returns it as compact JSON to
// store, keys in the order sent, an empty fields list as {}. An error is
// a *wpsidecar.Invalid naming what is wrong.
func ValidateConfig(n phpserial.Value) (string, error) {
	if !isObject(n) {
		return "", invalid("config: must be an object")
	}
	typ, ok := n.Get("type")
	if !ok {
		return "", invalid("config.type: required")
	}
	if typ.Kind != phpserial.String || !slices.Contains(configTypes, typ.Str) {
		return "", invalid("config.type: must be one of %s", strings.Join(configTypes, ", "))
	}
	switch typ.Str {
	case "post":
		pt, ok := n.Get("post_type")
		if !ok {
			return "", invalid("config.post_type: required when type is post")
		}
		if pt.Kind != phpserial.String || !postTypeRe.MatchString(pt.Str) {
			return "", invalid("config.post_type: must be 1-20 characters of a-z, 0-9, _ and -")
		}
	case "taxonomy":
		tx, ok := n.Get("taxonomy")
		if !ok {
			return "", invalid("config.taxonomy: required when type is taxonomy")
		}
		if tx.Kind != phpserial.String || !taxonomyRe.MatchString(tx.Str) {
			return "", invalid("config.taxonomy: must be 1-32 characters of a-z, 0-9, _ and -")
		}
	}
	if pos, ok := n.Get("position"); ok && (pos.Kind != phpserial.String || !slices.Contains(positions, pos.Str)) {
		return "", invalid("config.position: must be one of %s", strings.Join(positions, ", "))
	}
	for i, m := range n.Entries {
		if m.Key.String() != "fields" {
			continue
		}
		if m.Value.Kind == phpserial.Array && len(m.Value.Entries) == 0 {
			n.Entries[i].Value = node{Kind: phpserial.Object, Class: "stdClass"} // PHP's empty array: none
			continue
		}
		if !isObject(m.Value) {
			return "", invalid("config.fields: must be an object")
		}
		for _, f := range m.Value.Entries {
			if err := validateField(f.Key.String(), f.Value); err != nil {
				return "", err
			}
		}
	}
	return jsonOf(n), nil
}

func validateField(name string, def node) error {
	path := "config.fields." + name
	if !fieldNameRe.MatchString(name) {
		return invalid("config.fields.%s: field names are 1-64 characters of a-z, 0-9 and _", strconv.Quote(name))
	}
	if !isObject(def) {
		return invalid("%s: must be an object", path)
	}
	typ, ok := def.Get("type")
	if !ok {
		return invalid("%s.type: required", path)
	}
	if typ.Kind != phpserial.String {
		return invalid("%s.type: must be a string", path)
	}
	ft, ok := typeByName[typ.Str]
	if !ok {
		return invalid("%s.type: unknown field type %q", path, typ.Str)
	}
	if label, ok := def.Get("label"); !ok || label.Kind != phpserial.String || strings.TrimSpace(label.Str) == "" {
		return invalid("%s.label: must be a non-empty string", path)
	}
	for _, m := range def.Entries {
		if k := m.Key.String(); k == "type" || k == "label" {
			continue
		}
		var s *setting
		for i := range ft.settings {
			if ft.settings[i].name == m.Key.String() {
				s = &ft.settings[i]
			}
		}
		if s == nil {
			return invalid("%s.%s: not a setting of field type %q", path, m.Key.String(), ft.name)
		}
		if err := checkType(m.Value, *s); err != nil {
			return invalid("%s.%s: %v", path, m.Key.String(), err)
		}
	}
	return nil
}

func checkType(v node, s setting) error {
	ok := false
	switch s.typ {
	case "string":
		ok = v.Kind == phpserial.String
	case "boolean":
		ok = v.Kind == phpserial.Bool
	case "number":
		ok = v.Kind == phpserial.Int || v.Kind == phpserial.Float
	case "integer":
		ok = v.Kind == phpserial.Int && !strings.ContainsAny(v.JSONText, ".eE")
	case "object":
		ok = isObject(v) || (v.Kind == phpserial.Array && len(v.Entries) == 0)
	case "array":
		ok = v.Kind == phpserial.Array
	}
	if !ok {
		article := "a"
		if s.typ == "integer" || s.typ == "object" || s.typ == "array" {
			article = "an"
		}
		return fmt.Errorf("must be %s %s", article, s.typ)
	}
	if s.enum != nil && !slices.Contains(s.enum, v.Str) {
		return fmt.Errorf("must be one of %s", strings.Join(s.enum, ", "))
	}
	return nil
}

// ValidateTitle checks a title, a non-empty string of at most 255
// characters, and gives it. An error is a *wpsidecar.Invalid.
func ValidateTitle(n phpserial.Value) (string, error) {
	if n.Kind != phpserial.String {
		return "", invalid("title: must be a string")
	}
	title := n.Str
	if strings.TrimSpace(title) == "" {
		return "", invalid("title: must not be empty")
	}
	if utf8.RuneCountInString(title) > 255 {
		return "", invalid("title: at most 255 characters")
	}
	return title, nil
}

// ValidateKey checks a group's key: 1-191 characters of A-Z, a-z, 0-9, _
// and -. An error is a *wpsidecar.Invalid.
func ValidateKey(key string) error {
	if !groupKeyRe.MatchString(key) {
		return invalid("group_key: required, 1-191 characters of A-Z, a-z, 0-9, _ and -")
	}
	return nil
}

// Validate checks a group as POST /field-groups checks one — its key, its
// title, its config (JSON; nil: not checked) — and gives the config as it
// would be stored. An error is a *wpsidecar.Invalid whose message names
// what is wrong.
func Validate(key, title string, config []byte) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	if _, err := ValidateTitle(node{Kind: phpserial.String, Str: title}); err != nil {
		return "", err
	}
	if config == nil {
		return "", nil
	}
	n, err := ParseJSON(config)
	if err != nil {
		return "", invalid("config: %v", err)
	}
	return ValidateConfig(n)
}

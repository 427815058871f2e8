package themeoption

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// fieldTypes is the one table of field types: each checks a value as
// json_decode($body, true) made it, and says what is wrong in words a
// client can act on ("" when the value fits).
var fieldTypes = map[string]func(f *Field, v phpserial.Value) string{
	"color": checkColor,
	"switch": func(_ *Field, v phpserial.Value) string {
		return want(v.Kind == phpserial.Bool, "must be true or false")
	},
	"select":     checkChoice,
	"radio":      checkChoice,
	"button_set": checkChoice,
	"text":       checkString,
	"textarea":   checkString,
	"editor":     checkString,
	"number": func(_ *Field, v phpserial.Value) string {
		// json_decode reads 1e400 as INF, which no PHP code can store or
		// encode again as JSON.
		return want(v.Kind == phpserial.Int || v.Kind == phpserial.Float && !math.IsInf(v.Float, 0) && !math.IsNaN(v.Float), "must be a number")
	},
	"typography": checkTypography,
	"media":      func(_ *Field, v phpserial.Value) string { return checkObject(v, mediaShape, "an image object") },
	"gallery": func(_ *Field, v phpserial.Value) string {
		return checkList(v, func(e phpserial.Value) string { return checkObject(e, galleryShape, "an image object") })
	},
	"social": func(_ *Field, v phpserial.Value) string {
		return checkList(v, func(e phpserial.Value) string { return checkObject(e, socialShape, "a {platform, url} object") })
	},
}

// fieldTypeNames lists fieldTypes for error messages, in a fixed order.
var fieldTypeNames = []string{"color", "switch", "select", "radio", "button_set", "text", "textarea", "editor", "number", "typography", "media", "gallery", "social"}

// choiceTypes take one of their options' keys.
var choiceTypes = map[string]bool{"select": true, "radio": true, "button_set": true}

// check says what is wrong with v as a value of f ("" when nothing).
func (f *Field) check(v phpserial.Value) string { return fieldTypes[f.Type](f, v) }

func want(ok bool, msg string) string {
	if ok {
		return ""
	}
	return msg
}

var colorRe = regexp.MustCompile(`^(#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8}))?$`)

func checkColor(_ *Field, v phpserial.Value) string {
	return want(v.Kind == phpserial.String && colorRe.MatchString(v.Str), `must be a hex color (#rgb, #rrggbb or #rrggbbaa) or ""`)
}

func checkString(_ *Field, v phpserial.Value) string {
	return want(v.Kind == phpserial.String, "must be a string")
}

func checkChoice(f *Field, v phpserial.Value) string {
	return want(v.Kind == phpserial.String && f.Choices[v.Str], "must be one of the field's options")
}

// member is one key of an object-shaped value.
type member struct {
	name     string
	kind     string // "int", "string", "numeric" (a numeric string or ""), "strings" (a list of strings)
	required bool
}

var (
	mediaShape   = []member{{"id", "int", true}, {"url", "string", true}, {"width", "int", false}, {"height", "int", false}, {"alt", "string", false}, {"title", "string", false}}
	galleryShape = []member{{"id", "int", true}, {"url", "string", true}, {"alt", "string", false}}
	socialShape  = []member{{"platform", "string", true}, {"url", "string", true}}
	typoShape    = []member{
		{"font-family", "string", false}, {"font-weight", "string", false}, {"font-size", "numeric", false},
		{"line-height", "numeric", false}, {"letter-spacing", "numeric", false}, {"text-transform", "string", false},
		{"font-style", "string", false}, {"subsets", "strings", false},
	}
	numericRe = regexp.MustCompile(`^(-?([0-9]+(\.[0-9]*)?|\.[0-9]+))?$`)
)

func checkTypography(_ *Field, v phpserial.Value) string {
	return checkObject(v, typoShape, "a typography object")
}

// checkObject checks a JSON object against a shape: no other keys, the
// required ones present, each of its kind.
func checkObject(v phpserial.Value, shape []member, what string) string {
	if v.Kind != phpserial.Array || (len(v.Entries) > 0 && v.IsList()) {
		return "must be " + what
	}
	seen := map[string]bool{}
	for _, e := range v.Entries {
		k := e.Key.String()
		i := slices.IndexFunc(shape, func(m member) bool { return m.name == k })
		if i < 0 {
			return "must be " + what + ": unknown key " + strconv.Quote(k)
		}
		m := shape[i]
		seen[k] = true
		var good bool
		switch m.kind {
		case "int":
			good = e.Value.Kind == phpserial.Int
		case "string":
			good = e.Value.Kind == phpserial.String
		case "numeric":
			good = e.Value.Kind == phpserial.String && numericRe.MatchString(e.Value.Str)
		case "strings":
			good = checkList(e.Value, func(s phpserial.Value) string { return checkString(nil, s) }) == ""
		}
		if !good {
			return "must be " + what + ": " + strconv.Quote(k) + " must be " + kindWords[m.kind]
		}
	}
	for _, m := range shape {
		if m.required && !seen[m.name] {
			return "must be " + what + ": " + strconv.Quote(m.name) + " is missing"
		}
	}
	return ""
}

var kindWords = map[string]string{"int": "an integer", "string": "a string", "numeric": `a numeric string or ""`, "strings": "a list of strings"}

// checkList checks a JSON list (an empty one included) element by element.
func checkList(v phpserial.Value, each func(phpserial.Value) string) string {
	if v.Kind != phpserial.Array || !v.IsList() {
		return "must be a list"
	}
	for i, e := range v.Entries {
		if msg := each(e.Value); msg != "" {
			return "item " + strconv.Itoa(i) + " " + msg
		}
	}
	return ""
}

// ValueSchemas are the JSON Schemas of each configured option's value, by
// id, from the same rules that check a save (nil config: none known).
func (c *Config) ValueSchemas() map[string]any {
	out := map[string]any{}
	if c == nil {
		return out
	}
	for _, f := range c.Fields {
		out[f.ID] = f.valueSchema()
	}
	return out
}

// FieldTypeSchemas are the value schemas of each field type (a choice
// type: any string; a configured field narrows it to its options).
func FieldTypeSchemas() map[string]any {
	out := map[string]any{}
	for _, t := range fieldTypeNames {
		out[t] = (&Field{Type: t}).valueSchema()
	}
	return out
}

func (f *Field) valueSchema() map[string]any {
	var s map[string]any
	switch f.Type {
	case "color":
		s = map[string]any{"type": "string", "pattern": colorRe.String()}
	case "switch":
		s = map[string]any{"type": "boolean"}
	case "select", "radio", "button_set":
		s = map[string]any{"type": "string"}
		if f.Choices != nil {
			keys := make([]string, 0, len(f.Choices))
			for k := range f.Choices {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			s["enum"] = keys
		}
	case "text", "textarea", "editor":
		s = map[string]any{"type": "string"}
	case "number":
		s = map[string]any{"type": "number"}
	case "typography":
		s = shapeSchema(typoShape)
	case "media":
		s = shapeSchema(mediaShape)
	case "gallery":
		s = map[string]any{"type": "array", "items": shapeSchema(galleryShape)}
	case "social":
		s = map[string]any{"type": "array", "items": shapeSchema(socialShape)}
	}
	if f.Title != "" {
		s["title"] = f.Title
	}
	return s
}

// shapeSchema is an object-shaped value's schema: its members, no others.
func shapeSchema(shape []member) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, m := range shape {
		switch m.kind {
		case "int":
			props[m.name] = map[string]any{"type": "integer"}
		case "string":
			props[m.name] = map[string]any{"type": "string"}
		case "numeric":
			props[m.name] = map[string]any{"type": "string", "pattern": numericRe.String()}
		case "strings":
			props[m.name] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
		}
		if m.required {
			required = append(required, m.name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

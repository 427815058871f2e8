package fieldgroup

import (
	"bytes"
	"encoding/json"

	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// setting is one per-type setting of a field definition: its JSON type and,
// for some, the values allowed.
type setting struct {
	name string
	typ  string // "string", "integer", "number", "boolean", "object", "array"
	enum []string
}

// fieldType is one field type: its label and settings, in display order.
type fieldType struct {
	name     string
	label    string
	settings []setting
}

// common settings every type has.
var common = []setting{{name: "required", typ: "boolean"}, {name: "instructions", typ: "string"}}

func withCommon(s ...setting) []setting { return append(s, common...) }

// fieldTypes is the one table GET /field-schemas shows and config
// validation checks against (docs/api.md §2).
var fieldTypes = []fieldType{
	{"text", "Text", withCommon(setting{name: "default_value", typ: "string"}, setting{name: "placeholder", typ: "string"}, setting{name: "maxlength", typ: "integer"})},
	{"textarea", "Text Area", withCommon(setting{name: "default_value", typ: "string"}, setting{name: "placeholder", typ: "string"}, setting{name: "rows", typ: "integer"}, setting{name: "maxlength", typ: "integer"})},
	{"number", "Number", withCommon(setting{name: "default_value", typ: "number"}, setting{name: "placeholder", typ: "string"}, setting{name: "min", typ: "number"}, setting{name: "max", typ: "number"}, setting{name: "step", typ: "number"})},
	{"email", "Email", withCommon(setting{name: "default_value", typ: "string"}, setting{name: "placeholder", typ: "string"})},
	{"url", "URL", withCommon(setting{name: "default_value", typ: "string"}, setting{name: "placeholder", typ: "string"})},
	{"password", "Password", withCommon(setting{name: "placeholder", typ: "string"})},
	{"select", "Select", withCommon(setting{name: "choices", typ: "object"}, setting{name: "default_value", typ: "string"}, setting{name: "multiple", typ: "boolean"}, setting{name: "allow_null", typ: "boolean"})},
	{"checkbox", "Checkbox", withCommon(setting{name: "choices", typ: "object"}, setting{name: "default_value", typ: "array"}, setting{name: "layout", typ: "string", enum: []string{"vertical", "horizontal"}})},
	{"radio", "Radio Button", withCommon(setting{name: "choices", typ: "object"}, setting{name: "default_value", typ: "string"}, setting{name: "layout", typ: "string", enum: []string{"vertical", "horizontal"}})},
	{"true_false", "True / False", withCommon(setting{name: "default_value", typ: "boolean"}, setting{name: "message", typ: "string"})},
	{"image", "Image", withCommon(setting{name: "return_format", typ: "string", enum: []string{"array", "url", "id"}}, setting{name: "preview_size", typ: "string"})},
	{"file", "File", withCommon(setting{name: "return_format", typ: "string", enum: []string{"array", "url", "id"}})},
	{"wysiwyg", "Wysiwyg Editor", withCommon(setting{name: "default_value", typ: "string"}, setting{name: "toolbar", typ: "string", enum: []string{"full", "basic"}}, setting{name: "media_upload", typ: "boolean"})},
	{"date_picker", "Date Picker", withCommon(setting{name: "display_format", typ: "string"}, setting{name: "return_format", typ: "string"})},
	{"color_picker", "Color Picker", withCommon(setting{name: "default_value", typ: "string"})},
}

// typeByName indexes fieldTypes.
var typeByName = func() map[string]*fieldType {
	m := map[string]*fieldType{}
	for i := range fieldTypes {
		m[fieldTypes[i].name] = &fieldTypes[i]
	}
	return m
}()

// SchemasJSON is the body of GET /field-schemas, keys in table order. It
// never changes, so it is rendered once and shared: not to be modified.
func SchemasJSON() []byte { return schemasJSON }

var schemasJSON = func() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, t := range fieldTypes {
		if i > 0 {
			b.WriteByte(',')
		}
		phpserial.JSONString(&b, t.name)
		b.WriteString(`:{"label":`)
		phpserial.JSONString(&b, t.label)
		b.WriteString(`,"settings":{`)
		for j, s := range t.settings {
			if j > 0 {
				b.WriteByte(',')
			}
			phpserial.JSONString(&b, s.name)
			b.WriteString(`:{"type":`)
			phpserial.JSONString(&b, s.typ)
			if s.enum != nil {
				e, _ := json.Marshal(s.enum)
				b.WriteString(`,"enum":`)
				b.Write(e)
			}
			b.WriteByte('}')
		}
		b.WriteString("}}")
	}
	b.WriteByte('}')
	return b.Bytes()
}()

// DefinitionSchemas are the JSON Schemas of a field definition, one per
// field type, from the table that validates them.
func DefinitionSchemas() map[string]any {
	out := map[string]any{}
	for _, t := range fieldTypes {
		props := map[string]any{"type": map[string]any{"const": t.name}, "label": map[string]any{"type": "string", "minLength": 1}}
		for _, st := range t.settings {
			p := map[string]any{"type": st.typ}
			if st.enum != nil {
				p["enum"] = st.enum
			}
			props[st.name] = p
		}
		out[t.name] = map[string]any{"title": t.label, "type": "object", "required": []string{"type", "label"},
			"properties": props, "additionalProperties": false}
	}
	return out
}

package fieldgroup

import "sort"

// OpenAPI is fieldmgr/v1's part of the OpenAPI description, as plain
// JSON values: the schemas its routes name as bodies and answers (by
// name, for components/schemas) and its path parameters (by name: the
// description and schema of {id}). The field definitions come from the
// table that validates them, so the description cannot drift from it.
func OpenAPI() (schemas, pathParams map[string]any) {
	str := func() map[string]any { return map[string]any{"type": "string"} }
	schemas = map[string]any{}
	fieldDefs := DefinitionSchemas()
	types := make([]string, 0, len(fieldDefs))
	for t := range fieldDefs {
		types = append(types, t)
	}
	sort.Strings(types) // oneOf is a list: the same order every time
	var defs []any
	for _, t := range types {
		name := "Field_" + t
		schemas[name] = fieldDefs[t]
		defs = append(defs, map[string]any{"$ref": "#/components/schemas/" + name})
	}
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }
	title := map[string]any{"type": "string", "minLength": 1, "maxLength": 255}
	status := map[string]any{"enum": []string{StatusActive, StatusInactive}}
	dateTime := map[string]any{"type": "string", "pattern": `^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`}
	for name, s := range map[string]any{
		"FieldDefinition": map[string]any{"oneOf": defs, "description": "A field: its type (GET /field-schemas) and only the settings that type allows."},
		"FieldGroupConfig": map[string]any{"type": "object", "required": []string{"type"}, "properties": map[string]any{
			"type":      map[string]any{"enum": []string{"post", "taxonomy", "user", "options_page"}},
			"post_type": map[string]any{"type": "string", "pattern": "^[a-z0-9_-]{1,20}$"},
			"taxonomy":  str(),
			"position":  map[string]any{"enum": []string{"normal", "side", "advanced"}},
			"fields": map[string]any{"oneOf": []any{map[string]any{"type": "object", "propertyNames": map[string]any{"pattern": "^[a-z0-9_]{1,64}$"},
				"additionalProperties": ref("FieldDefinition")}, map[string]any{"type": "array", "maxItems": 0}}},
		}, "description": "Other top-level keys are kept as sent."},
		"FieldGroup": map[string]any{"type": "object", "required": []string{"id", "title", "config", "status", "created_at", "updated_at"}, "properties": map[string]any{
			"id": str(), "title": str(), "config": ref("FieldGroupConfig"), "status": status, "created_at": dateTime, "updated_at": dateTime}},
		"FieldGroupList": map[string]any{"type": "array", "items": ref("FieldGroup")},
		"FieldGroupCreate": map[string]any{"type": "object", "required": []string{"group_key", "title"}, "properties": map[string]any{
			"group_key": map[string]any{"type": "string", "pattern": "^[A-Za-z0-9_-]{1,191}$"}, "title": title, "config": ref("FieldGroupConfig")}},
		"FieldGroupUpdate": map[string]any{"type": "object", "properties": map[string]any{"title": title, "config": ref("FieldGroupConfig")}},
		"FieldSchemas": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "object", "required": []string{"label", "settings"}, "properties": map[string]any{
			"label": str(), "settings": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "object",
				"properties": map[string]any{"type": str(), "enum": map[string]any{"type": "array", "items": str()}}}}}}},
		"Created": map[string]any{"type": "object", "required": []string{"success", "message", "id"}, "properties": map[string]any{
			"success": map[string]any{"const": true}, "message": str(), "id": str()}},
		"Done": map[string]any{"type": "object", "required": []string{"success", "message"}, "properties": map[string]any{
			"success": map[string]any{"const": true}, "message": str()}},
		"Toggled": map[string]any{"type": "object", "required": []string{"success", "status", "message"}, "properties": map[string]any{
			"success": map[string]any{"const": true}, "status": status, "message": str()}},
	} {
		schemas[name] = s
	}
	pathParams = map[string]any{
		"id": map[string]any{"description": "the group's key", "schema": map[string]any{"type": "string", "pattern": "^[A-Za-z0-9_-]{1,191}$"}},
	}
	return schemas, pathParams
}

package themeoption

import "sort"

// OpenAPISchemas are themeopts/v1's part of the OpenAPI description, as
// plain JSON values: the schemas its routes name as bodies and answers,
// by name (for components/schemas). Under a configuration, ThemeOptions
// has each configured option's exact value schema (as properties, by
// id); without one (nil), a value of any field type.
func OpenAPISchemas(c *Config) map[string]any {
	str := func() map[string]any { return map[string]any{"type": "string"} }
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }
	schemas := map[string]any{}
	options := map[string]any{"type": "object", "description": "Saved theme options: option id → value (each value as its field type allows)."}
	if c == nil {
		valueSchemas := FieldTypeSchemas()
		kinds := make([]string, 0, len(valueSchemas))
		for t := range valueSchemas {
			kinds = append(kinds, t)
		}
		sort.Strings(kinds) // anyOf is a list: the same order every time
		var anyOf []any
		for _, t := range kinds {
			schemas["ThemeOptionValue_"+t] = valueSchemas[t]
			anyOf = append(anyOf, ref("ThemeOptionValue_"+t))
		}
		options["additionalProperties"] = map[string]any{"anyOf": anyOf}
	} else {
		options["properties"] = c.ValueSchemas()
		options["additionalProperties"] = false
	}
	success := map[string]any{"const": true}
	for name, s := range map[string]any{
		"ThemeOptions": options,
		"ThemeOptionsSaved": map[string]any{"type": "object", "required": []string{"success", "message", "options"}, "properties": map[string]any{
			"success": success, "message": str(), "options": ref("ThemeOptions")}},
		"ThemeOptionsSectionReset": map[string]any{"type": "object", "required": []string{"success", "message", "section", "options"}, "properties": map[string]any{
			"success": success, "message": str(), "section": str(), "options": ref("ThemeOptions")}},
		"SectionReset": map[string]any{"type": "object", "required": []string{"section"}, "properties": map[string]any{"section": str()}},
		"ThemeOptionsConfig": map[string]any{"type": "object", "description": "The theme options configuration file as it is.", "properties": map[string]any{
			"opt_name": str(), "capability": str(), "dev_mode": map[string]any{"type": "boolean"}, "sections": map[string]any{"type": "array"}}},
		"DevPanel": map[string]any{"type": "object", "description": "Every field with its default, value and state, and statistics."},
	} {
		schemas[name] = s
	}
	return schemas
}

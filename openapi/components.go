package openapi

import (
	"sort"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/fieldgroup"
	"github.com/wpsidecar/wpsidecar/themeopt"
)

func str() obj { return obj{"type": "string"} }

func components(site Site) obj {
	fieldDefs := fieldgroup.DefinitionSchemas()
	var types []string
	for t := range fieldDefs {
		types = append(types, t)
	}
	sort.Strings(types)
	var defs []any
	schemas := obj{}
	for _, t := range types {
		name := "Field_" + t
		schemas[name] = fieldDefs[t]
		defs = append(defs, ref("schemas", name))
	}
	options := obj{"type": "object", "description": "Saved theme options: option id → value (each value as its field type allows)."}
	if site.Themeopts == nil {
		// Without the site's configuration: a value of any field type.
		var kinds []string
		valueSchemas := themeopt.FieldTypeSchemas()
		for t := range valueSchemas {
			kinds = append(kinds, t)
		}
		sort.Strings(kinds)
		var anyOf []any
		for _, t := range kinds {
			schemas["ThemeOptionValue_"+t] = valueSchemas[t]
			anyOf = append(anyOf, ref("schemas", "ThemeOptionValue_"+t))
		}
		options["additionalProperties"] = obj{"anyOf": anyOf}
	} else {
		props := obj{}
		for id, s := range site.Themeopts.ValueSchemas() {
			props[id] = s
		}
		options["properties"] = props
		options["additionalProperties"] = false
	}
	fixed := obj{
		"Error": obj{"type": "object", "required": []string{"code", "message", "data"}, "properties": obj{
			"code": str(), "message": str(), "data": obj{"type": "object", "required": []string{"status"}, "properties": obj{"status": obj{"type": "integer"}}}}},
		"BareError":       obj{"type": "object", "required": []string{"error"}, "properties": obj{"error": str()}, "additionalProperties": false},
		"FieldDefinition": obj{"oneOf": defs, "description": "A field: its type (GET /field-schemas) and only the settings that type allows."},
		"FieldGroupConfig": obj{"type": "object", "required": []string{"type"}, "properties": obj{
			"type":      obj{"enum": []string{"post", "taxonomy", "user", "options_page"}},
			"post_type": obj{"type": "string", "pattern": "^[a-z0-9_-]{1,20}$"},
			"taxonomy":  str(),
			"position":  obj{"enum": []string{"normal", "side", "advanced"}},
			"fields": obj{"oneOf": []any{obj{"type": "object", "propertyNames": obj{"pattern": "^[a-z0-9_]{1,64}$"},
				"additionalProperties": ref("schemas", "FieldDefinition")}, obj{"type": "array", "maxItems": 0}}},
		}, "description": "Other top-level keys are kept as sent."},
		"FieldGroup": obj{"type": "object", "required": []string{"id", "title", "config", "status", "created_at", "updated_at"}, "properties": obj{
			"id": str(), "title": str(), "config": ref("schemas", "FieldGroupConfig"), "status": obj{"enum": []string{fieldgroup.StatusActive, fieldgroup.StatusInactive}},
			"created_at": obj{"type": "string", "pattern": `^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`}, "updated_at": obj{"type": "string", "pattern": `^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`}}},
		"FieldGroupList": obj{"type": "array", "items": ref("schemas", "FieldGroup")},
		"FieldGroupCreate": obj{"type": "object", "required": []string{"group_key", "title"}, "properties": obj{
			"group_key": obj{"type": "string", "pattern": "^[A-Za-z0-9_-]{1,191}$"}, "title": obj{"type": "string", "minLength": 1, "maxLength": 255},
			"config": ref("schemas", "FieldGroupConfig")}},
		"FieldGroupUpdate": obj{"type": "object", "properties": obj{"title": obj{"type": "string", "minLength": 1, "maxLength": 255}, "config": ref("schemas", "FieldGroupConfig")}},
		"FieldSchemas": obj{"type": "object", "additionalProperties": obj{"type": "object", "required": []string{"label", "settings"}, "properties": obj{
			"label": str(), "settings": obj{"type": "object", "additionalProperties": obj{"type": "object", "properties": obj{"type": str(), "enum": obj{"type": "array", "items": str()}}}}}}},
		"Created":      obj{"type": "object", "required": []string{"success", "message", "id"}, "properties": obj{"success": obj{"const": true}, "message": str(), "id": str()}},
		"Done":         obj{"type": "object", "required": []string{"success", "message"}, "properties": obj{"success": obj{"const": true}, "message": str()}},
		"Toggled":      obj{"type": "object", "required": []string{"success", "status", "message"}, "properties": obj{"success": obj{"const": true}, "status": obj{"enum": []string{fieldgroup.StatusActive, fieldgroup.StatusInactive}}, "message": str()}},
		"ThemeOptions": options,
		"HistoryList": obj{"type": "array", "items": obj{"type": "object",
			"required": []string{"id", "namespace", "object", "key", "before", "after", "user", "via", "request_id", "date_gmt"}, "properties": obj{
				"id": obj{"type": "integer"}, "namespace": obj{"enum": []string{string(wpsidecar.FieldGroups), string(wpsidecar.ThemeOptions)}},
				"object": obj{"type": "string", "description": "the options row (themeopts) or the field-group table (fieldmgr)"},
				"key":    obj{"type": "string", "description": "the option id or the group's key"},
				"before": obj{"description": "the value before (null: it did not exist); a group as {title, status, config}"},
				"after":  obj{"description": "the value after (null: removed)"},
				"user": obj{"type": "object", "required": []string{"id", "login"}, "properties": obj{"id": obj{"type": "integer"},
					"login": obj{"type": "string", "description": "the user's login; php for changes others made; cli:<user> for the command line"}}},
				"via":        obj{"enum": []string{"rest", "import", "revert", "binlog"}},
				"request_id": str(), "date_gmt": obj{"type": "string", "pattern": `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$`}}}},
		"Reverted":          obj{"type": "object", "required": []string{"success", "message", "reverted"}, "properties": obj{"success": obj{"const": true}, "message": str(), "reverted": obj{"type": "integer"}}},
		"ThemeOptionsSaved": obj{"type": "object", "required": []string{"success", "message", "options"}, "properties": obj{"success": obj{"const": true}, "message": str(), "options": ref("schemas", "ThemeOptions")}},
		"ThemeOptionsSectionReset": obj{"type": "object", "required": []string{"success", "message", "section", "options"}, "properties": obj{
			"success": obj{"const": true}, "message": str(), "section": str(), "options": ref("schemas", "ThemeOptions")}},
		"SectionReset":       obj{"type": "object", "required": []string{"section"}, "properties": obj{"section": str()}},
		"ThemeOptionsConfig": obj{"type": "object", "description": "The theme options configuration file as it is.", "properties": obj{"opt_name": str(), "capability": str(), "dev_mode": obj{"type": "boolean"}, "sections": obj{"type": "array"}}},
		"DevPanel":           obj{"type": "object", "description": "Every field with its default, value and state, and statistics."},
	}
	for name, s := range fixed {
		schemas[name] = s
	}
	return obj{
		"schemas": schemas,
		"securitySchemes": obj{
			"applicationPassword": obj{"type": "http", "scheme": "basic", "description": "An application password (login and password over HTTP Basic); over HTTPS, or any scheme when WP_ENVIRONMENT_TYPE is local."},
			"cookie":              obj{"type": "apiKey", "in": "cookie", "name": "wordpress_logged_in_{COOKIEHASH}", "description": "WordPress's logged-in cookie, with a wp_rest nonce (restNonce)."},
			"restNonce":           obj{"type": "apiKey", "in": "header", "name": "X-WP-Nonce", "description": "A wp_rest nonce (wp_create_nonce('wp_rest')); also as _wpnonce."},
		},
		"parameters": obj{
			"_fields":          obj{"name": "_fields", "in": "query", "description": "Only the named members (a,b.c).", "schema": str()},
			"_envelope":        obj{"name": "_envelope", "in": "query", "description": "Wrap the answer: {body, status, headers}, always 200.", "schema": str(), "allowEmptyValue": true},
			"_jsonp":           obj{"name": "_jsonp", "in": "query", "description": "JSONP callback name.", "schema": obj{"type": "string", "pattern": `^[\w.]+$`}},
			"_pretty":          obj{"name": "_pretty", "in": "query", "description": "Pretty-printed JSON.", "schema": str(), "allowEmptyValue": true},
			"_method":          obj{"name": "_method", "in": "query", "description": "The method to act as (also X-HTTP-Method-Override).", "schema": str()},
			"If-None-Match":    obj{"name": "If-None-Match", "in": "header", "description": "304 when it names the current ETag.", "schema": str()},
			"If-Match":         obj{"name": "If-Match", "in": "header", "description": "412 unless it names the stored state's ETag.", "schema": str()},
			"X-WPSidecar-GTID": obj{"name": "X-WPSidecar-GTID", "in": "header", "description": "A write's commit, brought back: the read sees it (read-your-writes across instances and replicas).", "schema": str()},
		},
		"headers": obj{
			"ETag":             obj{"description": "Strong entity tag of the stored state.", "schema": str()},
			"Cache-Tag":        obj{"description": "Cache tags, comma-separated (Cloudflare).", "schema": str()},
			"Surrogate-Key":    obj{"description": "Cache tags, space-separated (Fastly, Varnish xkey).", "schema": str()},
			"Link":             obj{"description": `<home/wp-json/>; rel="https://api.w.org/"`, "schema": str()},
			"Allow":            obj{"description": "The route's methods.", "schema": str()},
			"X-WP-Nonce":       obj{"description": "A fresh wp_rest nonce, when the request's verified.", "schema": str()},
			"X-WPSidecar-GTID": obj{"description": "The write's commit, to send back with later reads.", "schema": str()},
			"Retry-After":      obj{"description": "Seconds to wait.", "schema": obj{"type": "integer"}},
			"X-WP-Total":       obj{"description": "How many entries match, on every page.", "schema": obj{"type": "integer"}},
			"X-WP-TotalPages":  obj{"description": "How many pages of per_page there are.", "schema": obj{"type": "integer"}},
		},
	}
}

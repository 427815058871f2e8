package openapi

import "fmt"

func str() obj { return obj{"type": "string"} }

// components are the schemas the namespaces give and the shared ones,
// with the parameters, headers and security schemes every route uses.
// The history's list names the namespaces of the site's data (data).
func components(data, api []NamespaceDoc) obj {
	var history []string
	for _, ns := range data {
		history = append(history, string(ns.Unit.Namespace()))
	}
	schemas := obj{
		"Error": obj{"type": "object", "required": []string{"code", "message", "data"}, "properties": obj{
			"code": str(), "message": str(), "data": obj{"type": "object", "required": []string{"status"}, "properties": obj{"status": obj{"type": "integer"}}}}},
		"BareError": obj{"type": "object", "required": []string{"error"}, "properties": obj{"error": str()}, "additionalProperties": false},
		"HistoryList": obj{"type": "array", "items": obj{"type": "object",
			"required": []string{"id", "namespace", "object", "key", "before", "after", "user", "via", "request_id", "date_gmt"}, "properties": obj{
				"id": obj{"type": "integer"}, "namespace": obj{"enum": history},
				"object": obj{"type": "string", "description": "what the item belongs to: the option row or the table (with the site's prefix) its namespace keeps it in"},
				"key":    obj{"type": "string", "description": "the item's key within its namespace"},
				"before": obj{"description": "the value before (null: it did not exist); a group as {title, status, config}"},
				"after":  obj{"description": "the value after (null: removed)"},
				"user": obj{"type": "object", "required": []string{"id", "login"}, "properties": obj{"id": obj{"type": "integer"},
					"login": obj{"type": "string", "description": "the user's login; php for changes others made; cli:<user> for the command line"}}},
				"via":        obj{"enum": []string{"rest", "import", "revert", "binlog"}},
				"request_id": str(), "date_gmt": obj{"type": "string", "pattern": `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$`}}}},
		"Reverted": obj{"type": "object", "required": []string{"success", "message", "reverted"}, "properties": obj{"success": obj{"const": true}, "message": str(), "reverted": obj{"type": "integer"}}},
	}
	for _, ns := range api {
		for name, s := range ns.Schemas {
			if _, dup := schemas[name]; dup {
				panic(fmt.Sprintf("openapi: schema %s given twice (%s's)", name, ns.Name))
			}
			schemas[name] = s
		}
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

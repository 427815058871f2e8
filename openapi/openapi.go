// Package openapi describes the sidecar's API as OpenAPI 3.1, generated
// from the code: the namespaces' route tables (with what each operation
// answers), which its caller hands it, the field-type table that
// validates field groups, and the theme options' value rules. Given a
// site's configuration (its theme options and public routes), it
// describes that site's exact values. It imports no handler of the
// namespaces: their rules come from fieldgroup and themeopt, the public
// routes' from publicroute.
package openapi

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/publicroute"
	"github.com/wpsidecar/wpsidecar/themeopt"
	"github.com/wpsidecar/wpsidecar/wpjson"
)

// Site is what a site's own description knows beyond the code: nil parts
// are described generically.
type Site struct {
	Themeopts *themeopt.Config
	Public    *publicroute.Config
}

// Namespace is a REST namespace the description shows: its name
// ("fieldmgr/v1") and its route table, as its handler package lists it
// (their handlers are not called).
type Namespace struct {
	Name   string
	Routes []wpjson.Route
}

type obj = map[string]any

// Document is the description of api, the namespaces in the order given,
// as JSON, indented, the same bytes for the same input.
func Document(api []Namespace, site Site) []byte {
	paths := obj{}
	for _, ns := range api {
		namespace(ns.Name, ns.Routes, paths)
	}
	if site.Public != nil {
		publicRoutes(site, paths)
	}
	doc := obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "wpsidecar: field groups and theme options",
			"version": "1",
			"license": obj{"name": "MIT", "identifier": "MIT"},
			"description": "The fieldmgr/v1 and themeopts/v1 REST namespaces of a WordPress site, answered by wpsidecar as WordPress would. " +
				"Paths are as a client requests them from the site's URL; every route is also reached as /?rest_route=/<namespace>/<route> " +
				"(and /index.php?rest_route=…), and in any letter case. Errors have WordPress's shape, {code, message, data: {status}}; " +
				"fieldmgr's own errors are {\"error\": message}.",
		},
		"servers":    []any{obj{"url": "{site}", "variables": obj{"site": obj{"default": "https://example.com", "description": "the site's home URL"}}}},
		"security":   []any{obj{"applicationPassword": []any{}}, obj{"cookie": []any{}, "restNonce": []any{}}},
		"paths":      paths,
		"components": components(site),
		"tags": []any{
			obj{"name": string(wpsidecar.FieldGroups), "description": "Field group definitions (fieldmgr/v1); manage_options."},
			obj{"name": string(wpsidecar.ThemeOptions), "description": "Saved theme options (themeopts/v1); the configured capability."},
			obj{"name": "public", "description": "The site owner's public routes: no credentials, cacheable."},
			obj{"name": "wpsidecar", "description": "The history of field groups and theme options, and reverting a change (wpsidecar/v1); manage_options, never cached."},
		},
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return append(b, '\n')
}

// namespace adds a namespace's routes as paths.
func namespace(ns string, routes []wpjson.Route, paths obj) {
	tag := strings.TrimSuffix(ns, "/v1")
	for _, rt := range routes {
		item := obj{}
		var params []any
		path := rt.Path
		switch {
		case strings.Contains(path, "{id}"):
			params = append(params, obj{"name": "id", "in": "path", "required": true, "description": "the group's key",
				"schema": obj{"type": "string", "pattern": "^[A-Za-z0-9_-]{1,191}$"}})
		case strings.Contains(path, "{entry:[0-9]+}"):
			path = strings.Replace(path, "{entry:[0-9]+}", "{entry}", 1)
			params = append(params, obj{"name": "entry", "in": "path", "required": true, "description": "the history entry's id",
				"schema": obj{"type": "string", "pattern": "^[0-9]+$"}})
		}
		if len(params) > 0 {
			item["parameters"] = params
		}
		for _, h := range rt.Handlers {
			item[strings.ToLower(h.Method)] = operation(tag, h.Method, h.Doc)
		}
		paths["/wp-json/"+ns+path] = item
	}
}

// globals are the parameters every route takes (docs/api.md §7).
var globals = []string{"_fields", "_envelope", "_jsonp", "_pretty", "_method"}

func operation(tag, method string, d wpjson.Operation) obj {
	status := d.Status
	if status == 0 {
		status = http.StatusOK
	}
	headers := obj{"Allow": ref("headers", "Allow"), "Link": ref("headers", "Link"), "X-WP-Nonce": ref("headers", "X-WP-Nonce")}
	if d.Read {
		headers["ETag"] = ref("headers", "ETag")
		headers["Cache-Tag"] = ref("headers", "Cache-Tag")
		headers["Surrogate-Key"] = ref("headers", "Surrogate-Key")
	}
	if d.Write {
		headers["ETag"] = ref("headers", "ETag")
		headers["X-WPSidecar-GTID"] = ref("headers", "X-WPSidecar-GTID")
	}
	if d.Paginated {
		headers["X-WP-Total"] = ref("headers", "X-WP-Total")
		headers["X-WP-TotalPages"] = ref("headers", "X-WP-TotalPages")
	}
	responses := obj{strconv.Itoa(status): obj{"description": d.Summary, "headers": headers,
		"content": obj{"application/json": obj{"schema": ref("schemas", d.Answer)}}}}
	if d.Read {
		responses["304"] = obj{"description": "Not modified: If-None-Match names the current ETag.", "headers": obj{"ETag": ref("headers", "ETag")}}
	}
	errs := map[int][]wpjson.ErrorDoc{}
	for _, e := range d.Errors {
		errs[e.Status] = append(errs[e.Status], e)
	}
	for _, e := range common {
		errs[e.Status] = append(errs[e.Status], e)
	}
	if d.Write {
		errs[http.StatusPreconditionFailed] = append(errs[http.StatusPreconditionFailed], wpjson.ErrorDoc{Status: http.StatusPreconditionFailed, Code: "wpsidecar_precondition_failed"})
	}
	for st, list := range errs {
		responses[strconv.Itoa(st)] = errorResponse(st, list)
	}
	params := []any{}
	for _, g := range globals {
		params = append(params, ref("parameters", g))
	}
	if d.Read {
		params = append(params, ref("parameters", "If-None-Match"))
	}
	for _, q := range d.Query {
		params = append(params, obj{"name": q.Name, "in": "query", "description": q.Description, "schema": obj{"type": q.Type}})
	}
	if d.Write {
		params = append(params, ref("parameters", "If-Match"), ref("parameters", "X-WPSidecar-GTID"))
	} else {
		params = append(params, ref("parameters", "X-WPSidecar-GTID"))
	}
	op := obj{"tags": []any{tag}, "operationId": d.ID, "summary": d.Summary, "description": describe(d), "parameters": params, "responses": responses}
	if d.Body != "" {
		op["requestBody"] = obj{"required": method != http.MethodPost || d.Body != "SectionReset",
			"content": obj{"application/json": obj{"schema": ref("schemas", d.Body)}}}
	}
	return op
}

func describe(d wpjson.Operation) string {
	if d.Description == "" {
		return d.Summary + "."
	}
	return d.Description
}

// common are the answers every operation may give: authentication (a bad
// credential, a missing capability, a bad nonce, too many failures) and a
// database that is down.
var common = []wpjson.ErrorDoc{
	{Status: http.StatusUnauthorized, Code: "rest_forbidden"}, {Status: http.StatusUnauthorized, Code: "invalid_username"},
	{Status: http.StatusUnauthorized, Code: "invalid_email"}, {Status: http.StatusUnauthorized, Code: "incorrect_password"},
	{Status: http.StatusForbidden, Code: "rest_forbidden"}, {Status: http.StatusForbidden, Code: "rest_cookie_invalid_nonce"},
	{Status: http.StatusTooManyRequests, Code: "wpsidecar_too_many_attempts"}, {Status: http.StatusServiceUnavailable, Code: "wpsidecar_db_unavailable"},
}

// errorResponse is the answer of a status: WordPress's error shape with
// the codes it uses, or the namespace's bare shape, or either.
func errorResponse(status int, list []wpjson.ErrorDoc) obj {
	var codes []string
	bare := false
	for _, e := range list {
		if e.Bare {
			bare = true
		} else if !contains(codes, e.Code) {
			codes = append(codes, e.Code)
		}
	}
	sort.Strings(codes)
	var schemas []any
	if len(codes) > 0 {
		schemas = append(schemas, obj{"allOf": []any{ref("schemas", "Error"), obj{"properties": obj{"code": obj{"enum": codes},
			"data": obj{"properties": obj{"status": obj{"const": status}}}}}}})
	}
	if bare {
		schemas = append(schemas, ref("schemas", "BareError"))
	}
	schema := schemas[0]
	if len(schemas) > 1 {
		schema = obj{"oneOf": schemas}
	}
	desc := http.StatusText(status)
	if len(codes) > 0 {
		desc += ": " + strings.Join(codes, ", ")
	}
	r := obj{"description": desc, "content": obj{"application/json": obj{"schema": schema}}}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		r["headers"] = obj{"Retry-After": ref("headers", "Retry-After")}
	}
	return r
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func ref(kind, name string) obj { return obj{"$ref": "#/components/" + kind + "/" + name} }

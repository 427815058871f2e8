// Package openapi describes the sidecar's API as OpenAPI 3.1, generated
// from the code: each namespace's route table (with what each operation
// answers), unit and schemas, which its caller hands it, and the parts
// every namespace shares (the errors, the history, the public routes).
// Given a site's configuration, its caller hands the schemas of that
// site's exact values. It imports no namespace's handlers or rules, and
// names none: a namespace is described by what it gives (NamespaceDoc).
package openapi

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/wire/routetable"
)

// Configured is what a site's own description knows beyond the code: nil parts
// are described generically. (A namespace's site configuration is in the
// schemas its NamespaceDoc gives.)
type Configured struct {
	Public *publicroute.Config
}

// NamespaceDoc is a REST namespace as the description shows it, as it gives
// itself: nothing of it is named in this package.
type NamespaceDoc struct {
	// Name is the REST namespace ("fieldmgr/v1"); its first part is its
	// operations' tag.
	Name string
	// Routes is its route table, as its handler package lists it (the
	// handlers are not called).
	Routes []routetable.Route
	// Unit is the namespace of the site's data it serves: its tag's
	// description, its entries in the history. Nil for the sidecar's own
	// namespace (wpsidecar/v1), which is the history of the others.
	Unit wpsidecar.Unit
	// Schemas are the schemas its routes name as bodies and answers, by
	// name (components/schemas): JSON values, a name given once across
	// the namespaces and the shared ones.
	Schemas map[string]any
	// PathParams are the parameters of its paths ({id}), by name: each a
	// description and a schema.
	PathParams map[string]any
}

type obj = map[string]any

// Document is the description of api, the namespaces in the order given,
// as JSON, indented, the same bytes for the same input. It panics when two
// namespaces give the same schema name, a mistake of the wiring.
func Document(api []NamespaceDoc, site Configured) []byte {
	var data, own []NamespaceDoc // the site's data, then the sidecar's own
	for _, ns := range api {
		if ns.Unit != nil {
			data = append(data, ns)
		} else {
			own = append(own, ns)
		}
	}
	schemas := components(data, api)
	paths := obj{}
	for _, ns := range api {
		namespace(ns, paths)
	}
	if site.Public != nil {
		publicRoutes(site, schemas["schemas"].(obj), paths)
	}
	doc := obj{
		"openapi":    "3.1.0",
		"info":       info(data),
		"servers":    []any{obj{"url": "{site}", "variables": obj{"site": obj{"default": "https://example.com", "description": "the site's home URL"}}}},
		"security":   []any{obj{"applicationPassword": []any{}}, obj{"cookie": []any{}, "restNonce": []any{}}},
		"paths":      paths,
		"components": schemas,
		"tags":       tags(data, own),
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return append(b, '\n')
}

// info is the description's title and introduction, naming the
// namespaces of the site's data.
func info(data []NamespaceDoc) obj {
	var names, holds, bare []string
	for _, ns := range data {
		names = append(names, ns.Name)
		holds = append(holds, ns.holds())
		if hasBareErrors(ns.Routes) {
			bare = append(bare, tag(ns.Name)+"'s")
		}
	}
	plural := "s"
	if len(names) == 1 {
		plural = ""
	}
	errorShapes := "Errors have WordPress's shape, {code, message, data: {status}}"
	if len(bare) > 0 {
		errorShapes += "; " + join(bare) + ` own errors are {"error": message}`
	}
	return obj{
		"title":   "wpsidecar: " + join(holds),
		"version": "1",
		"license": obj{"name": "MIT", "identifier": "MIT"},
		"description": "The " + join(names) + " REST namespace" + plural + " of a WordPress site, answered by wpsidecar as WordPress would. " +
			"Paths are as a client requests them from the site's URL; every route is also reached as /?rest_route=/<namespace>/<route> " +
			"(and /index.php?rest_route=…), and in any letter case. " + errorShapes + ".",
	}
}

// tags are the namespaces' tags: those of the site's data (data) with
// their units' summaries, the public routes (which show the data), then
// the sidecar's own namespace, the history of the others.
func tags(data, own []NamespaceDoc) []any {
	var out []any
	var holds []string
	for _, ns := range data {
		out = append(out, obj{"name": tag(ns.Name), "description": ns.Unit.Summary()})
		holds = append(holds, ns.holds())
	}
	out = append(out, obj{"name": "public", "description": "The site owner's public routes: no credentials, cacheable."})
	for _, ns := range own {
		out = append(out, obj{"name": tag(ns.Name), "description": "The history of " + join(holds) + ", and reverting a change (" + ns.Name + "); manage_options, never cached."})
	}
	return out
}

// holds is what a namespace of the site's data holds, in the words of
// the description's title and the history's tag: "field groups".
func (ns NamespaceDoc) holds() string {
	_, many := ns.Unit.Labels()
	return many
}

// tag is a namespace's operations' tag: its name's first part.
func tag(ns string) string {
	first, _, _ := strings.Cut(ns, "/")
	return first
}

// join lists words as a sentence does: "a", "a and b", "a, b and c".
func join(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// hasBareErrors tells whether a namespace answers errors of its own bare
// shape ({"error": message}) besides WordPress's.
func hasBareErrors(routes []routetable.Route) bool {
	for _, rt := range routes {
		for _, h := range rt.Handlers {
			for _, e := range h.Doc.Errors {
				if e.Bare {
					return true
				}
			}
		}
	}
	return false
}

// historyParams are the path parameters of the sidecar's own namespace
// (the history's).
var historyParams = obj{"entry": obj{"description": "the history entry's id", "schema": obj{"type": "string", "pattern": "^[0-9]+$"}}}

// namespace adds a namespace's routes as paths. A path's parameters
// ({name}, or {name:regex} as the router takes it) are described by the
// namespace, else as the history's.
func namespace(ns NamespaceDoc, paths obj) {
	for _, rt := range ns.Routes {
		item := obj{}
		path, names := pathParams(rt.Path)
		var params []any
		for _, name := range names {
			given, ok := ns.PathParams[name].(obj)
			if !ok {
				given, _ = historyParams[name].(obj)
			}
			p := obj{"name": name, "in": "path", "required": true, "schema": str()}
			for k, v := range given {
				p[k] = v
			}
			params = append(params, p)
		}
		if len(params) > 0 {
			item["parameters"] = params
		}
		for _, h := range rt.Handlers {
			item[strings.ToLower(h.Method)] = operation(tag(ns.Name), h.Method, h.Doc)
		}
		paths["/wp-json/"+ns.Name+path] = item
	}
}

// pathParams is a route's path as OpenAPI writes it ({name} without the
// router's regex) and its parameters' names, in order.
func pathParams(path string) (string, []string) {
	var out strings.Builder
	var names []string
	for {
		open := strings.IndexByte(path, '{')
		if open < 0 {
			out.WriteString(path)
			return out.String(), names
		}
		out.WriteString(path[:open+1])
		path = path[open+1:]
		// The name ends at ':' or at the brace closing it; a regex may
		// hold braces of its own ({1,3}).
		depth, end, nameEnd := 1, len(path), -1
		for i := 0; i < len(path) && end == len(path); i++ {
			switch path[i] {
			case ':':
				if nameEnd < 0 && depth == 1 {
					nameEnd = i
				}
			case '{':
				depth++
			case '}':
				if depth--; depth == 0 {
					end = i
				}
			}
		}
		if nameEnd < 0 {
			nameEnd = end
		}
		names = append(names, path[:nameEnd])
		out.WriteString(path[:nameEnd])
		out.WriteByte('}')
		if end < len(path) {
			end++
		}
		path = path[end:]
	}
}

// globals are the parameters every route takes (docs/api.md §7).
var globals = []string{"_fields", "_envelope", "_jsonp", "_pretty", "_method"}

func operation(tag, method string, d routetable.Operation) obj {
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
	errs := map[int][]routetable.ErrorDoc{}
	for _, e := range d.Errors {
		errs[e.Status] = append(errs[e.Status], e)
	}
	for _, e := range common {
		errs[e.Status] = append(errs[e.Status], e)
	}
	if d.Write {
		errs[http.StatusPreconditionFailed] = append(errs[http.StatusPreconditionFailed], routetable.ErrorDoc{Status: http.StatusPreconditionFailed, Code: "wpsidecar_precondition_failed"})
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
		op["requestBody"] = obj{"required": !d.BodyOptional,
			"content": obj{"application/json": obj{"schema": ref("schemas", d.Body)}}}
	}
	return op
}

func describe(d routetable.Operation) string {
	if d.Description == "" {
		return d.Summary + "."
	}
	return d.Description
}

// common are the answers every operation may give: authentication (a bad
// credential, a missing capability, a bad nonce, too many failures) and a
// database that is down.
var common = []routetable.ErrorDoc{
	{Status: http.StatusUnauthorized, Code: "rest_forbidden"}, {Status: http.StatusUnauthorized, Code: "invalid_username"},
	{Status: http.StatusUnauthorized, Code: "invalid_email"}, {Status: http.StatusUnauthorized, Code: "incorrect_password"},
	{Status: http.StatusForbidden, Code: "rest_forbidden"}, {Status: http.StatusForbidden, Code: "rest_cookie_invalid_nonce"},
	{Status: http.StatusTooManyRequests, Code: "wpsidecar_too_many_attempts"}, {Status: http.StatusServiceUnavailable, Code: "wpsidecar_db_unavailable"},
}

// errorResponse is the answer of a status: WordPress's error shape with
// the codes it uses, or the namespace's bare shape, or either.
func errorResponse(status int, list []routetable.ErrorDoc) obj {
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

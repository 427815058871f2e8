package openapi

// publicRoutes adds the site owner's public routes: GET (and HEAD) for
// anyone, their answer's exact shape. A route shows what the public
// routes file names (publicroute): what a route's selection says of its
// answer, given the site's components/schemas as the namespaces gave
// them (a list of field groups, FieldGroupList; theme options, each as
// the ThemeOptions schema describes it).
func publicRoutes(site Configured, schemas, paths obj) {
	for _, r := range site.Public.Routes {
		answer := obj{}
		if r.Selection != nil {
			answer = r.Selection.Schema(schemas)
		}
		headers := obj{"ETag": ref("headers", "ETag"), "Cache-Tag": ref("headers", "Cache-Tag"), "Surrogate-Key": ref("headers", "Surrogate-Key"),
			"Cache-Control": obj{"description": "public, with the route's lifetimes", "schema": str()}}
		paths[r.Path] = obj{"get": obj{
			"tags": []any{"public"}, "operationId": "public" + opName(r.Path), "summary": "Public route " + r.Path,
			"description": "The same answer for everyone, without credentials; cacheable by shared caches.",
			"security":    []any{},
			"parameters":  []any{ref("parameters", "If-None-Match")},
			"responses": obj{
				"200": obj{"description": "The route's values.", "headers": headers, "content": obj{"application/json": obj{"schema": answer}}},
				"304": obj{"description": "Not modified.", "headers": obj{"ETag": ref("headers", "ETag")}},
				"404": errorResponseOf(404, "rest_no_route"), // the route removed by a reload meanwhile
				"503": errorResponseOf(503, "wpsidecar_db_unavailable"),
			},
		}}
	}
}

func errorResponseOf(status int, code string) obj {
	return obj{"description": code, "content": obj{"application/json": obj{"schema": obj{"allOf": []any{ref("schemas", "Error"),
		obj{"properties": obj{"code": obj{"const": code}}}}}}}}
}

// opName makes an operationId part of a path: /wp-json/site/v1/brand is
// WpJsonSiteV1Brand.
func opName(path string) string {
	out := []byte{}
	up := true
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			if up && c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			up = false
		default:
			up = true
		}
	}
	return string(out)
}

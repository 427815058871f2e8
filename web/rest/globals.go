package rest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// badCallback answers a _jsonp callback wp_check_jsonp_callback refuses.
// It is written here rather than by wpjson: it is no WP_Error of a route
// but serve_request's own json_error (code and message only, as
// JavaScript), which it writes before any route runs.
func badCallback(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/javascript; charset=UTF-8")
	w.WriteHeader(http.StatusBadRequest)
	w.Write([]byte(`{"code":"rest_callback_invalid","message":"Invalid JSONP callback function."}`))
}

// conditionals has r's If-None-Match and If-Match name the data, not this
// shape of it.
func (g globals) conditionals(r *http.Request) {
	suffix := g.tagSuffix() + `"`
	if v := r.Header.Get("If-None-Match"); v != "" {
		// Only a tag of this shape names what the client holds.
		tags := strings.Split(v, ",")
		for i, tag := range tags {
			tag = strings.TrimSpace(tag)
			if base, ok := strings.CutSuffix(tag, suffix); ok {
				tags[i] = base + `"`
			} else if tag != "*" {
				tags[i] = `"-"`
			}
		}
		r.Header.Set("If-None-Match", strings.Join(tags, ", "))
	}
	if v := r.Header.Get("If-Match"); v != "" {
		// A write is conditional on the data: either tag names it.
		r.Header.Set("If-Match", strings.ReplaceAll(v, suffix, `"`))
	}
}

// jsonpCallback is wp_check_jsonp_callback: letters, digits, _ and . only.
var jsonpCallback = regexp.MustCompile(`^[A-Za-z0-9_.]+$`)

// globals are the query parameters WordPress's REST server honours on
// every route (WP_REST_Server::serve_request and rest_post_dispatch):
// _jsonp (checked before anything else), _fields, _envelope and _pretty.
// Without them the answer passes untouched; with them it is buffered and
// reshaped (answer, in writers.go), and its ETag names the shape (so a
// cache never takes one shape for another) while If-None-Match and
// If-Match with such a tag still reach the handler as the tag of the data.
type globals struct {
	fields        []string
	envelope      bool
	pretty        bool
	jsonp         string
	rawForVariant string
}

// readGlobals reads the parameters as PHP's $_GET has them: the last of
// repeated names; _fields also as a PHP array (_fields[]=a&_fields[]=b).
func readGlobals(raw string) globals {
	var g globals
	if !strings.Contains(raw, "_") {
		return g
	}
	var fieldsArray []string
	for _, kv := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(kv, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			continue
		}
		switch k {
		case "_fields":
			g.fields, fieldsArray = parseList(v), nil
		case "_fields[]":
			fieldsArray = append(fieldsArray, v)
			g.fields = fieldsArray
		case "_envelope":
			g.envelope = true
		case "_pretty":
			g.pretty = true
		case "_jsonp":
			g.jsonp = v
		default:
			continue
		}
		g.rawForVariant += kv + "&"
	}
	return g
}

// parseList is wp_parse_list: split at commas and white space, empty
// parts dropped.
func parseList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
	})
}

func (g globals) any() bool {
	return len(g.fields) > 0 || g.envelope || g.pretty || g.jsonp != ""
}

// tagSuffix marks an ETag as that of this shape of the data.
func (g globals) tagSuffix() string {
	sum := sha256.Sum256([]byte(g.rawForVariant))
	return "-v" + hex.EncodeToString(sum[:4])
}

// routeHeaders are the headers a route's own response carries, which
// _envelope moves into the body; the REST server's own (Content-Type,
// Link, CORS, no-cache, X-WP-Nonce, Vary) stay headers.
var routeHeaders = []string{"Etag", "Cache-Tag", "Surrogate-Key", "Location", "Retry-After", "Allow"}

// shape writes the buffered answer reshaped.
func (g globals) shape(w http.ResponseWriter, rec *bufferedWriter) {
	h := w.Header()
	if tag := h.Get("Etag"); tag != "" && strings.HasSuffix(tag, `"`) {
		h.Set("Etag", strings.TrimSuffix(tag, `"`)+g.tagSuffix()+`"`)
	}
	body, status := rec.body.Bytes(), rec.status
	if status == http.StatusNotModified || status == http.StatusNoContent || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		w.WriteHeader(status)
		w.Write(body)
		return
	}
	if len(g.fields) > 0 && status < 400 {
		if filtered, err := filterFields(body, fieldTree(g.fields)); err == nil {
			body = filtered
		}
	}
	if g.envelope {
		var b bytes.Buffer
		b.WriteString(`{"body":`)
		b.Write(body)
		b.WriteString(`,"status":` + strconv.Itoa(status) + `,"headers":`)
		var names []string
		for _, k := range routeHeaders {
			if _, ok := h[k]; ok {
				names = append(names, k)
			}
		}
		if len(names) == 0 {
			b.WriteString("[]") // PHP's empty array
		} else {
			b.WriteByte('{')
			for i, k := range names {
				if i > 0 {
					b.WriteByte(',')
				}
				name := k
				if k == "Etag" {
					name = "ETag"
				}
				writeString(&b, name)
				b.WriteByte(':')
				writeString(&b, h.Get(k))
				h.Del(k)
			}
			b.WriteByte('}')
		}
		b.WriteByte('}')
		body, status = b.Bytes(), http.StatusOK
	}
	if g.pretty {
		var b bytes.Buffer
		if json.Indent(&b, body, "", "    ") == nil {
			body = b.Bytes()
		}
	}
	if g.jsonp != "" {
		body = append(append([]byte("/**/"+g.jsonp+"("), body...), ')')
		h.Set("Content-Type", "application/javascript; charset=UTF-8")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// writeString writes s as a JSON string the way the sidecar writes every
// string: <, > and & as they are (encoding/json's HTML escaping is not
// WordPress's), / unescaped (JSON-equal to WordPress's "\/").
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// Package wpjson writes the WordPress REST API's wire format: JSON bodies,
// the error envelope {code, message, data:{status}} and the headers
// WordPress's REST server adds to every response.
package wpjson

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// Error is a WordPress REST error: rendered as
// {"code":…, "message":…, "data":{"status":…}}.
type Error struct {
	Status  int
	Code    string
	Message string
	// Header holds extra headers for this error, e.g. Retry-After.
	Header http.Header
	// Bare renders the error as {"error": Message}, the fieldmgr
	// namespace's own shape, instead of WordPress's.
	Bare bool
	// Params names the invalid parameters with what is wrong with each,
	// as rest_invalid_param's data carries them.
	Params map[string]string
	// jsonCode and jsonMessage are PHP's json_last_error() and its
	// message, for rest_invalid_json.
	jsonCode    int
	jsonMessage string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

type errorBody struct {
	Code    string    `json:"code"`
	Message string    `json:"message"`
	Data    errorData `json:"data"`
}

type errorData struct {
	Status           int               `json:"status"`
	JSONErrorCode    int               `json:"json_error_code,omitempty"`
	JSONErrorMessage string            `json:"json_error_message,omitempty"`
	Params           map[string]string `json:"params,omitempty"`
}

// SetRESTHeaders adds the headers WordPress's REST server sends on every
// response (WP_REST_Server::serve_request).
func SetRESTHeaders(h http.Header) {
	for _, kv := range restHeaders {
		h[kv.name] = kv.value
	}
}

// restHeaders are shared by every answer: each value one element at full
// capacity, so that an Add copies rather than writes into it.
var restHeaders = []struct {
	name  string
	value []string
}{
	{"Content-Type", []string{"application/json; charset=UTF-8"}[:1:1]},
	{"X-Robots-Tag", []string{"noindex"}[:1:1]},
	{"X-Content-Type-Options", []string{"nosniff"}[:1:1]},
	{"Access-Control-Expose-Headers", []string{"X-WP-Total, X-WP-TotalPages, Link"}[:1:1]},
	{"Access-Control-Allow-Headers", []string{"Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type"}[:1:1]},
}

// WriteJSON writes v as a REST response with the given status. Like
// wp_json_encode, it leaves <, > and & as they are.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if err != nil {
		WriteError(w, &Error{Status: http.StatusInternalServerError, Code: "rest_encode_error", Message: "The response could not be encoded."})
		return
	}
	SetRESTHeaders(w.Header())
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// WriteError writes e in WordPress's error shape.
func WriteError(w http.ResponseWriter, e *Error) {
	for k, v := range e.Header {
		w.Header()[k] = v
	}
	if e.Bare {
		WriteJSON(w, e.Status, struct {
			Error string `json:"error"`
		}{e.Message})
		return
	}
	WriteJSON(w, e.Status, errorBody{Code: e.Code, Message: e.Message, Data: errorData{Status: e.Status, JSONErrorCode: e.jsonCode, JSONErrorMessage: e.jsonMessage, Params: e.Params}})
}

// WriteRaw writes JSON that is already encoded.
func WriteRaw(w http.ResponseWriter, status int, b []byte) {
	SetRESTHeaders(w.Header())
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

package wpjson

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"regexp"
	"unicode/utf8"
)

// PHP's json_last_error() codes that a request body can raise.
const (
	jsonErrDepth    = 1
	jsonErrMismatch = 2
	jsonErrCtrlChar = 3
	jsonErrSyntax   = 4
	jsonErrUTF8     = 5
	jsonErrUTF16    = 10
)

var jsonErrMessages = map[int]string{
	jsonErrDepth:    "Maximum stack depth exceeded",
	jsonErrMismatch: "State mismatch (invalid or malformed JSON)",
	jsonErrCtrlChar: "Control character error, possibly incorrectly encoded",
	jsonErrSyntax:   "Syntax error",
	jsonErrUTF8:     "Malformed UTF-8 characters, possibly incorrectly encoded",
	jsonErrUTF16:    "Single unpaired UTF-16 surrogate in unicode escape",
}

// phpJSONMaxDepth is the deepest nesting of arrays and objects
// json_decode's default depth (512) lets through.
const phpJSONMaxDepth = 511

// CheckJSON tells whether PHP's json_decode($body, true) accepts body, as
// WordPress checks a JSON request body before any handler runs
// (WP_REST_Request::parse_json_params): the error is WordPress's
// rest_invalid_json with the json_last_error() code and message PHP
// reports for the first fault. An empty body (and "0", which PHP's empty()
// also takes for nothing) is no body at all.
func CheckJSON(body []byte) *Error {
	if len(body) == 0 || string(body) == "0" {
		return nil
	}
	p := jsonChecker{b: body}
	code := p.value(0)
	if code == 0 {
		if tok, c := p.next(); c != 0 {
			code = c
		} else if tok != tokEOF {
			code = jsonErrSyntax
		}
	}
	if code == 0 {
		return nil
	}
	return &Error{Status: http.StatusBadRequest, Code: "rest_invalid_json", Message: "Invalid JSON body passed.",
		jsonCode: code, jsonMessage: jsonErrMessages[code]}
}

type jsonToken byte

const (
	tokEOF jsonToken = iota
	tokValue
	tokString
	tokPunct // { } [ ] : , — the byte itself is in jsonChecker.punct
)

// jsonChecker follows PHP's scanner (ext/json): tokens are read one at a
// time, and the first fault, of a token or of the grammar, is the error.
type jsonChecker struct {
	b     []byte
	i     int
	punct byte
}

func (p *jsonChecker) value(depth int) int {
	tok, code := p.next()
	if code != 0 {
		return code
	}
	return p.valueFrom(tok, depth)
}

func (p *jsonChecker) valueFrom(tok jsonToken, depth int) int {
	switch tok {
	case tokValue, tokString:
		return 0
	case tokPunct:
		switch p.punct {
		case '[':
			return p.list(depth + 1)
		case '{':
			return p.object(depth + 1)
		}
	}
	return jsonErrSyntax
}

func (p *jsonChecker) list(depth int) int {
	if depth > phpJSONMaxDepth {
		return jsonErrDepth
	}
	tok, code := p.next()
	if code != 0 {
		return code
	}
	if tok == tokPunct && p.punct == ']' {
		return 0
	}
	if tok == tokPunct && p.punct == '}' {
		return jsonErrMismatch
	}
	for {
		if code := p.valueFrom(tok, depth); code != 0 {
			return code
		}
		if tok, code = p.next(); code != 0 {
			return code
		}
		if tok == tokPunct && p.punct == '}' {
			return jsonErrMismatch // the grammar's own rule for a wrong closer
		}
		if tok != tokPunct || (p.punct != ',' && p.punct != ']') {
			return jsonErrSyntax
		}
		if p.punct == ']' {
			return 0
		}
		if tok, code = p.next(); code != 0 {
			return code
		}
	}
}

func (p *jsonChecker) object(depth int) int {
	if depth > phpJSONMaxDepth {
		return jsonErrDepth
	}
	tok, code := p.next()
	if code != 0 {
		return code
	}
	if tok == tokPunct && p.punct == '}' {
		return 0
	}
	if tok == tokPunct && p.punct == ']' {
		return jsonErrMismatch
	}
	for {
		if tok != tokString {
			return jsonErrSyntax
		}
		if tok, code = p.next(); code != 0 {
			return code
		}
		if tok != tokPunct || p.punct != ':' {
			return jsonErrSyntax
		}
		if code := p.value(depth); code != 0 {
			return code
		}
		if tok, code = p.next(); code != 0 {
			return code
		}
		if tok == tokPunct && p.punct == ']' {
			return jsonErrMismatch
		}
		if tok != tokPunct || (p.punct != ',' && p.punct != '}') {
			return jsonErrSyntax
		}
		if p.punct == '}' {
			return 0
		}
		if tok, code = p.next(); code != 0 {
			return code
		}
	}
}

// next reads one token, or the scanner's error code.
func (p *jsonChecker) next() (jsonToken, int) {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\r' || p.b[p.i] == '\n') {
		p.i++
	}
	if p.i == len(p.b) {
		return tokEOF, 0
	}
	c := p.b[p.i]
	switch {
	case c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',':
		p.i++
		p.punct = c
		return tokPunct, 0
	case c == '"':
		p.i++
		return tokString, p.str()
	case c == '-' || c >= '0' && c <= '9':
		if p.number() {
			return tokValue, 0
		}
		return tokEOF, jsonErrSyntax
	}
	for _, lit := range []string{"true", "false", "null"} {
		if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
			p.i += len(lit)
			return tokValue, 0
		}
	}
	switch r, n := utf8.DecodeRune(p.b[p.i:]); {
	case c < 0x20:
		return tokEOF, jsonErrCtrlChar
	case r == utf8.RuneError && n <= 1:
		return tokEOF, jsonErrUTF8
	}
	return tokEOF, jsonErrSyntax
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and tells
// whether one was there. What follows it is the next token's business
// ("01" is two numbers, which the grammar refuses).
func (p *jsonChecker) number() bool {
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case digits() == 0:
		return false
	}
	if p.i+1 < len(p.b) && p.b[p.i] == '.' && p.b[p.i+1] >= '0' && p.b[p.i+1] <= '9' {
		p.i++
		digits()
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		j := p.i + 1
		if j < len(p.b) && (p.b[j] == '+' || p.b[j] == '-') {
			j++
		}
		if j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
			p.i = j
			digits()
		}
	}
	return true
}

// str reads a string after its opening quote.
func (p *jsonChecker) str() int {
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return 0
		case c < 0x20:
			return jsonErrCtrlChar
		case c == '\\':
			if code := p.escape(); code != 0 {
				return code
			}
		case c < 0x80:
			p.i++
		default:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && n <= 1 {
				return jsonErrUTF8
			}
			p.i += n
		}
	}
	return jsonErrCtrlChar // unterminated: PHP reads its terminating NUL
}

// escape reads \x or \uXXXX (a surrogate only as a high-low pair).
func (p *jsonChecker) escape() int {
	if p.i+1 >= len(p.b) {
		return jsonErrSyntax
	}
	switch p.b[p.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.i += 2
		return 0
	case 'u':
	default:
		return jsonErrSyntax
	}
	u, ok := p.hex4(p.i + 2)
	if !ok {
		return jsonErrSyntax
	}
	switch {
	case u < 0xd800 || u > 0xdfff:
		p.i += 6
		return 0
	case u <= 0xdbff:
		if p.i+7 < len(p.b) && p.b[p.i+6] == '\\' && p.b[p.i+7] == 'u' {
			if lo, ok := p.hex4(p.i + 8); ok && lo >= 0xdc00 && lo <= 0xdfff {
				p.i += 12
				return 0
			}
		}
	}
	return jsonErrUTF16
}

func (p *jsonChecker) hex4(at int) (rune, bool) {
	if at+4 > len(p.b) {
		return 0, false
	}
	var u rune
	for _, c := range p.b[at : at+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		u = u<<4 | rune(d)
	}
	return u, true
}

// jsonMediaType is wp_is_json_media_type's pattern.
var jsonMediaType = regexp.MustCompile(`(?i)(^|\s|,)application/([\w!#$&-^.+]+\+)?json(\+oembed)?($|\s|;|,)`)

// IsJSONMediaType is wp_is_json_media_type.
func IsJSONMediaType(contentType string) bool { return jsonMediaType.MatchString(contentType) }

// CheckBody answers rest_invalid_json to a request whose JSON body PHP
// would not decode, as WordPress does after authentication and before the
// route's permission check; the body is left for the handler.
func CheckBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || !IsJSONMediaType(r.Header.Get("Content-Type")) {
			next.ServeHTTP(w, r)
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			// Too large or cut off: the handler meets the same error.
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errorReader{err}))
			next.ServeHTTP(w, r)
			return
		}
		if e := CheckJSON(b); e != nil {
			Render(w, r, e)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		next.ServeHTTP(w, r)
	})
}

type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

// BodyErrors are a namespace's answers to a body it cannot take.
type BodyErrors struct {
	MediaType *Error // 415: not a JSON media type
	TooLarge  *Error // 413: past the limit the proxy set
	Unread    *Error // the client broke off
}

// ReadBody reads a request body, trimmed of white space; a non-empty one
// must come as JSON (wp_is_json_media_type's rule). An empty body is nil,
// for the caller to require or not.
func ReadBody(r *http.Request, errs BodyErrors) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, errs.TooLarge
	case err != nil:
		return nil, errs.Unread
	}
	if b = bytes.TrimSpace(b); len(b) == 0 {
		return nil, nil
	}
	if !IsJSONMediaType(r.Header.Get("Content-Type")) {
		return nil, errs.MediaType
	}
	return b, nil
}

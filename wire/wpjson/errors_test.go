package wpjson_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

type busy struct{}

func (busy) Error() string { return "busy" }
func (busy) Busy() bool    { return true }

type down struct{}

func (down) Error() string     { return "down" }
func (down) Unavailable() bool { return true }

// Render: the one place errors become answers.
func TestRender(t *testing.T) {
	for _, c := range []struct {
		err         error
		status      int
		body, retry string
	}{
		{fmt.Errorf("read: %w", busy{}), 503, `{"code":"wpsidecar_busy","message":"The sidecar is too busy to answer right now. Please try again shortly.","data":{"status":503}}`, "1"},
		{fmt.Errorf("read: %w", down{}), 503, `{"code":"wpsidecar_db_unavailable","message":"The WordPress database is not available right now. Please try again shortly.","data":{"status":503}}`, "5"},
		{&wpjson.Error{Status: 400, Code: "rest_invalid_param", Message: "Invalid parameter(s): page", Params: map[string]string{"page": "no"}}, 400,
			`{"code":"rest_invalid_param","message":"Invalid parameter(s): page","data":{"status":400,"params":{"page":"no"}}}`, ""},
		{wpjson.ErrTooLarge.AsBare(), 413, `{"error":"The request body is too large."}`, ""},
		{errors.New("boom"), 500, `{"code":"wpsidecar_internal_error","message":"The sidecar failed to answer this request.","data":{"status":500}}`, ""},
	} {
		w := httptest.NewRecorder()
		wpjson.Render(w, httptest.NewRequest(http.MethodGet, "/", nil), c.err)
		if w.Code != c.status || w.Body.String() != c.body || w.Header().Get("Retry-After") != c.retry {
			t.Errorf("%v: %d %s Retry-After %q, want %d %s %q", c.err, w.Code, w.Body, w.Header().Get("Retry-After"), c.status, c.body, c.retry)
		}
	}
}

package redact_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/redact"
)

// TestURLAndError: a password, query values and a fragment are masked, in
// a URL and in the URL an HTTP client's error names (security round 2,
// item 9).
func TestURLAndError(t *testing.T) {
	const secret = "s3cr3t"
	u := "https://user:" + secret + "@example.test/path?token=" + secret + "&k=" + secret + "#" + secret
	const masked = "https://user:xxxxx@example.test/path?k=xxxxx&token=xxxxx#xxxxx"
	parsed, _ := url.Parse(u)
	if got := redact.URL(parsed); got != masked {
		t.Errorf("URL: %s", got)
	}
	err := redact.Error(&url.Error{Op: "Post", URL: u, Err: errors.New("connection refused")})
	if strings.Contains(err.Error(), secret) || err.Error() != `Post "`+masked+`": connection refused` {
		t.Errorf("error: %v", err)
	}
	if redact.URL(nil) != "" {
		t.Error("a nil URL is printed as nothing")
	}
}

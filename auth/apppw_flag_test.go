package auth_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
)

// TestApplicationPasswords_FirstOne: the site's first application
// password works on its first request, though the settings snapshot was
// read before WordPress set using_application_passwords; while the flag is
// unset, Basic is ignored as WordPress ignores it.
func TestApplicationPasswords_FirstOne(t *testing.T) {
	tdb := testdb.New(t)
	const password = "abcdEFGHijklMNOPqrstUVWX"
	site := testsite.New(t, tdb, testsite.User{Login: "first", Role: "administrator", AppPassword: password})
	tdb.DeleteOption(t, "using_application_passwords")
	if err := site.Settings.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth("first", password)

	if u, err := site.Auth.Authenticate(req); err != nil || u != nil {
		t.Fatalf("flag unset: %+v %v; WordPress ignores the header", u, err)
	}
	tdb.SetOption(t, "using_application_passwords", "1") // what create_new_application_password does
	u, err := site.Auth.Authenticate(req)
	if err != nil || u == nil || !u.Can("manage_options") {
		t.Fatalf("first application password, before any settings refresh: %+v %v", u, err)
	}
}

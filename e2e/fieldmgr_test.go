//go:build e2e

package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// TestFieldGroupsThroughTheSidecar: created with an application password,
// read with a real cookie and nonce, refused to a subscriber, the row as
// stored in the site's database.
func TestFieldGroupsThroughTheSidecar(t *testing.T) {
	admin, sub := site.Users["administrator"], site.Users["subscriber"]
	config := `{"type":"post","post_type":"post","position":"normal","fields":{"subtitle":{"type":"text","label":"Untertitel"},"hero":{"type":"image","label":"Hero","return_format":"url"}}}`
	req, _ := http.NewRequest(http.MethodPost, site.URL+"/wp-json/fieldmgr/v1/field-groups",
		strings.NewReader(`{"group_key":"e2e_group","title":"Größen & Farben","config":`+config+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", wptest.BasicAuth(admin.Login, admin.ApplicationPassword))
	resp, body := do(t, nil, req)
	if resp.StatusCode != 201 || body != `{"success":true,"message":"Field group created","id":"e2e_group"}` {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}

	var title, stored, status string
	if err := site.DB(t).QueryRow("SELECT title, config, status FROM wp_fieldmgr_groups WHERE group_key = 'e2e_group'").Scan(&title, &stored, &status); err != nil {
		t.Fatal(err)
	}
	if title != "Größen & Farben" || stored != config || status != "active" {
		t.Errorf("row: %q %q %q", title, stored, status)
	}

	c := site.Login(t, admin)
	nonce := site.RESTNonce(t, c)
	req, _ = http.NewRequest(http.MethodGet, site.URL+"/wp-json/fieldmgr/v1/field-groups/e2e_group", nil)
	req.Header.Set("X-WP-Nonce", nonce)
	resp, body = do(t, c, req)
	if resp.StatusCode != 200 || !strings.HasPrefix(body, `{"id":"e2e_group","title":"Größen & Farben","config":`+config+`,"status":"active","created_at":"`) {
		t.Errorf("read with cookie and nonce: %d %s", resp.StatusCode, body)
	}
	// As WordPress does after a cookie and nonce: a fresh nonce, valid now.
	if fresh := resp.Header.Get("X-WP-Nonce"); len(fresh) != 10 {
		t.Errorf("X-WP-Nonce %q", fresh)
	} else {
		req, _ = http.NewRequest(http.MethodGet, site.URL+"/wp-json/wp/v2/users/me?_fields=id", nil)
		req.Header.Set("X-WP-Nonce", fresh)
		if r2, b2 := do(t, c, req); r2.StatusCode != 200 || !strings.Contains(b2, `"id":`) {
			t.Errorf("WordPress refuses the sidecar's fresh nonce: %d %s", r2.StatusCode, b2)
		}
	}
	if line := accessLog(t, resp); line["served_by"] != "sidecar" || line["route"] != "GET /wp-json/fieldmgr/v1/field-groups/{id}" {
		t.Errorf("access log: %v", line)
	}

	sc := site.Login(t, sub)
	req, _ = http.NewRequest(http.MethodGet, site.URL+"/wp-json/fieldmgr/v1/field-groups", nil)
	req.Header.Set("X-WP-Nonce", site.RESTNonce(t, sc))
	resp, body = do(t, sc, req)
	if resp.StatusCode != 403 || body != `{"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":403}}` {
		t.Errorf("subscriber: %d %s", resp.StatusCode, body)
	}
}

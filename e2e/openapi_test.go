//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// TestOpenAPI_PrismProxy: the site's own description (wpsidecar openapi
// with the e2e site's theme options and public routes) judged by Stoplight
// Prism's validating proxy in front of the sidecar: every answer to a mix
// of requests over all routes — successes and each kind of error —
// conforms to it (no response violation in sl-violations).
func TestOpenAPI_PrismProxy(t *testing.T) {
	tools, _ := filepath.Abs("../web/openapi/tools/node_modules/.bin/prism")
	if _, err := os.Stat(tools); err != nil {
		t.Fatalf("Prism is not installed: run make deps (scripts/install-deps.sh runs npm ci in web/openapi/tools): %v", err)
	}
	themeopts, _ := filepath.Abs("../web/themeopts/testdata/config.json")
	routes, _ := filepath.Abs("testdata/public-routes.json")
	doc := filepath.Join(t.TempDir(), "site.json")
	out, err := openapiCommand("--themeopts-config", themeopts, "--public-routes", routes)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(doc, out, 0o644)

	base := startPrism(t, tools, doc)

	seedGroup(t, "prism_group")
	admin := adminBasic()
	sub := []string{"Authorization", basicOf(site.Users["subscriber"].Login, site.Users["subscriber"].ApplicationPassword)}
	json_ := []string{"Content-Type", "application/json"}
	withJSON := func(h []string) []string { return append(append([]string{}, h...), json_...) }
	tests := []struct {
		method, path, body string
		hdr                []string
		status             int
	}{
		// fieldmgr/v1: successes
		{"GET", "/wp-json/fieldmgr/v1/field-groups", "", admin, 200},
		{"GET", "/wp-json/fieldmgr/v1/field-groups/prism_group", "", admin, 200},
		{"POST", "/wp-json/fieldmgr/v1/field-groups", `{"group_key":"prism_new","title":"New","config":{"type":"post","post_type":"post","fields":{"x":{"type":"select","label":"X","choices":{"a":"A"},"multiple":false}}}}`, withJSON(admin), 201},
		{"PUT", "/wp-json/fieldmgr/v1/field-groups/prism_new", `{"title":"Renamed"}`, withJSON(admin), 200},
		{"POST", "/wp-json/fieldmgr/v1/field-groups/prism_new/toggle", "", admin, 200},
		{"DELETE", "/wp-json/fieldmgr/v1/field-groups/prism_new", "", admin, 200},
		{"GET", "/wp-json/fieldmgr/v1/field-schemas", "", admin, 200},
		// fieldmgr/v1: errors
		{"GET", "/wp-json/fieldmgr/v1/field-groups", "", nil, 401},
		{"GET", "/wp-json/fieldmgr/v1/field-groups", "", sub, 403},
		{"GET", "/wp-json/fieldmgr/v1/field-groups/nope", "", admin, 404},
		{"POST", "/wp-json/fieldmgr/v1/field-groups", `{"group_key":"bad key"}`, withJSON(admin), 400},
		{"POST", "/wp-json/fieldmgr/v1/field-groups", `{"group_key":"prism_group","title":"Dup"}`, withJSON(admin), 400},
		{"PUT", "/wp-json/fieldmgr/v1/field-groups/prism_group", `{"title":"x"}`, append(withJSON(admin), "If-Match", `"stale"`), 412},
		{"DELETE", "/wp-json/fieldmgr/v1/field-groups/nope", "", admin, 404},
		{"POST", "/wp-json/fieldmgr/v1/field-groups", `x`, append(admin, "Content-Type", "text/plain"), 415},
		// themeopts/v1: successes and errors
		{"GET", "/wp-json/themeopts/v1/options", "", admin, 200},
		{"POST", "/wp-json/themeopts/v1/options", `{"accent_color":"#112233","layout":"boxed"}`, withJSON(admin), 200},
		{"POST", "/wp-json/themeopts/v1/options/reset-section", `{"section":"general"}`, withJSON(admin), 200},
		{"GET", "/wp-json/themeopts/v1/config", "", admin, 200},
		{"GET", "/wp-json/themeopts/v1/dev-panel", "", admin, 200},
		{"GET", "/wp-json/themeopts/v1/options", "", nil, 403},
		{"POST", "/wp-json/themeopts/v1/options", `{"accent_color":"red"}`, withJSON(admin), 400},
		{"POST", "/wp-json/themeopts/v1/options", `[1]`, withJSON(admin), 400},
		{"POST", "/wp-json/themeopts/v1/options/reset-section", `{}`, withJSON(admin), 400},
		{"POST", "/wp-json/themeopts/v1/options/reset-section", `{"section":"nope"}`, withJSON(admin), 404},
		{"POST", "/wp-json/themeopts/v1/options/reset", "", admin, 200},
		// public routes (a body that is not JSON is checked below: Prism
		// never forwards one)
		{"GET", "/wp-json/e2e/v1/public/brand", "", nil, 200},
		{"GET", "/wp-json/e2e/v1/public/product-fields", "", nil, 200},
		// wpsidecar/v1: the history (the writes above are in it)
		{"GET", "/wp-json/wpsidecar/v1/history?per_page=2", "", admin, 200},
		{"GET", "/wp-json/wpsidecar/v1/history?namespace=themeopts&key=accent_color&since=2020-01-01T00:00:00Z", "", admin, 200},
		{"GET", "/wp-json/wpsidecar/v1/history?per_page=0", "", admin, 400},
		{"GET", "/wp-json/wpsidecar/v1/history", "", nil, 401},
		{"GET", "/wp-json/wpsidecar/v1/history", "", sub, 403},
		{"POST", "/wp-json/wpsidecar/v1/history/999999999/revert", "", admin, 404},
		{"POST", "/wp-json/wpsidecar/v1/history/{layout}/revert", "", admin, 200},
		{"POST", "/wp-json/wpsidecar/v1/history/{layout}/revert", "", admin, 412},
	}
	for _, tt := range tests {
		if strings.Contains(tt.path, "{layout}") {
			// The newest entry of the layout option (the resets above
			// wrote it): reverted once, then changed since.
			a := ask(t, site.URL, "", http.MethodGet, "/wp-json/wpsidecar/v1/history?namespace=themeopts&key=layout&per_page=1", "", admin...)
			var entries []struct {
				ID int64 `json:"id"`
			}
			if json.Unmarshal([]byte(a.body), &entries); len(entries) != 1 {
				t.Fatalf("no history of layout: %d %s", a.status, a.body)
			}
			if tt.status == 200 {
				tt.path = strings.Replace(tt.path, "{layout}", strconv.FormatInt(entries[0].ID, 10), 1)
			} else {
				// The revert is now the newest; the entry before it was
				// reverted: its after is no longer stored.
				a := ask(t, site.URL, "", http.MethodGet, "/wp-json/wpsidecar/v1/history?namespace=themeopts&key=layout&per_page=1&page=2", "", admin...)
				json.Unmarshal([]byte(a.body), &entries)
				tt.path = strings.Replace(tt.path, "{layout}", strconv.FormatInt(entries[0].ID, 10), 1)
			}
		}
		var body io.Reader
		if tt.body != "" {
			body = strings.NewReader(tt.body)
		}
		req, _ := http.NewRequest(tt.method, base+tt.path, body)
		for i := 0; i+1 < len(tt.hdr); i += 2 {
			req.Header.Set(tt.hdr[i], tt.hdr[i+1])
		}
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
		if err != nil {
			t.Errorf("%s %s %q through Prism: %v", tt.method, tt.path, tt.body, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, resp.StatusCode, b, tt.status)
		}
		if v := resp.Header.Get("sl-violations"); v != "" {
			var violations []struct {
				Location []string `json:"location"`
				Message  string   `json:"message"`
			}
			json.Unmarshal([]byte(v), &violations)
			for _, vi := range violations {
				if len(vi.Location) > 0 && vi.Location[0] == "response" {
					t.Errorf("%s %s (%d): the answer violates the description: %s at %v\n%s", tt.method, tt.path, resp.StatusCode, vi.Message, vi.Location, b)
				}
			}
		}
	}

	// The judge can fail: with a description that says the list is a
	// string, Prism names the answer as a violation.
	wrong := strings.Replace(string(out), `"FieldGroupList": {
        "items": {
          "$ref": "#/components/schemas/FieldGroup"
        },
        "type": "array"
      }`, `"FieldGroupList": {
        "type": "string"
      }`, 1)
	if wrong == string(out) {
		t.Fatal("the control description was not made")
	}
	os.WriteFile(doc, []byte(wrong), 0o644)
	req, _ := http.NewRequest(http.MethodGet, startPrism(t, tools, doc)+"/wp-json/fieldmgr/v1/field-groups", nil)
	req.Header.Set(admin[0], admin[1])
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := resp.Header.Get("sl-violations"); !strings.Contains(v, `"response"`) {
		t.Errorf("Prism saw no violation in an answer the description does not allow: %q", v)
	}
}

// startPrism runs Prism's validating proxy for doc in front of the
// sidecar and gives its URL.
func startPrism(t *testing.T, bin, doc string) string {
	t.Helper()
	port := freePort(t)
	prism := exec.Command(bin, "proxy", doc, site.URL, "--host", "127.0.0.1", "--port", fmt.Sprint(port), "--errors=false")
	logf, _ := os.Create(filepath.Join(t.TempDir(), "prism.log"))
	prism.Stdout, prism.Stderr = logf, logf
	prism.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := prism.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wptest.StopProcess(prism) })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitStarted(t, logf.Name(), func() bool {
		resp, err := http.Get(base + "/wp-json/e2e/v1/public/brand")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})
	return base
}

// TestOpenAPI_BrokenJSON: a body that is not JSON (Prism's proxy cannot
// forward one) is answered as the description says: 400 with a code it
// lists for the operation.
func TestOpenAPI_BrokenJSON(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]json.RawMessage
		}
	}
	out, err := openapiCommand()
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(out, &doc)
	for _, c := range []struct{ ns, path string }{{"fieldmgr/v1", "/field-groups"}, {"themeopts/v1", "/options"}} {
		req, _ := http.NewRequest(http.MethodPost, site.URL+"/wp-json/"+c.ns+c.path, strings.NewReader(`{"group_key":`))
		for _, h := range [][2]string{{"Content-Type", "application/json"}, {adminBasic()[0], adminBasic()[1]}} {
			req.Header.Set(h[0], h[1])
		}
		resp, body := do(t, nil, req)
		documented := string(doc.Paths["/wp-json/"+c.ns+c.path]["post"].Responses["400"])
		if resp.StatusCode != 400 || !strings.Contains(body, `"code":"rest_invalid_json"`) || !strings.Contains(documented, `"rest_invalid_json"`) {
			t.Errorf("%s: %d %s; documented 400: %s", c.ns, resp.StatusCode, body, documented)
		}
	}
}

func basicOf(login, password string) string {
	req, _ := http.NewRequest("GET", "/", nil)
	req.SetBasicAuth(login, password)
	return req.Header.Get("Authorization")
}

// openapiCommand runs wpsidecar openapi with args. It reads its settings
// as the server does, environment included: it is given none, not the
// tests' WPSIDECAR_TEST_* variables, which it would refuse as unknown.
func openapiCommand(args ...string) ([]byte, error) {
	cmd := exec.Command(site.Bin, append([]string{"openapi"}, args...)...)
	cmd.Env = []string{}
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		err = fmt.Errorf("%w: %s", err, ee.Stderr)
	}
	return out, err
}

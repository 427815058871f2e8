package fieldmgr_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
	"github.com/wpsidecar/wpsidecar/web/fieldmgr"
)

const (
	adminPW = "abcdEFGHijklMNOPqrstUVWX"
	subPW   = "zyxwVUTSrqpoNMLKjihgFEDC"
	base    = "/wp-json/fieldmgr/v1"
)

type fixture struct {
	t   *testing.T
	tdb *testdb.DB
	url string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	tdb := testdb.New(t)
	site := testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: adminPW},
		testsite.User{Login: "sub", Role: "subscriber", AppPassword: subPW})
	groups, err := fieldgrouptable.Open(site.DB, "wp_fieldmgr_groups")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, tdb: tdb, url: site.Serve(t, fieldmgr.New(site.Auth, groups, site.Settings, zerolog.Nop()))}
}

// do sends a request as the administrator (or as login/password when given).
func (f *fixture) do(method, path, body string, creds ...string) (int, string, http.Header) {
	f.t.Helper()
	login, pw := "admin", adminPW
	if len(creds) == 2 {
		login, pw = creds[0], creds[1]
	}
	return testsite.Send(f.t, method, f.url+base+path, body, login, pw)
}

func (f *fixture) expect(method, path, body string, wantStatus int, wantBody string) {
	f.t.Helper()
	code, got, _ := f.do(method, path, body)
	if code != wantStatus || got != wantBody {
		f.t.Errorf("%s %s %s:\n got %d %s\nwant %d %s", method, path, body, code, got, wantStatus, wantBody)
	}
}

func (f *fixture) row(key string) (title, config, status, created, updated string) {
	f.t.Helper()
	err := f.tdb.SQL.QueryRow("SELECT title, config, status, created_at, updated_at FROM wp_fieldmgr_groups WHERE BINARY group_key = ?", key).
		Scan(&title, &config, &status, &created, &updated)
	if err != nil {
		f.t.Fatalf("row %s: %v", key, err)
	}
	return
}

func TestAuthRequired(t *testing.T) {
	f := newFixture(t)
	code, body, _ := f.do(http.MethodGet, "/field-groups", "", "", "")
	if code != 401 || body != `{"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":401}}` {
		t.Errorf("anonymous: %d %s", code, body)
	}
	code, body, _ = f.do(http.MethodPost, "/field-groups", `{"group_key":"g","title":"t"}`, "sub", subPW)
	if code != 403 || !strings.Contains(body, `"rest_forbidden"`) {
		t.Errorf("subscriber: %d %s", code, body)
	}
	if n := f.count(); n != 0 {
		t.Errorf("%d rows written by a refused request", n)
	}
}

func (f *fixture) count() int {
	var n int
	f.tdb.SQL.QueryRow("SELECT COUNT(*) FROM wp_fieldmgr_groups").Scan(&n)
	return n
}

func TestCreateGetList(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodGet, "/field-groups", "", 200, `[]`)
	f.expect(http.MethodGet, "/field-groups/", "", 200, `[]`) // WordPress drops the trailing slash
	f.expect(http.MethodPost, "/field-groups", `{"group_key":"product_info","title":"Produktinfo – Größe 🎉","extra":1}`, 201,
		`{"success":true,"message":"Field group created","id":"product_info"}`)
	config := `{"type":"post","post_type":"product","position":"side","fields":{"zeta":{"type":"text","label":"Z","maxlength":20},"alpha":{"type":"number","label":"A","min":0.5},"mid":{"type":"select","label":"M","choices":{"b":"B","a":"A"}}},"custom_top":{"y":1,"x":2}}`
	f.expect(http.MethodPost, "/field-groups", `{"group_key":"Ordered-Keys","title":"t","config":`+config+`}`, 201,
		`{"success":true,"message":"Field group created","id":"Ordered-Keys"}`)

	title, cfg, status, created, updated := f.row("product_info")
	if title != "Produktinfo – Größe 🎉" || cfg != `{"type":"post","post_type":"post","position":"normal","fields":{}}` || status != "active" || created != updated {
		t.Errorf("row: %q %q %q %q %q", title, cfg, status, created, updated)
	}
	// Its own time: the two may be a second apart.
	_, cfg, _, ordered, _ := f.row("Ordered-Keys")
	if cfg != config {
		t.Errorf("stored config changed order or content:\n%s", cfg)
	}
	code, body, h := f.do(http.MethodGet, "/field-groups/Ordered-Keys/", "")
	want := `{"id":"Ordered-Keys","title":"t","config":` + config + `,"status":"active","created_at":"` + ordered + `","updated_at":"` + ordered + `"}`
	if code != 200 || body != want {
		t.Errorf("get:\n got %d %s\nwant %s", code, body, want)
	}
	if h.Get("Content-Type") != "application/json; charset=UTF-8" || !strings.Contains(h.Get("Cache-Control"), "no-store") {
		t.Errorf("headers %v", h)
	}
	code, body, _ = f.do(http.MethodGet, "/field-groups", "")
	if code != 200 || !strings.HasPrefix(body, `[{"id":"product_info",`) || !strings.Contains(body, `{"id":"Ordered-Keys","title":"t","config":`+config) {
		t.Errorf("list: %d %s", code, body)
	}
	// Created in the site's time zone (Europe/Berlin in the test site).
	berlin, _ := time.LoadLocation("Europe/Berlin")
	if ts, err := time.ParseInLocation(time.DateTime, created, berlin); err != nil || time.Since(ts).Abs() > time.Minute {
		t.Errorf("created_at %q is not the site's local time now", created)
	}
}

func TestCreate_Errors(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodPost, "/field-groups", `{"group_key":"dup","title":"t"}`, 201, `{"success":true,"message":"Field group created","id":"dup"}`)
	tests := []struct {
		body, err string
	}{
		{`{"group_key":"dup","title":"t"}`, "A field group with this key already exists"},
		{`{"group_key":"DUP","title":"t"}`, "A field group with this key already exists"},
		{`{"title":"t"}`, "group_key: required, 1-191 characters of A-Z, a-z, 0-9, _ and -"},
		{`{"group_key":"bad key","title":"t"}`, "group_key: required, 1-191 characters of A-Z, a-z, 0-9, _ and -"},
		{`{"group_key":5,"title":"t"}`, "group_key: required, 1-191 characters of A-Z, a-z, 0-9, _ and -"},
		{`{"group_key":"` + strings.Repeat("k", 192) + `","title":"t"}`, "group_key: required, 1-191 characters of A-Z, a-z, 0-9, _ and -"},
		{`{"group_key":"g"}`, "title: required"},
		{`{"group_key":"g","title":"  "}`, "title: must not be empty"},
		{`{"group_key":"g","title":7}`, "title: must be a string"},
		{`{"group_key":"g","title":"` + strings.Repeat("é", 256) + `"}`, "title: at most 255 characters"},
		{`{"group_key":"g","title":"t","config":[]}`, "config: must be an object"},
		{`{"group_key":"g","title":"t","config":{}}`, "config.type: required"},
		{`{"group_key":"g","title":"t","config":{"type":"page"}}`, "config.type: must be one of post, taxonomy, user, options_page"},
		{`{"group_key":"g","title":"t","config":{"type":"post"}}`, "config.post_type: required when type is post"},
		{`{"group_key":"g","title":"t","config":{"type":"post","post_type":"Bad Type"}}`, "config.post_type: must be 1-20 characters of a-z, 0-9, _ and -"},
		{`{"group_key":"g","title":"t","config":{"type":"taxonomy"}}`, "config.taxonomy: required when type is taxonomy"},
		{`{"group_key":"g","title":"t","config":{"type":"user","position":"top"}}`, "config.position: must be one of normal, side, advanced"},
		{`{"group_key":"g","title":"t","config":{"type":"user","fields":"x"}}`, "config.fields: must be an object"},
		{`{"group_key":"g","title":"t","config":{"type":"user","fields":{"price":{"type":"money","label":"P"}}}}`, `config.fields.price.type: unknown field type "money"`},
		{`{"group_key":"g","title":"t","config":{"type":"user","fields":{"price":{"label":"P"}}}}`, "config.fields.price.type: required"},
		{`{"group_key":"g","title":"t","config":{"type":"user","fields":{"price":{"type":"text"}}}}`, "config.fields.price.label: must be a non-empty string"},
		{`{"group_key":"g","title":"t","config":{"type":"user","fields":{"price":{"type":"text","label":"P","maxlength":"5"}}}}`, "config.fields.price.maxlength: must be an integer"},
		{`{"group_key":"g","title":"t","config":{"type":"user","fields":{"price":{"type":"text","label":"P","maxlength":5.5}}}}`, "config.fields.price.maxlength: must be an integer"},
		{`{"group_key":"g","title":"t","config":{"type":"user","fields":{"price":{"type":"text","label":"P","choices":{}}}}}`, `config.fields.price.choices: not a setting of field type "text"`},
		{`{"group_key":"g","title":"t","config":{"type":"user","fields":{"pic":{"type":"image","label":"P","return_format":"blob"}}}}`, "config.fields.pic.return_format: must be one of array, url, id"},
		{`{"group_key":"g","title":"t","config":{"type":"user","fields":{"Bad-Name":{"type":"text","label":"P"}}}}`, `config.fields."Bad-Name": field names are 1-64 characters of a-z, 0-9 and _`},
		{`[1,2]`, "body: must be a JSON object"},
		{`{"group_key":"g","title":"t","config":{"type":"user","fields":{"n":{"type":"number","label":"N","max":1e400}}}}`, "config.fields.n.max: number beyond what a PHP float holds"},
		{`{"group_key":"g","title":"t","config":{"type":"user","extra":[1,-1e400]}}`, "config.extra[1]: number beyond what a PHP float holds"},
		{`{"group_key":"g","group_key":"h","title":"t"}`, `body: not valid JSON: duplicate key "group_key"`},
	}
	for _, tt := range tests {
		f.expect(http.MethodPost, "/field-groups", tt.body, 400, `{"error":`+jsonString(tt.err)+`}`)
	}
	// What PHP's json_decode refuses never reaches the handler: WordPress's
	// own error, with PHP's code and message.
	for body, want := range map[string]string{
		`not json`: `{"code":"rest_invalid_json","message":"Invalid JSON body passed.","data":{"status":400,"json_error_code":4,"json_error_message":"Syntax error"}}`,
		"{\"group_key\":\"g\",\"title\":\"a\xff\xfe\xc3\x28b\"}": `{"code":"rest_invalid_json","message":"Invalid JSON body passed.","data":{"status":400,"json_error_code":5,"json_error_message":"Malformed UTF-8 characters, possibly incorrectly encoded"}}`,
	} {
		f.expect(http.MethodPost, "/field-groups", body, 400, want)
	}
	if n := f.count(); n != 1 {
		t.Errorf("%d rows after refused creates, want 1", n)
	}
}

func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

func TestCreate_BodyKinds(t *testing.T) {
	f := newFixture(t)
	req, _ := http.NewRequest(http.MethodPost, f.url+base+"/field-groups", strings.NewReader("group_key=g&title=t"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("admin", adminPW)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 415 || string(b) != `{"error":"The request body must be JSON (Content-Type: application/json)."}` {
		t.Errorf("form body: %d %s", resp.StatusCode, b)
	}
	big := `{"group_key":"g","title":"t","pad":"` + strings.Repeat("x", 1<<20) + `"}`
	code, body, _ := f.do(http.MethodPost, "/field-groups", big)
	if code != 413 {
		t.Errorf("2 MiB body: %d %s", code, body)
	}
	if n := f.count(); n != 0 {
		t.Errorf("%d rows written", n)
	}
}

func TestOddIDs(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodPost, "/field-groups", `{"group_key":"abc","title":"t"}`, 201, `{"success":true,"message":"Field group created","id":"abc"}`)
	notFound := `{"error":"Field group not found"}`
	for _, id := range []string{"a%2Fb", "..", "%2E%2E", "a%22b", "a'b", strings.Repeat("a", 300), "ABC", "nope", "a%00b"} {
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			f.expect(m, "/field-groups/"+id, "", 404, notFound)
		}
		f.expect(http.MethodPut, "/field-groups/"+id, `{"title":"x"}`, 404, notFound)
		f.expect(http.MethodPost, "/field-groups/"+id+"/toggle", "", 404, notFound)
	}
	if title, _, _, _, _ := f.row("abc"); title != "t" {
		t.Error("a lookup by another case touched the row")
	}
}

func TestUpdateDelete(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodPost, "/field-groups", `{"group_key":"g1","title":"old","config":{"type":"user","fields":{"a":{"type":"text","label":"A"}}}}`, 201,
		`{"success":true,"message":"Field group created","id":"g1"}`)
	f.tdb.SQL.Exec("UPDATE wp_fieldmgr_groups SET updated_at = '2000-01-01 00:00:00'")
	f.expect(http.MethodPut, "/field-groups/g1", `{"title":"new"}`, 200, `{"success":true,"message":"Field group updated"}`)
	title, cfg, _, created, updated := f.row("g1")
	if title != "new" || cfg != `{"type":"user","fields":{"a":{"type":"text","label":"A"}}}` || updated == "2000-01-01 00:00:00" || updated < created {
		t.Errorf("after title update: %q %q %q", title, cfg, updated)
	}
	f.expect(http.MethodPut, "/field-groups/g1", `{"config":{"type":"options_page","fields":[]}}`, 200, `{"success":true,"message":"Field group updated"}`)
	if title, cfg, _, _, _ := f.row("g1"); title != "new" || cfg != `{"type":"options_page","fields":{}}` {
		t.Errorf("after config update: %q %q", title, cfg)
	}
	f.expect(http.MethodPut, "/field-groups/g1", `{"other":1}`, 400, `{"error":"title or config: at least one is required"}`)
	f.expect(http.MethodPut, "/field-groups/g1", `{"title":"ok","config":{"type":"bad"}}`, 400, `{"error":"config.type: must be one of post, taxonomy, user, options_page"}`)
	if title, _, _, _, _ := f.row("g1"); title != "new" {
		t.Error("a refused update wrote the title")
	}
	f.expect(http.MethodPut, "/field-groups/none", `{"title":"x"}`, 404, `{"error":"Field group not found"}`)
	f.expect(http.MethodDelete, "/field-groups/g1", "", 200, `{"success":true,"message":"Field group deleted"}`)
	f.expect(http.MethodDelete, "/field-groups/g1", "", 404, `{"error":"Field group not found"}`)
	f.expect(http.MethodGet, "/field-groups/g1", "", 404, `{"error":"Field group not found"}`)
}

func TestToggle_ConcurrentParity(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodPost, "/field-groups", `{"group_key":"t1","title":"t"}`, 201, `{"success":true,"message":"Field group created","id":"t1"}`)
	f.expect(http.MethodPost, "/field-groups/t1/toggle", "", 200, `{"success":true,"status":"inactive","message":"Field group deactivated"}`)
	f.expect(http.MethodPost, "/field-groups/t1/toggle", "", 200, `{"success":true,"status":"active","message":"Field group activated"}`)
	const n = 50
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body, _ := f.do(http.MethodPost, "/field-groups/t1/toggle", "")
			mu.Lock()
			seen[fmt.Sprint(code, body)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	off := `200{"success":true,"status":"inactive","message":"Field group deactivated"}`
	on := `200{"success":true,"status":"active","message":"Field group activated"}`
	if seen[off] != n/2 || seen[on] != n/2 {
		t.Errorf("responses %v: each toggle must report the status it made", seen)
	}
	if _, _, status, _, _ := f.row("t1"); status != "active" {
		t.Errorf("after %d toggles: %s", n, status)
	}
}

func TestUpdate_ConcurrentNoLostWrite(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodPost, "/field-groups", `{"group_key":"u1","title":"t"}`, 201, `{"success":true,"message":"Field group created","id":"u1"}`)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			body := fmt.Sprintf(`{"title":"title %d"}`, i)
			if i%2 == 1 {
				body = fmt.Sprintf(`{"config":{"type":"user","n":%d}}`, i)
			}
			if code, b, _ := f.do(http.MethodPut, "/field-groups/u1", body); code != 200 {
				t.Errorf("%d %s", code, b)
			}
		}(i)
	}
	wg.Wait()
	title, cfg, _, _, _ := f.row("u1")
	// Title-only and config-only updates touch only their column: the last
	// of each kind survives, neither overwrote the other.
	if !strings.HasPrefix(title, "title ") || !strings.HasPrefix(cfg, `{"type":"user","n":`) {
		t.Errorf("title %q config %q", title, cfg)
	}
}

func TestFieldSchemas(t *testing.T) {
	f := newFixture(t)
	code, body, _ := f.do(http.MethodGet, "/field-schemas", "")
	text := `"text":{"label":"Text","settings":{"default_value":{"type":"string"},"placeholder":{"type":"string"},"maxlength":{"type":"integer"},"required":{"type":"boolean"},"instructions":{"type":"string"}}}`
	if code != 200 || !strings.HasPrefix(body, "{"+text+",") {
		t.Errorf("%d %s", code, body)
	}
	for _, typ := range []string{"text", "textarea", "number", "email", "url", "password", "select", "checkbox", "radio", "true_false", "image", "file", "wysiwyg", "date_picker", "color_picker"} {
		if !strings.Contains(body, `"`+typ+`":{"label":`) {
			t.Errorf("schema lacks %s", typ)
		}
	}
	if !strings.Contains(body, `"return_format":{"type":"string","enum":["array","url","id"]}`) || !strings.Contains(body, `"choices":{"type":"object"}`) {
		t.Error("image/file enum or choices missing")
	}
}

func TestPHPSerializedConfigIsRead(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodGet, "/field-groups", "", 200, `[]`) // creates the table
	f.tdb.SQL.Exec(`INSERT INTO wp_fieldmgr_groups (group_key, title, config, status, created_at, updated_at) VALUES ('old', 'Old', ?, 'inactive', '2020-01-02 03:04:05', '2020-01-02 03:04:05')`,
		`a:4:{s:4:"type";s:4:"post";s:9:"post_type";s:4:"page";s:8:"position";s:6:"normal";s:6:"fields";a:0:{}}`)
	f.expect(http.MethodGet, "/field-groups/old", "", 200,
		`{"id":"old","title":"Old","config":{"type":"post","post_type":"page","position":"normal","fields":{}},"status":"inactive","created_at":"2020-01-02 03:04:05","updated_at":"2020-01-02 03:04:05"}`)
}

func TestOtherRoutesGoToPHP(t *testing.T) {
	f := newFixture(t)
	for _, c := range [][2]string{{http.MethodPatch, "/field-groups/x"}, {http.MethodGet, "/other"}, {http.MethodGet, "/field-groups/x/toggle"}} {
		if code, body, _ := f.do(c[0], c[1], ""); code != 200 || body != "php" {
			t.Errorf("%s %s: %d %s", c[0], c[1], code, body)
		}
	}
}

func TestRESTHeadersAndOptions(t *testing.T) {
	f := newFixture(t)
	req := func(method, path, login, pw, origin string) (*http.Response, string) {
		r, _ := http.NewRequest(method, f.url+base+path, nil)
		if login != "" {
			r.SetBasicAuth(login, pw)
		}
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, body := req(http.MethodOptions, "/field-groups", "", "", "")
	want := `{"namespace":"fieldmgr/v1","methods":["GET","POST"],"endpoints":[{"methods":["GET"],"args":[]},{"methods":["POST"],"args":[]}],"_links":{"self":[{"href":"http://example.test/wp-json/fieldmgr/v1/field-groups"}]}}`
	if resp.StatusCode != 200 || body != want || resp.Header.Get("Allow") != "" {
		t.Errorf("anonymous OPTIONS: %d %s Allow=%q", resp.StatusCode, body, resp.Header.Get("Allow"))
	}
	resp, _ = req(http.MethodOptions, "/field-groups/abc", "admin", adminPW, "")
	if resp.StatusCode != 200 || resp.Header.Get("Allow") != "GET, PUT, DELETE" {
		t.Errorf("admin OPTIONS: %d Allow=%q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	resp, _ = req(http.MethodGet, "/field-groups", "admin", adminPW, "https://front.example")
	h := resp.Header
	if h.Get("Allow") != "GET, POST" || h.Get("Link") != `<http://example.test/wp-json/>; rel="https://api.w.org/"` ||
		h.Get("Access-Control-Allow-Origin") != "https://front.example" || h.Get("Access-Control-Allow-Credentials") != "true" ||
		h.Get("Access-Control-Allow-Methods") != "OPTIONS, GET, POST, PUT, PATCH, DELETE" || h.Get("Vary") != "Origin, Authorization, Cookie" {
		t.Errorf("admin GET with Origin: %v", h)
	}
	resp, _ = req(http.MethodGet, "/field-groups", "", "", "")
	if resp.StatusCode != 401 || resp.Header.Get("Vary") != "Origin, Authorization, Cookie" || resp.Header.Get("Allow") != "" {
		t.Errorf("anonymous GET: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body = req(http.MethodHead, "/field-groups", "admin", adminPW, "")
	if resp.StatusCode != 200 || body != "" || resp.Header.Get("Content-Type") != "application/json; charset=UTF-8" {
		t.Errorf("HEAD: %d %q", resp.StatusCode, body)
	}
}

// send is a request as the administrator with extra headers.
func (f *fixture) send(method, path, body string, hdr ...string) (int, string, http.Header) {
	f.t.Helper()
	return testsite.Send(f.t, method, f.url+base+path, body, "admin", adminPW, hdr...)
}

// TestConditionalRequests: ETags from what is stored, 304 on a match, 412
// on a stale If-Match with nothing written (docs/api.md §5).
func TestConditionalRequests(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodPost, "/field-groups", `{"group_key":"g1","title":"One"}`, 201, `{"success":true,"message":"Field group created","id":"g1"}`)
	f.expect(http.MethodPost, "/field-groups", `{"group_key":"g2","title":"Two"}`, 201, `{"success":true,"message":"Field group created","id":"g2"}`)

	code, body, h := f.send(http.MethodGet, "/field-groups/g1", "")
	tag := h.Get("ETag")
	if code != 200 || len(tag) != 34 || h.Get("Vary") != "Origin, Authorization, Cookie" || !strings.Contains(h.Get("Cache-Control"), "private") ||
		h.Get("Cache-Tag") != "fieldmgr,fieldmgr:g1" || h.Get("Surrogate-Key") != "fieldmgr fieldmgr:g1" {
		t.Fatalf("GET: %d %s %v", code, body, h)
	}
	if _, _, h2 := f.send(http.MethodGet, "/field-groups/g1", ""); h2.Get("ETag") != tag {
		t.Errorf("ETag changed without a change: %s %s", tag, h2.Get("ETag"))
	}
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		code, body, h = f.send(m, "/field-groups/g1", "", "If-None-Match", `"other", `+tag)
		if code != 304 || body != "" || h.Get("ETag") != tag || h.Get("Cache-Control") == "" || h.Get("Vary") == "" {
			t.Errorf("%s If-None-Match: %d %q %v", m, code, body, h)
		}
	}
	if code, _, _ := f.send(http.MethodGet, "/field-groups/g1", "", "If-None-Match", `"stale"`); code != 200 {
		t.Errorf("stale If-None-Match: %d", code)
	}
	_, _, lh := f.send(http.MethodGet, "/field-groups", "")
	listTag := lh.Get("ETag")
	if lh.Get("Cache-Tag") != "fieldmgr,fieldmgr:list,fieldmgr:g1,fieldmgr:g2" {
		t.Errorf("list Cache-Tag %q", lh.Get("Cache-Tag"))
	}
	if code, _, _ := f.send(http.MethodGet, "/field-groups", "", "If-None-Match", listTag); code != 304 {
		t.Errorf("list If-None-Match: %d", code)
	}
	_, _, sh := f.send(http.MethodGet, "/field-schemas", "")
	if code, _, _ := f.send(http.MethodGet, "/field-schemas", "", "If-None-Match", sh.Get("ETag")); code != 304 || sh.Get("ETag") == "" {
		t.Errorf("schemas If-None-Match: %d", code)
	}

	precondition := `{"code":"wpsidecar_precondition_failed","message":"The resource has changed since it was read (If-Match does not match its current ETag); read it again and retry.","data":{"status":412}}`
	_, _, _, _, before := f.row("g1")
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPut, "/field-groups/g1", `{"title":"Changed"}`},
		{http.MethodPost, "/field-groups/g1/toggle", ""},
		{http.MethodDelete, "/field-groups/g1", ""},
	} {
		code, body, _ := f.send(c.method, c.path, c.body, "If-Match", `"stale"`)
		if code != 412 || body != precondition {
			t.Errorf("%s %s stale If-Match: %d %s", c.method, c.path, code, body)
		}
	}
	if title, _, status, _, updated := f.row("g1"); title != "One" || status != "active" || updated != before {
		t.Errorf("412s wrote: %q %q %q", title, status, updated)
	}
	// A missing group is 404 before any precondition.
	if code, _, _ := f.send(http.MethodPut, "/field-groups/nope", `{"title":"x"}`, "If-Match", `"stale"`); code != 404 {
		t.Errorf("missing group with If-Match: %d", code)
	}

	// The current tag lets a write through; the write moves the tag, so the
	// same tag is stale for the next write, and the list's tag moved too.
	if code, body, _ := f.send(http.MethodPut, "/field-groups/g1", `{"title":"Changed"}`, "If-Match", tag); code != 200 {
		t.Fatalf("PUT with current If-Match: %d %s", code, body)
	}
	_, _, h = f.send(http.MethodGet, "/field-groups/g1", "")
	if h.Get("ETag") == tag {
		t.Error("ETag did not change with the data")
	}
	if code, _, _ := f.send(http.MethodPost, "/field-groups/g1/toggle", "", "If-Match", tag); code != 412 {
		t.Errorf("toggle with the old tag: %d", code)
	}
	if code, _, _ := f.send(http.MethodPost, "/field-groups/g1/toggle", "", "If-Match", h.Get("ETag")); code != 200 {
		t.Errorf("toggle with the new tag: %d", code)
	}
	if _, _, lh2 := f.send(http.MethodGet, "/field-groups", ""); lh2.Get("ETag") == listTag {
		t.Error("list ETag did not change")
	}
	// A change made outside the sidecar (PHP, another replica) changes it too.
	_, _, h = f.send(http.MethodGet, "/field-groups/g2", "")
	f.tdb.SQL.Exec("UPDATE wp_fieldmgr_groups SET config = '{\"fields\":{}}' WHERE group_key = 'g2'")
	if code, _, _ := f.send(http.MethodGet, "/field-groups/g2", "", "If-None-Match", h.Get("ETag")); code != 200 {
		t.Errorf("outside change still 304: %d", code)
	}
	if code, _, _ := f.send(http.MethodDelete, "/field-groups/g2", "", "If-Match", "*"); code != 200 {
		t.Errorf("DELETE If-Match *: %d", code)
	}
}

// TestBodyCheckedBetweenAuthenticationAndPermission: WordPress refuses bad
// credentials before it reads a body, and a body PHP cannot decode before
// it asks whether the user may use the route.
func TestBodyCheckedBetweenAuthenticationAndPermission(t *testing.T) {
	f := newFixture(t)
	const bad = `{"group_key":`
	const invalidJSON = `{"code":"rest_invalid_json","message":"Invalid JSON body passed.","data":{"status":400,"json_error_code":4,"json_error_message":"Syntax error"}}`
	for _, c := range []struct {
		who, pw    string
		status     int
		wantPrefix string
	}{
		{"", "", 400, invalidJSON},                              // anonymous: the body first
		{"sub", subPW, 400, invalidJSON},                        // no capability: the body first
		{"admin", "wrong", 401, `{"code":"incorrect_password"`}, // bad credentials first
	} {
		code, body, _ := f.do(http.MethodPost, "/field-groups", bad, c.who, c.pw)
		if code != c.status || !strings.HasPrefix(body, c.wantPrefix) {
			t.Errorf("%q: %d %s", c.who, code, body)
		}
	}
}

// TestGlobalParameters: WordPress's global parameters on a real route:
// _fields on a group and a list, _envelope carrying the route's headers,
// ETags that name the shape, _method deleting through a GET.
func TestGlobalParameters(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodPost, "/field-groups", `{"group_key":"g1","title":"One","config":{"type":"post","post_type":"post","fields":{"a":{"type":"text","label":"A"}}}}`, 201, `{"success":true,"message":"Field group created","id":"g1"}`)

	f.expect(http.MethodGet, "/field-groups/g1?_fields=id,config.fields.a.label", "", 200, `{"id":"g1","config":{"fields":{"a":{"label":"A"}}}}`)
	f.expect(http.MethodGet, "/field-groups?_fields=title", "", 200, `[{"title":"One"}]`)

	_, _, plain := f.send(http.MethodGet, "/field-groups/g1", "")
	code, body, h := f.send(http.MethodGet, "/field-groups/g1?_envelope&_fields=status", "")
	// The route's own headers move into the envelope (the ETag naming
	// this shape); the REST server's stay headers.
	base := strings.Trim(plain.Get("ETag"), `"`)
	wantHead := `{"body":{"status":"active"},"status":200,"headers":{"ETag":"\"` + base + `-v`
	wantTail := `\"","Cache-Tag":"fieldmgr,fieldmgr:g1","Surrogate-Key":"fieldmgr fieldmgr:g1","Allow":"GET, PUT, DELETE"}}`
	if code != 200 || !strings.HasPrefix(body, wantHead) || !strings.HasSuffix(body, wantTail) || len(body) != len(wantHead)+8+len(wantTail) ||
		h.Get("Allow") != "" || h.Get("Cache-Tag") != "" || h.Get("ETag") != "" || h.Get("X-Robots-Tag") != "noindex" {
		t.Errorf("envelope: %d %s %v", code, body, h)
	}

	// The shaped answer's tag is its own: it revalidates, the plain
	// answer's tag does not.
	_, _, shaped := f.send(http.MethodGet, "/field-groups/g1?_fields=id", "")
	tag := shaped.Get("ETag")
	if tag == plain.Get("ETag") || !strings.HasPrefix(tag, strings.TrimSuffix(plain.Get("ETag"), `"`)+"-v") {
		t.Errorf("shaped tag %s, plain %s", tag, plain.Get("ETag"))
	}
	if code, _, h := f.send(http.MethodGet, "/field-groups/g1?_fields=id", "", "If-None-Match", tag); code != 304 || h.Get("ETag") != tag {
		t.Errorf("If-None-Match with the shaped tag: %d %s", code, h.Get("ETag"))
	}
	if code, _, _ := f.send(http.MethodGet, "/field-groups/g1?_fields=id", "", "If-None-Match", plain.Get("ETag")); code != 200 {
		t.Errorf("If-None-Match with the plain tag on a shaped request: %d", code)
	}
	if code, _, _ := f.send(http.MethodGet, "/field-groups/g1?_fields=title", "", "If-None-Match", tag); code != 200 {
		t.Errorf("If-None-Match with another shape's tag: %d", code)
	}

	// A subscriber's GET …?_method=DELETE is a DELETE, refused as one; the
	// administrator's deletes.
	if code, _, _ := f.do(http.MethodGet, "/field-groups/g1?_method=DELETE", "", "sub", subPW); code != 403 || f.count() != 1 {
		t.Errorf("subscriber's _method=DELETE: %d, %d rows", code, f.count())
	}
	f.expect(http.MethodGet, "/field-groups/g1?_method=DELETE", "", 200, `{"success":true,"message":"Field group deleted"}`)
	if f.count() != 0 {
		t.Error("_method=DELETE did not delete")
	}
	// POST with X-HTTP-Method-Override: GET lists and writes nothing.
	code, body, _ = f.send(http.MethodPost, "/field-groups", `{"group_key":"g2","title":"Two"}`, "X-HTTP-Method-Override", "GET")
	if code != 200 || body != "[]" || f.count() != 0 {
		t.Errorf("POST as GET: %d %s, %d rows", code, body, f.count())
	}
}

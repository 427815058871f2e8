package themeopts_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testsite"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/internal/reload"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

const (
	adminPW  = "abcdEFGHijklMNOPqrstUVWX"
	editorPW = "qwerASDFzxcvTYUIghjkBNML"
	subPW    = "zyxwVUTSrqpoNMLKjihgFEDC"
	base     = "/wp-json/themeopts/v1"
	optName  = "themeopts_options"
)

type fixture struct {
	t       *testing.T
	tdb     *testdb.DB
	url     string
	svc     *themeopts.Service
	cfg     *reload.File[themeoption.Config]
	cfgPath string
}

// newFixture serves themeopts/v1 from a fresh database with the test
// configuration (copied, so that a test may change it).
func newFixture(t *testing.T) *fixture {
	t.Helper()
	tdb := testdb.New(t)
	site := testsite.New(t, tdb, testsite.User{Login: "admin", Role: "administrator", AppPassword: adminPW},
		testsite.User{Login: "editor", Role: "editor", AppPassword: editorPW},
		testsite.User{Login: "sub", Role: "subscriber", AppPassword: subPW})
	raw, err := os.ReadFile("testdata/config.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "themeopts.json")
	os.WriteFile(path, raw, 0o644)
	cfg, err := reload.Open(path, "theme options configuration", themeoption.ParseConfig, func(_ *themeoption.Config, ev *zerolog.Event) *zerolog.Event { return ev }, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	svc := themeopts.NewService(site.Auth, site.DB, site.Settings, cfg, zerolog.Nop())
	return &fixture{t: t, tdb: tdb, url: site.Serve(t, svc), svc: svc, cfg: cfg, cfgPath: path}
}

// do sends a request as the administrator (or as login/password when
// given; an empty login sends no credentials).
func (f *fixture) do(method, path, body string, creds ...string) (int, string) {
	f.t.Helper()
	login, pw := "admin", adminPW
	if len(creds) == 2 {
		login, pw = creds[0], creds[1]
	}
	code, got, _ := testsite.Send(f.t, method, f.url+base+path, body, login, pw)
	return code, got
}

func (f *fixture) expect(method, path, body string, wantStatus int, wantBody string) {
	f.t.Helper()
	code, got := f.do(method, path, body)
	if code != wantStatus || got != wantBody {
		f.t.Errorf("%s %s %s:\n got %d %s\nwant %d %s", method, path, body, code, got, wantStatus, wantBody)
	}
}

// row is the stored option row ("" and "" when missing).
func (f *fixture) row() (value, autoload string) {
	f.t.Helper()
	f.tdb.SQL.QueryRow("SELECT option_value, autoload FROM "+testdb.Prefix+"options WHERE option_name = ?", optName).Scan(&value, &autoload)
	return value, autoload
}

func TestAuth(t *testing.T) {
	f := newFixture(t)
	forbidden := `{"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":403}}`
	for _, c := range []struct {
		name, login, pw string
		status          int
		body            string
	}{
		{"anonymous", "", "", 403, forbidden},
		{"subscriber", "sub", subPW, 403, forbidden},
		{"bad password", "admin", "wrongwrongwrongwrongwron", 403, `{"code":"incorrect_password","message":"The provided password is an invalid application password.","data":{"status":403}}`},
		{"editor lacks edit_theme_options", "editor", editorPW, 403, forbidden},
		{"administrator", "admin", adminPW, 200, `{}`},
	} {
		if code, body := f.do(http.MethodGet, "/options", "", c.login, c.pw); code != c.status || body != c.body {
			t.Errorf("%s: %d %s, want %d %s", c.name, code, body, c.status, c.body)
		}
	}
	if code, _ := f.do(http.MethodPost, "/options", `{"tagline":"x"}`, "sub", subPW); code != 403 {
		t.Errorf("subscriber save: %d", code)
	}
	if v, _ := f.row(); v != "" {
		t.Errorf("refused save wrote %q", v)
	}

	// The capability comes from the configuration, and a reload changes it.
	cfg, _ := os.ReadFile(f.cfgPath)
	os.WriteFile(f.cfgPath, []byte(strings.Replace(string(cfg), `"edit_theme_options"`, `"edit_others_posts"`, 1)), 0o644)
	if err := f.cfg.Reload(); err != nil {
		t.Fatal(err)
	}
	if code, body := f.do(http.MethodGet, "/options", "", "editor", editorPW); code != 200 || body != `{}` {
		t.Errorf("editor under edit_others_posts: %d %s", code, body)
	}
	if code, body := f.do(http.MethodGet, "/options", "", "sub", subPW); code != 403 || body != forbidden {
		t.Errorf("subscriber under edit_others_posts: %d %s", code, body)
	}
}

func TestSave_OrderMergeAndStorage(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodGet, "/options", "", 200, `{}`)

	f.expect(http.MethodPost, "/options", `{"layout":"boxed","accent_color":"#ff0000","tagline":"Grüße 😀 <b>&</b> \"q\" a/b"}`, 200,
		`{"success":true,"message":"Options saved","options":{"layout":"boxed","accent_color":"#ff0000","tagline":"Grüße 😀 <b>&</b> \"q\" a/b"}}`)
	v, autoload := f.row()
	if want := `a:3:{s:6:"layout";s:5:"boxed";s:12:"accent_color";s:7:"#ff0000";s:7:"tagline";s:29:"Grüße 😀 <b>&</b> "q" a/b";}`; v != want || autoload != "auto" {
		t.Errorf("stored (%q, %q), want (%q, auto)", v, autoload, want)
	}

	// Saved ids keep their place, new ones are appended in request order,
	// an integer-like id is an integer key, floats stay floats.
	f.expect(http.MethodPost, "/options", `{"ratio":1.0,"accent_color":"#00ff00","10":"b","columns":4}`, 200,
		`{"success":true,"message":"Options saved","options":{"layout":"boxed","accent_color":"#00ff00","tagline":"Grüße 😀 <b>&</b> \"q\" a/b","ratio":1,"10":"b","columns":4}}`)
	v, _ = f.row()
	if want := `a:6:{s:6:"layout";s:5:"boxed";s:12:"accent_color";s:7:"#00ff00";s:7:"tagline";s:29:"Grüße 😀 <b>&</b> "q" a/b";s:5:"ratio";d:1;i:10;s:1:"b";s:7:"columns";i:4;}`; v != want {
		t.Errorf("stored %q\nwant   %q", v, want)
	}
	f.expect(http.MethodGet, "/options", "", 200, `{"layout":"boxed","accent_color":"#00ff00","tagline":"Grüße 😀 <b>&</b> \"q\" a/b","ratio":1,"10":"b","columns":4}`)
	f.expect(http.MethodGet, "/options/", "", 200, `{"layout":"boxed","accent_color":"#00ff00","tagline":"Grüße 😀 <b>&</b> \"q\" a/b","ratio":1,"10":"b","columns":4}`)
}

// TestSave_KeepsWhatPHPWrote: ids a save does not touch keep their exact
// PHP types and bytes, objects and unknown shapes included.
func TestSave_KeepsWhatPHPWrote(t *testing.T) {
	f := newFixture(t)
	php := `a:5:{s:6:"legacy";O:8:"stdClass":2:{s:1:"a";i:1;s:1:"b";a:0:{}}s:5:"ratio";d:0.30000000000000004;i:7;a:2:{i:1;s:1:"x";i:0;s:1:"y";}s:4:"list";a:2:{i:0;b:1;i:1;N;}s:5:"empty";a:0:{}}`
	f.tdb.SQL.Exec("INSERT INTO "+testdb.Prefix+"options (option_name, option_value, autoload) VALUES (?, ?, 'no')", optName, php)
	f.expect(http.MethodGet, "/options", "", 200, `{"legacy":{"a":1,"b":[]},"ratio":0.30000000000000004,"7":{"1":"x","0":"y"},"list":[true,null],"empty":[]}`)
	f.expect(http.MethodPost, "/options", `{"columns":2}`, 200,
		`{"success":true,"message":"Options saved","options":{"legacy":{"a":1,"b":[]},"ratio":0.30000000000000004,"7":{"1":"x","0":"y"},"list":[true,null],"empty":[],"columns":2}}`)
	v, autoload := f.row()
	if want := strings.Replace(php, "a:5:{", "a:6:{", 1)[:len(php)-1] + `s:7:"columns";i:2;}`; v != want || autoload != "no" {
		t.Errorf("stored (%q, %q)\nwant    (%q, no)", v, autoload, want)
	}
}

func TestSave_InvalidNothingWritten(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodPost, "/options", `{"tagline":"before"}`, 200, `{"success":true,"message":"Options saved","options":{"tagline":"before"}}`)
	before, _ := f.row()
	for _, c := range []struct{ body, id, msg string }{
		{`{"nope":1}`, "nope", "is not an option of the theme options configuration"},
		{`{"tagline":"ok","accent_color":"red"}`, "accent_color", `must be a hex color (#rgb, #rrggbb or #rrggbbaa) or ""`},
		{`{"accent_color":"#12345"}`, "accent_color", `must be a hex color (#rgb, #rrggbb or #rrggbbaa) or ""`},
		{`{"sticky_header":"true"}`, "sticky_header", "must be true or false"},
		{`{"sticky_header":1}`, "sticky_header", "must be true or false"},
		{`{"layout":"narrow"}`, "layout", "must be one of the field's options"},
		{`{"layout":["wide"]}`, "layout", "must be one of the field's options"},
		{`{"tagline":5}`, "tagline", "must be a string"},
		{`{"footer":null}`, "footer", "must be a string"},
		{`{"columns":"3"}`, "columns", "must be a number"},
		{`{"body_font":"Inter"}`, "body_font", "must be a typography object"},
		{`{"body_font":{"font-size":"16px"}}`, "body_font", `must be a typography object: "font-size" must be a numeric string or ""`},
		{`{"body_font":{"color":"red"}}`, "body_font", `must be a typography object: unknown key "color"`},
		{`{"body_font":{"subsets":"latin"}}`, "body_font", `must be a typography object: "subsets" must be a list of strings`},
		{`{"logo":{"id":"5","url":"https://x/y.png"}}`, "logo", `must be an image object: "id" must be an integer`},
		{`{"logo":{"url":"https://x/y.png"}}`, "logo", `must be an image object: "id" is missing`},
		{`{"logo":[]}`, "logo", `must be an image object: "id" is missing`},
		{`{"slides":{"id":1}}`, "slides", "must be a list"},
		{`{"slides":[{"id":1,"url":"u"},{"id":2}]}`, "slides", `item 1 must be an image object: "url" is missing`},
		{`{"social_links":{"mastodon":"https://x"}}`, "social_links", "must be a list"},
		{`{"social_links":[{"platform":"x","url":1}]}`, "social_links", `item 0 must be a {platform, url} object: "url" must be a string`},
	} {
		want := fmt.Sprintf(`{"code":"themeopts_invalid_option","message":"Invalid value for option %s: %s.","data":{"status":400}}`,
			jsonQuote(`"`+c.id+`"`), jsonQuote(c.msg))
		f.expect(http.MethodPost, "/options", c.body, 400, want)
	}
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`[]`, 400, `{"code":"themeopts_invalid_body","message":"The request body must be a JSON object.","data":{"status":400}}`},
		{`"x"`, 400, `{"code":"themeopts_invalid_body","message":"The request body must be a JSON object.","data":{"status":400}}`},
		{`{"tagline":`, 400, `{"code":"rest_invalid_json","message":"Invalid JSON body passed.","data":{"status":400,"json_error_code":4,"json_error_message":"Syntax error"}}`},
		{"{\"tagline\":\"a\xff\xfe\xc3\x28b\"}", 400, `{"code":"rest_invalid_json","message":"Invalid JSON body passed.","data":{"status":400,"json_error_code":5,"json_error_message":"Malformed UTF-8 characters, possibly incorrectly encoded"}}`},
		{`{"columns":1e999}`, 400, `{"code":"themeopts_invalid_option","message":"Invalid value for option \"columns\": must be a number.","data":{"status":400}}`},
		{`{"columns":-1e999}`, 400, `{"code":"themeopts_invalid_option","message":"Invalid value for option \"columns\": must be a number.","data":{"status":400}}`},
		{" ", 400, `{"code":"rest_invalid_json","message":"Invalid JSON body passed.","data":{"status":400,"json_error_code":4,"json_error_message":"Syntax error"}}`},
	} {
		f.expect(http.MethodPost, "/options", c.body, c.status, c.want)
	}
	// Not JSON at all.
	req, _ := http.NewRequest(http.MethodPost, f.url+base+"/options", strings.NewReader("tagline=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("admin", adminPW)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 415 || string(b) != `{"code":"themeopts_unsupported_media_type","message":"The request body must be JSON (Content-Type: application/json).","data":{"status":415}}` {
		t.Errorf("form body: %d %s", resp.StatusCode, b)
	}
	// Too large.
	code, body := f.do(http.MethodPost, "/options", `{"tagline":"`+strings.Repeat("x", 1<<20)+`"}`)
	if code != 413 || !strings.Contains(body, `"wpsidecar_body_too_large"`) {
		t.Errorf("big body: %d %s", code, body)
	}
	if after, _ := f.row(); after != before {
		t.Errorf("row changed by refused saves: %q", after)
	}
}

func jsonQuote(s string) string {
	return strings.TrimSuffix(strings.TrimPrefix(string(phpserial.JSON(phpserial.Value{Kind: phpserial.String, Str: s})), `"`), `"`)
}

func TestReset(t *testing.T) {
	f := newFixture(t)
	f.tdb.SQL.Exec("INSERT INTO "+testdb.Prefix+"options (option_name, option_value, autoload) VALUES (?, ?, 'yes')", optName,
		`a:3:{s:7:"tagline";s:2:"hi";s:5:"old_x";i:1;s:7:"columns";i:9;}`)
	defaults := `"accent_color":"#3366ff","sticky_header":true,"layout":"wide","body_font":{"font-family":"Inter","font-weight":"400","font-size":"16","line-height":"1.5","letter-spacing":"0","text-transform":"none","font-style":"normal","subsets":["latin"]},"slides":[],"social_links":[{"platform":"mastodon","url":"https:\/\/example.social\/@site"}],"columns":3,"ratio":1.5,"10":"a"`
	code, body := f.do(http.MethodPost, "/options/reset", "")
	if code != 200 || !sameJSON(body, `{"success":true,"message":"All options reset to defaults","options":{`+defaults+`}}`) {
		t.Errorf("reset: %d %s", code, body)
	}
	v, autoload := f.row()
	if !strings.HasPrefix(v, `a:9:{s:12:"accent_color";s:7:"#3366ff";s:13:"sticky_header";b:1;`) || !strings.HasSuffix(v, `s:7:"columns";i:3;s:5:"ratio";d:1.5;i:10;s:1:"a";}`) || autoload != "yes" {
		t.Errorf("stored after reset: (%q, %q)", v, autoload)
	}
}

func TestResetSection(t *testing.T) {
	f := newFixture(t)
	f.tdb.SQL.Exec("INSERT INTO "+testdb.Prefix+"options (option_name, option_value, autoload) VALUES (?, ?, 'yes')", optName,
		`a:4:{s:7:"columns";i:9;s:6:"layout";s:5:"boxed";s:7:"tagline";s:2:"hi";s:5:"old_x";i:1;}`)
	// general: layout reset in place, tagline (no default) untouched, the
	// section's other defaults appended in configuration order.
	f.expect(http.MethodPost, "/options/reset-section", `{"section":"general"}`, 200,
		`{"success":true,"message":"Section reset to defaults","section":"general","options":{"columns":9,"layout":"wide","tagline":"hi","old_x":1,"accent_color":"#3366ff","sticky_header":true}}`)
	// The query parameter works; the body wins over it.
	code, body := f.do(http.MethodPost, "/options/reset-section?section=style", "")
	if code != 200 || !strings.HasPrefix(body, `{"success":true,"message":"Section reset to defaults","section":"style","options":{"columns":3,`) {
		t.Errorf("query section: %d %s", code, body)
	}
	code, body = f.do(http.MethodPost, "/options/reset-section?section=nope", `{"section":"general"}`)
	if code != 200 || !strings.Contains(body, `"section":"general"`) {
		t.Errorf("body beats query: %d %s", code, body)
	}
	missing := `{"code":"themeopts_missing_section","message":"A section id is required: {\"section\": \"<id>\"}.","data":{"status":400}}`
	before, _ := f.row()
	f.expect(http.MethodPost, "/options/reset-section", "", 400, missing)
	f.expect(http.MethodPost, "/options/reset-section", `{}`, 400, missing)
	f.expect(http.MethodPost, "/options/reset-section", `{"section":""}`, 400, missing)
	f.expect(http.MethodPost, "/options/reset-section", `{"section":5}`, 400, missing)
	f.expect(http.MethodPost, "/options/reset-section?section=general", `{"section":null}`, 400, missing)
	f.expect(http.MethodPost, "/options/reset-section", `{"section":"nope"}`, 404, `{"code":"themeopts_unknown_section","message":"Unknown section \"nope\".","data":{"status":404}}`)
	if after, _ := f.row(); after != before {
		t.Errorf("refused resets changed the row")
	}
}

func TestConfigAndDevPanel(t *testing.T) {
	f := newFixture(t)
	code, body := f.do(http.MethodGet, "/config", "")
	file, _ := os.ReadFile("testdata/config.json")
	if code != 200 || !sameJSON(body, string(file)) || !strings.Contains(body, `"desc":"kept as it is in GET /config"`) {
		t.Errorf("config: %d %s", code, body)
	}

	f.tdb.SQL.Exec("INSERT INTO "+testdb.Prefix+"options (option_name, option_value, autoload) VALUES (?, ?, 'yes')", optName,
		`a:4:{s:12:"accent_color";s:7:"#3366ff";s:6:"layout";s:5:"boxed";s:5:"ratio";d:1.5;s:5:"old_x";i:1;}`)
	v, _ := f.row()
	code, body = f.do(http.MethodGet, "/dev-panel", "")
	wantStats := fmt.Sprintf(`"stats":{"sections":2,"fields":12,"stored":3,"customized":1,"by_type":{"color":1,"switch":1,"select":1,"text":1,"typography":1,"media":1,"gallery":1,"social":1,"number":2,"editor":1,"radio":1},"option_bytes":%d,"orphaned":["old_x"]}}`, len(v))
	if code != 200 || !strings.HasSuffix(body, wantStats) {
		t.Errorf("dev-panel stats: %d %s\nwant suffix %s", code, body, wantStats)
	}
	for _, want := range []string{
		`{"fields":[{"id":"accent_color","section":"general","type":"color","title":"Accent color","default":"#3366ff","value":"#3366ff","is_default":true,"stored":true},`,
		`{"id":"layout","section":"general","type":"select","title":"Layout","default":"wide","value":"boxed","is_default":false,"stored":true}`,
		`{"id":"tagline","section":"general","type":"text","title":"Tagline","default":null,"value":null,"is_default":true,"stored":false}`,
		`{"id":"ratio","section":"style","type":"number","title":"Ratio","default":1.5,"value":1.5,"is_default":true,"stored":true}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("dev-panel lacks %s", want)
		}
	}

	// Out of developer mode the route does not exist: PHP answers it.
	cfg, _ := os.ReadFile(f.cfgPath)
	os.WriteFile(f.cfgPath, []byte(strings.Replace(string(cfg), `"dev_mode": true`, `"dev_mode": false`, 1)), 0o644)
	if err := f.cfg.Reload(); err != nil {
		t.Fatal(err)
	}
	f.expect(http.MethodGet, "/dev-panel", "", 200, "php")
}

func TestCorruptRow(t *testing.T) {
	f := newFixture(t)
	corrupt := `a:2:{s:7:"tagline";s:99:"hi";}`
	f.tdb.SQL.Exec("INSERT INTO "+testdb.Prefix+"options (option_name, option_value, autoload) VALUES (?, ?, 'yes')", optName, corrupt)
	f.expect(http.MethodGet, "/options", "", 200, `{}`)
	f.expect(http.MethodPost, "/options", `{"tagline":"x"}`, 500,
		`{"code":"themeopts_corrupt_option","message":"The saved theme options cannot be read, so they were not changed. Reset all options to start again.","data":{"status":500}}`)
	if v, _ := f.row(); v != corrupt {
		t.Errorf("corrupt row changed by a save: %q", v)
	}
	if code, _ := f.do(http.MethodPost, "/options/reset", ""); code != 200 {
		t.Errorf("reset of a corrupt row: %d", code)
	}
	// A scalar (update_option('x', 'text')) reads as the empty set.
	f.tdb.SQL.Exec("UPDATE "+testdb.Prefix+"options SET option_value = 'plain text' WHERE option_name = ?", optName)
	f.expect(http.MethodGet, "/options", "", 200, `{}`)
}

// TestConcurrentSaves: 20 saves of different ids at once; none is lost.
func TestConcurrentSaves(t *testing.T) {
	f := newFixture(t)
	ids := []string{"accent_color", "sticky_header", "layout", "tagline", "columns", "ratio", "footer", "10"}
	values := []string{`"#abcdef"`, `false`, `"boxed"`, `"t"`, `7`, `2.5`, `"f"`, `"b"`}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := i % len(ids)
			if code, body := f.do(http.MethodPost, "/options", `{"`+ids[k]+`":`+values[k]+`}`); code != 200 {
				t.Errorf("save %d: %d %s", i, code, body)
			}
		}()
	}
	wg.Wait()
	_, body := f.do(http.MethodGet, "/options", "")
	for k, id := range ids {
		if !strings.Contains(body, `"`+id+`":`+values[k]) {
			t.Errorf("%s lost: %s", id, body)
		}
	}
}

func TestReload_InvalidKeepsConfig(t *testing.T) {
	f := newFixture(t)
	os.WriteFile(f.cfgPath, []byte(`{"opt_name":"","sections":[{"id":"a","fields":[{"id":"x","type":"money"}]}]}`), 0o644)
	err := f.cfg.Reload()
	if err == nil || !strings.Contains(err.Error(), "opt_name: must be") || !strings.Contains(err.Error(), `sections[0].fields[0].type: unknown field type "money"`) {
		t.Errorf("reload error: %v", err)
	}
	f.expect(http.MethodPost, "/options", `{"tagline":"still served"}`, 200, `{"success":true,"message":"Options saved","options":{"tagline":"still served"}}`)
}

func TestWatch_ReloadsOnChange(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.cfg.Watch(ctx, 10*time.Millisecond)
	cfg, _ := os.ReadFile(f.cfgPath)
	next := strings.Replace(string(cfg), `{"id": "tagline", "type": "text"`, `{"id": "motto", "type": "text"`, 1)
	tmp := f.cfgPath + ".new"
	os.WriteFile(tmp, []byte(next), 0o644)
	os.Rename(tmp, f.cfgPath) // as editors and config management tools write
	testwait.For(t, "the configuration change picked up", func() bool { _, ok := f.svc.Config().Field("motto"); return ok })
	f.expect(http.MethodPost, "/options", `{"motto":"m"}`, 200, `{"success":true,"message":"Options saved","options":{"motto":"m"}}`)
}

// sameJSON compares two JSON texts token by token (key order included,
// escapes not).
func sameJSON(a, b string) bool {
	va, err1 := phpserial.FromJSON([]byte(a))
	vb, err2 := phpserial.FromJSON([]byte(b))
	return err1 == nil && err2 == nil && string(phpserial.JSON(va)) == string(phpserial.JSON(vb))
}

// TestRoutes: only the contract's routes and methods are the sidecar's;
// OPTIONS describes a route, HEAD is GET without a body.
func TestRoutes(t *testing.T) {
	f := newFixture(t)
	f.expect(http.MethodGet, "/options/extra", "", 200, "php")
	f.expect(http.MethodPut, "/options", `{}`, 200, "php")
	f.expect(http.MethodGet, "/options/reset", "", 200, "php")
	f.expect(http.MethodOptions, "/options", "", 200,
		`{"namespace":"themeopts/v1","methods":["GET","POST"],"endpoints":[{"methods":["GET"],"args":[]},{"methods":["POST"],"args":[]}],"_links":{"self":[{"href":"http://example.test/wp-json/themeopts/v1/options"}]}}`)
	code, body := f.do(http.MethodHead, "/config", "")
	if code != 200 || body != "" {
		t.Errorf("HEAD /config: %d %q", code, body)
	}
	req, _ := http.NewRequest(http.MethodGet, f.url+base+"/config", nil)
	req.SetBasicAuth("admin", adminPW)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k, want := range map[string]string{"Allow": "GET", "Content-Type": "application/json; charset=UTF-8",
		"Cache-Control": "no-cache, must-revalidate, max-age=0, no-store, private", "X-Content-Type-Options": "nosniff"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

// send is a request as the administrator with extra headers.
func (f *fixture) send(method, path, body string, hdr ...string) (int, string, http.Header) {
	f.t.Helper()
	return testsite.Send(f.t, method, f.url+base+path, body, "admin", adminPW, hdr...)
}

// TestConditionalRequests: GET /options' ETag follows the stored row (also
// when PHP writes it); every write honours If-Match against it.
func TestConditionalRequests(t *testing.T) {
	f := newFixture(t)
	_, _, h := f.send(http.MethodGet, "/options", "")
	missing := h.Get("ETag")
	if code, body, _ := f.send(http.MethodGet, "/options", "", "If-None-Match", missing); code != 304 || body != "" {
		t.Errorf("304 on the missing row: %d %q", code, body)
	}
	precondition := `{"code":"wpsidecar_precondition_failed","message":"The resource has changed since it was read (If-Match does not match its current ETag); read it again and retry.","data":{"status":412}}`
	for _, c := range []struct{ path, body string }{
		{"/options", `{"tagline":"x"}`}, {"/options/reset", ""}, {"/options/reset-section", `{"section":"general"}`},
	} {
		if code, body, _ := f.send(http.MethodPost, c.path, c.body, "If-Match", `"stale"`); code != 412 || body != precondition {
			t.Errorf("POST %s stale If-Match: %d %s", c.path, code, body)
		}
	}
	if v, _ := f.row(); v != "" {
		t.Errorf("412s wrote %q", v)
	}
	code, _, wh := f.send(http.MethodPost, "/options", `{"tagline":"x"}`, "If-Match", missing)
	if code != 200 {
		t.Errorf("save with current If-Match: %d", code)
	}
	_, _, h = f.send(http.MethodGet, "/options", "")
	saved := h.Get("ETag")
	if wh.Get("ETag") != saved {
		t.Errorf("the save answered ETag %q, GET answers %q", wh.Get("ETag"), saved)
	}
	if h.Get("Cache-Tag") != "themeopts,themeopts:tagline" || h.Get("Surrogate-Key") != "themeopts themeopts:tagline" {
		t.Errorf("tags: %v", h)
	}
	if saved == missing {
		t.Error("ETag did not change with the row")
	}
	// An unchanged save writes nothing and keeps the tag.
	if _, _, wh = f.send(http.MethodPost, "/options", `{"tagline":"x"}`); wh.Get("ETag") != saved {
		t.Errorf("unchanged save answered ETag %q, want %q", wh.Get("ETag"), saved)
	}
	if _, _, h = f.send(http.MethodGet, "/options", ""); h.Get("ETag") != saved {
		t.Error("ETag changed by an unchanged save")
	}
	// PHP's update_option moves it.
	f.tdb.SQL.Exec("UPDATE "+testdb.Prefix+"options SET option_value = 'a:1:{s:7:\"tagline\";s:1:\"y\";}' WHERE option_name = ?", optName)
	if code, body, _ := f.send(http.MethodGet, "/options", "", "If-None-Match", saved); code != 200 || body != `{"tagline":"y"}` {
		t.Errorf("after a PHP write: %d %s", code, body)
	}
	if code, _, _ := f.send(http.MethodPost, "/options", `{"tagline":"z"}`, "If-Match", saved); code != 412 {
		t.Errorf("save against the tag PHP's write made stale: %d", code)
	}
	for _, path := range []string{"/config", "/dev-panel"} {
		_, _, h := f.send(http.MethodGet, path, "")
		if code, _, _ := f.send(http.MethodGet, path, "", "If-None-Match", h.Get("ETag")); code != 304 || h.Get("ETag") == "" {
			t.Errorf("%s If-None-Match: %d", path, code)
		}
	}
}

// TestResetSection_Documented: the description says what the handler
// takes (TestResetSection): the section in the body, which may be left
// out, or in the query.
func TestResetSection_Documented(t *testing.T) {
	for _, r := range themeopts.Routes() {
		if r.Path != "/options/reset-section" {
			continue
		}
		d := r.Handlers[0].Doc
		if d.Body != "SectionReset" || !d.BodyOptional || len(d.Query) != 1 || d.Query[0].Name != "section" || d.Query[0].Type != "string" {
			t.Errorf("reset-section is documented with body %q (optional: %v) and query %+v", d.Body, d.BodyOptional, d.Query)
		}
		return
	}
	t.Fatal("no reset-section route")
}

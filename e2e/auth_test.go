//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/store/objcache"
	"github.com/wpsidecar/wpsidecar/web/proxy"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// protected serves two routes behind auth.Require as the namespaces will:
// /fieldmgr (manage_options, 401 when unauthenticated) and /themeopts
// (edit_theme_options, 403), answering who was let in. The namespaces have
// no handlers yet, so the middleware is checked here, against the real
// WordPress's database, cookies, nonces and application passwords.
func protected(t *testing.T, environmentType string, trusted []netip.Prefix, adjust ...func(*auth.Options)) string {
	t.Helper()
	cfg, _, err := config.Load([]string{"--upstream", site.WPURL, "--wp-config", site.WPConfig}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ObjectCache != "redis" {
		t.Fatalf("object cache %q (%s), want redis", cfg.ObjectCache, cfg.Source("object-cache"))
	}
	cache, err := objcache.New(objcache.Options{Host: cfg.Redis.Host, Port: cfg.Redis.Port, Salt: cfg.Redis.Salt(), TablePrefix: cfg.TablePrefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	network, addr := cfg.DB.Address()
	db, err := store.Open(store.Options{Net: network, Addr: addr, User: cfg.DB.User, Password: cfg.DB.Password, DBName: cfg.DB.Name,
		Charset: cfg.DB.Charset, Collation: cfg.DB.Collate, TablePrefix: cfg.TablePrefix, Timeout: 5 * time.Second, Logger: zerolog.Nop(),
		Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	settings := store.NewSettingsWatcher(db, 100*time.Millisecond, store.SiteURLs{})
	if err := settings.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go settings.Run(ctx)
	o := auth.Options{Store: db, Settings: settings, Keys: cfg.Keys, EnvironmentType: environmentType,
		IsSecure: proxy.SecureFunc(trusted), Log: zerolog.Nop()}
	for _, f := range adjust {
		f(&o)
	}
	a := auth.New(o)
	who := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := auth.UserFrom(r.Context())
		wpjson.WriteJSON(w, http.StatusOK, map[string]any{"id": u.ID, "via": u.Via})
	})
	mux := http.NewServeMux()
	mux.Handle("/fieldmgr", a.Require(func(*http.Request) string { return "manage_options" }, http.StatusUnauthorized)(who))
	mux.Handle("/themeopts", a.Require(func(*http.Request) string { return "edit_theme_options" }, http.StatusForbidden)(who))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

type call struct {
	client *http.Client
	basic  [2]string
	nonce  *string
	query  string
	header map[string]string
}

func (c call) do(t *testing.T, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+c.query, nil)
	if c.basic[0] != "" {
		req.Header.Set("Authorization", wptest.BasicAuth(c.basic[0], c.basic[1]))
	}
	if c.nonce != nil {
		req.Header.Set("X-WP-Nonce", *c.nonce)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	cl := c.client
	if cl == nil {
		cl = wptest.Client()
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// errBody is WordPress's error shape, with <, > and & unescaped as
// wp_json_encode leaves them.
func errBody(code, message string, status int) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Data    map[string]int `json:"data"`
	}{code, message, map[string]int{"status": status}})
	return strings.TrimSuffix(b.String(), "\n")
}

func ok(id int64, via string) string { return fmt.Sprintf(`{"id":%d,"via":"%s"}`, id, via) }

func strp(s string) *string { return &s }

// TestAuth_FailureTable walks every row of the contract's failure table
// (docs/api.md §1) for both namespaces' rules.
func TestAuth_FailureTable(t *testing.T) {
	base := protected(t, "local", nil)
	admin, editor, sub := site.Users["administrator"], site.Users["editor"], site.Users["subscriber"]
	granted, denied := site.Users["granted"], site.Users["denied"]
	adminCookie := site.Login(t, admin)
	adminNonce := site.RESTNonce(t, adminCookie)
	subCookie := site.Login(t, sub)
	subNonce := site.RESTNonce(t, subCookie)
	forbidden := "Sorry, you are not allowed to do that."

	tests := []struct {
		name   string
		c      call
		fm, to int
		fmBody string
		toBody string
	}{
		{"no credentials", call{}, 401, 403, errBody("rest_forbidden", forbidden, 401), errBody("rest_forbidden", forbidden, 403)},
		{"bad application password", call{basic: [2]string{admin.Login, "aaaa bbbb cccc dddd eeee ffff"}}, 401, 403,
			errBody("incorrect_password", "The provided password is an invalid application password.", 401),
			errBody("incorrect_password", "The provided password is an invalid application password.", 403)},
		{"unknown user", call{basic: [2]string{"nobody_here", "aaaa"}}, 401, 403,
			errBody("invalid_username", "<strong>Error:</strong> Unknown username. Check again or try your email address.", 401),
			errBody("invalid_username", "<strong>Error:</strong> Unknown username. Check again or try your email address.", 403)},
		{"unknown e-mail", call{basic: [2]string{"nobody@example.test", "aaaa"}}, 401, 403,
			errBody("invalid_email", "<strong>Error:</strong> Unknown email address. Check again or try your username.", 401),
			errBody("invalid_email", "<strong>Error:</strong> Unknown email address. Check again or try your username.", 403)},
		{"account password instead of application password", call{basic: [2]string{admin.Login, admin.Password}}, 401, 403,
			errBody("incorrect_password", "The provided password is an invalid application password.", 401),
			errBody("incorrect_password", "The provided password is an invalid application password.", 403)},
		{"cookie with a bad nonce", call{client: adminCookie, nonce: strp("0123456789")}, 403, 403,
			errBody("rest_cookie_invalid_nonce", "Cookie check failed", 403), errBody("rest_cookie_invalid_nonce", "Cookie check failed", 403)},
		{"bad nonce without a cookie", call{nonce: strp("0123456789")}, 403, 403,
			errBody("rest_cookie_invalid_nonce", "Cookie check failed", 403), errBody("rest_cookie_invalid_nonce", "Cookie check failed", 403)},
		{"empty nonce header", call{nonce: strp("")}, 403, 403,
			errBody("rest_cookie_invalid_nonce", "Cookie check failed", 403), errBody("rest_cookie_invalid_nonce", "Cookie check failed", 403)},
		{"cookie without a nonce", call{client: adminCookie}, 401, 403, errBody("rest_forbidden", forbidden, 401), errBody("rest_forbidden", forbidden, 403)},
		{"subscriber cookie and nonce", call{client: subCookie, nonce: &subNonce}, 403, 403, errBody("rest_forbidden", forbidden, 403), errBody("rest_forbidden", forbidden, 403)},
		{"editor application password", call{basic: [2]string{editor.Login, editor.ApplicationPassword}}, 403, 403, errBody("rest_forbidden", forbidden, 403), errBody("rest_forbidden", forbidden, 403)},
		{"author application password", call{basic: [2]string{site.Users["author"].Login, site.Users["author"].ApplicationPassword}}, 403, 403, errBody("rest_forbidden", forbidden, 403), errBody("rest_forbidden", forbidden, 403)},
		{"subscriber application password", call{basic: [2]string{sub.Login, sub.ApplicationPassword}}, 403, 403, errBody("rest_forbidden", forbidden, 403), errBody("rest_forbidden", forbidden, 403)},
		{"administrator denied both caps", call{basic: [2]string{denied.Login, denied.ApplicationPassword}}, 403, 403, errBody("rest_forbidden", forbidden, 403), errBody("rest_forbidden", forbidden, 403)},
		{"admin cookie and nonce", call{client: adminCookie, nonce: &adminNonce}, 200, 200, ok(admin.ID, "cookie"), ok(admin.ID, "cookie")},
		{"admin cookie and _wpnonce", call{client: adminCookie, query: "?_wpnonce=" + adminNonce}, 200, 200, ok(admin.ID, "cookie"), ok(admin.ID, "cookie")},
		{"admin application password", call{basic: [2]string{admin.Login, admin.ApplicationPassword}}, 200, 200, ok(admin.ID, "application_password"), ok(admin.ID, "application_password")},
		{"application password by e-mail, without spaces", call{basic: [2]string{admin.Email, strings.ReplaceAll(admin.ApplicationPassword, " ", "")}}, 200, 200, ok(admin.ID, "application_password"), ok(admin.ID, "application_password")},
		{"application password and a bad nonce: nonce ignored", call{basic: [2]string{admin.Login, admin.ApplicationPassword}, nonce: strp("bad")}, 200, 200, ok(admin.ID, "application_password"), ok(admin.ID, "application_password")},
		{"subscriber granted both caps", call{basic: [2]string{granted.Login, granted.ApplicationPassword}}, 200, 200, ok(granted.ID, "application_password"), ok(granted.ID, "application_password")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, body := tt.c.do(t, base+"/fieldmgr"); code != tt.fm || body != tt.fmBody {
				t.Errorf("fieldmgr: %d %s\nwant %d %s", code, body, tt.fm, tt.fmBody)
			}
			if code, body := tt.c.do(t, base+"/themeopts"); code != tt.to || body != tt.toBody {
				t.Errorf("themeopts: %d %s\nwant %d %s", code, body, tt.to, tt.toBody)
			}
		})
	}
}

// TestAuth_RevocationAndLogoutTakeEffectAtOnce uses WordPress's own API to
// revoke an application password and to end a session.
func TestAuth_RevocationAndLogoutTakeEffectAtOnce(t *testing.T) {
	base := protected(t, "local", nil)
	admin := site.Users["administrator"]
	var created []string
	site.PHP(t, fmt.Sprintf(`$c = WP_Application_Passwords::create_new_application_password(%d, array("name" => "revoke-me")); return array(WP_Application_Passwords::chunk_password($c[0]), $c[1]["uuid"]);`, admin.ID), &created)
	c := call{basic: [2]string{admin.Login, created[0]}}
	if code, _ := c.do(t, base+"/fieldmgr"); code != 200 {
		t.Fatalf("new application password: %d", code)
	}
	site.PHP(t, fmt.Sprintf(`return WP_Application_Passwords::delete_application_password(%d, %q);`, admin.ID, created[1]), nil)
	if code, body := c.do(t, base+"/fieldmgr"); code != 401 || !strings.Contains(body, `"incorrect_password"`) {
		t.Errorf("after revocation: %d %s", code, body)
	}

	cookie := site.Login(t, admin)
	nonce := site.RESTNonce(t, cookie)
	cc := call{client: cookie, nonce: &nonce}
	if code, _ := cc.do(t, base+"/fieldmgr"); code != 200 {
		t.Fatalf("cookie: %d", code)
	}
	// Keep the cookies as they are, then log out through wp-login.php as a
	// browser would: WordPress destroys the session, and the kept cookie,
	// replayed, must fail on the very next request.
	var kept []string
	for _, ck := range cookie.Jar.Cookies(mustURL(site.URL + "/")) {
		kept = append(kept, ck.Name+"="+ck.Value)
	}
	resp, err := cookie.Get(site.URL + "/wp-login.php?action=logout&_wpnonce=" + logoutNonce(t, cookie))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	replay := call{nonce: &nonce, header: map[string]string{"Cookie": strings.Join(kept, "; ")}}
	if code, body := replay.do(t, base+"/fieldmgr"); code != 403 || !strings.Contains(body, "rest_cookie_invalid_nonce") {
		// The session is gone: the nonce is checked for user 0 and fails.
		t.Errorf("old cookie after logout: %d %s", code, body)
	}
	replay.nonce = nil
	if code, body := replay.do(t, base+"/fieldmgr"); code != 401 || !strings.Contains(body, "rest_forbidden") {
		t.Errorf("old cookie after logout, no nonce: %d %s", code, body)
	}
}

// logoutNonce reads the log-out link's nonce from the dashboard.
func logoutNonce(t *testing.T, c *http.Client) string {
	t.Helper()
	resp, err := c.Get(site.URL + "/wp-admin/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`action=logout(?:&amp;|&#038;|&)_wpnonce=([0-9a-f]{10})`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("no log-out link on the dashboard")
	}
	return m[1]
}

// TestAuth_ApplicationPasswordsNeedHTTPS: outside a local environment
// WordPress accepts application passwords only over HTTPS; behind a proxy
// that is X-Forwarded-Proto from a trusted address.
func TestAuth_ApplicationPasswordsNeedHTTPS(t *testing.T) {
	admin := site.Users["administrator"]
	c := call{basic: [2]string{admin.Login, admin.ApplicationPassword}}
	https := call{basic: c.basic, header: map[string]string{"X-Forwarded-Proto": "https"}}

	untrusted := protected(t, "production", nil)
	if code, body := c.do(t, untrusted+"/fieldmgr"); code != 401 || !strings.Contains(body, "rest_forbidden") {
		t.Errorf("plain HTTP in production: %d %s (the header is ignored, as WordPress does)", code, body)
	}
	if code, _ := https.do(t, untrusted+"/fieldmgr"); code != 401 {
		t.Errorf("X-Forwarded-Proto from an untrusted peer: %d", code)
	}
	trusted := protected(t, "production", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
	if code, body := https.do(t, trusted+"/fieldmgr"); code != 200 || body != ok(admin.ID, "application_password") {
		t.Errorf("X-Forwarded-Proto https from a trusted proxy: %d %s", code, body)
	}
}

// TestAuth_LastUsedRecorded: the first use of an application password is
// recorded as WordPress records it, and PHP sees it.
func TestAuth_LastUsedRecorded(t *testing.T) {
	base := protected(t, "local", nil)
	author := site.Users["author"]
	var created []string // a fresh item: never used
	site.PHP(t, fmt.Sprintf(`$c = WP_Application_Passwords::create_new_application_password(%d, array("name" => "last-used")); return array($c[0], $c[1]["uuid"]);`, author.ID), &created)
	var item struct {
		LastUsed *int64  `json:"last_used"`
		LastIP   *string `json:"last_ip"`
	}
	get := func() {
		site.PHP(t, fmt.Sprintf(`return WP_Application_Passwords::get_user_application_password(%d, %q);`, author.ID, created[1]), &item)
	}
	get()
	if item.LastUsed != nil {
		t.Fatalf("a new item has last_used %d", *item.LastUsed)
	}
	c := call{basic: [2]string{author.Login, created[0]}}
	start := time.Now().Unix()
	if code, _ := c.do(t, base+"/fieldmgr"); code != 403 { // authenticated, lacks the capability
		t.Fatalf("author: %d", code)
	}
	testwait.For(t, "the use recorded", func() bool { get(); return item.LastUsed != nil })
	if *item.LastUsed < start || item.LastIP == nil || *item.LastIP != "127.0.0.1" {
		t.Errorf("last_used %v last_ip %v", *item.LastUsed, item.LastIP)
	}
}

// TestAuth_AccountPasswordOverBasic: off by default; with the switch, the
// login password works over Basic, and a wrong one gets WordPress's code.
func TestAuth_AccountPasswordOverBasic(t *testing.T) {
	admin := site.Users["administrator"]
	c := call{basic: [2]string{admin.Login, admin.Password}}
	if code, _ := c.do(t, protected(t, "production", nil)+"/fieldmgr"); code != 401 {
		t.Errorf("switch off: %d", code)
	}
	on := protected(t, "production", nil, func(o *auth.Options) { o.BasicAuthPasswords = true })
	if code, body := c.do(t, on+"/fieldmgr"); code != 200 || body != ok(admin.ID, "basic_password") {
		t.Errorf("switch on: %d %s", code, body)
	}
	bad := call{basic: [2]string{admin.Login, "wrong-password"}}
	code, body := bad.do(t, on+"/themeopts")
	want := `"code":"incorrect_password","message":"<strong>Error:</strong> The password you entered for the username <strong>` + admin.Login + `</strong> is incorrect.`
	if code != 403 || !strings.Contains(body, want) {
		t.Errorf("wrong account password: %d %s", code, body)
	}
}

// TestNoCredentialsInTheLog sends every kind of credential through the
// sidecar and finds none of them, nor any stored hash, in its log.
func TestNoCredentialsInTheLog(t *testing.T) {
	admin := site.Users["administrator"]
	c := site.Login(t, admin)
	nonce := site.RESTNonce(t, c)
	for _, path := range []string{"/wp-json/wp/v2/users/me", "/wp-json/fieldmgr/v1/field-groups"} {
		req, _ := http.NewRequest(http.MethodGet, site.URL+path+"?_wpnonce="+nonce, nil)
		req.Header.Set("Authorization", wptest.BasicAuth(admin.Login, admin.ApplicationPassword))
		req.Header.Set("X-WP-Nonce", nonce)
		resp, _ := do(t, c, req)
		accessLog(t, resp)
	}
	var hashes []string
	site.PHP(t, fmt.Sprintf(`$u = get_user_by("id", %d); return array($u->user_pass, get_user_meta(%d, "_application_passwords", true)[0]["password"]);`, admin.ID, admin.ID), &hashes)
	logs := site.SidecarLog()
	secrets := append([]string{admin.Password, admin.ApplicationPassword, strings.ReplaceAll(admin.ApplicationPassword, " ", ""), nonce}, hashes...)
	for _, ck := range c.Jar.Cookies(mustURL(site.URL + "/")) {
		secrets = append(secrets, ck.Value)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(logs, s) {
			t.Errorf("the sidecar's log holds a credential: %.12s…", s)
		}
	}
}

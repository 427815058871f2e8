package auth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testvectors"
	"github.com/wpsidecar/wpsidecar/store"
)

// The stored-format cases below use WordPress's own values: the hashes and
// cookies of wp-vectors.json (PHP 8.2.36 with WordPress 6.1.9 and 7.1), and
// PHP 8.2.36's password_hash() for argon2 (see TestCheckPassword_Formats).
const (
	vecPassword = "admin-pass-123"
	vecPHPass   = "$P$B12345678Cxt6GCcSG3ugUXOuJv5r00"
	vecMD5      = "4a4fd39406de7daa0638e36f0abf2b1b"
	vecBcrypt   = "$2y$10$WordPressVectorSalt12ueBMiWsOtZUYSE4DsMpR6a6ZK8S86JBC"
	vecWP       = "$wp$2y$10$WordPressVectorSalt12uApnWSBJi6RCivJvU6POJ7G/CeLkQyuO"
	vecSHA512   = "$6$rounds=5000$vectorsalt$3WbS4NyWqwNYFKqgmYbN0W.ewUK7XWvaCT5a/vajS818oPUZFShHFBLaMEJnucgG/VIfFAwjD5kfnPUu541rS0"
	vecArgon2id = "$argon2id$v=19$m=1024,t=2,p=2$ckJVYUVWaklQODlNY3VTTw$nfGyJkzSI1WseuYv+ZkIP5y4WCTSRlgkEkIJGR5w6PE"

	db61 = "53496" // WordPress 6.1's db_version
	db71 = "61833" // 7.1's
)

// vecNow is before the vector cookies' expiration (2030-01-01).
var vecNow = time.Unix(1_800_000_000, 0)

// formatSite is a site with one user, "admin", whose user_pass is given.
type formatSite struct {
	tdb  *testdb.DB
	db   *store.DB
	a    *auth.Authenticator
	keys map[string]string
	id   int64
}

func newFormatSite(t *testing.T, dbVersion, userPass string, keys map[string]string, adjust func(*auth.Options), storeOpts func(*store.Options), meta ...[2]string) *formatSite {
	t.Helper()
	tdb := testdb.New(t)
	tdb.SetOption(t, "wp_user_roles", `a:1:{s:13:"administrator";a:2:{s:4:"name";s:13:"Administrator";s:12:"capabilities";a:1:{s:14:"manage_options";b:1;}}}`)
	tdb.SetOption(t, "db_version", dbVersion)
	meta = append([][2]string{{"wp_capabilities", `a:1:{s:13:"administrator";b:1;}`}}, meta...)
	id := tdb.AddUser(t, "admin", "admin@example.test", userPass, meta...)
	db := tdb.StoreWith(t, storeOpts)
	w := store.NewSettingsWatcher(db, time.Hour, store.SiteURLs{})
	if err := w.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if keys == nil {
		keys = map[string]string{"LOGGED_IN_KEY": "lk", "LOGGED_IN_SALT": "ls", "NONCE_KEY": "nk", "NONCE_SALT": "ns"}
	}
	o := auth.Options{Store: db, Settings: w, Keys: keys, Log: zerolog.Nop(), Now: func() time.Time { return vecNow }}
	if adjust != nil {
		adjust(&o)
	}
	a := auth.New(o)
	t.Cleanup(a.Wait)
	return &formatSite{tdb: tdb, db: db, a: a, keys: keys, id: id}
}

// row is the user's user_pass and user_activation_key as stored.
func (s *formatSite) row(t *testing.T) (pass, activation string) {
	t.Helper()
	if err := s.tdb.SQL.QueryRow("SELECT user_pass, user_activation_key FROM wp_users WHERE ID = ?", s.id).Scan(&pass, &activation); err != nil {
		t.Fatal(err)
	}
	return pass, activation
}

// cookieRequest is a request with the logged-in cookie value raw, for
// token, and a wp_rest nonce for the user and token.
func (s *formatSite) cookieRequest(t *testing.T, raw, token string) *http.Request {
	t.Helper()
	nonce, err := auth.NewSalts(s.keys, nil).Nonce(auth.NonceTick(vecNow), "wp_rest", s.id, token)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := http.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
	r.Header.Set("Cookie", auth.LoggedInCookieName(auth.CookieHash("http://example.test"))+"="+raw)
	r.Header.Set("X-WP-Nonce", nonce)
	return r
}

// session is a session_tokens value holding token until expiration.
func session(token string, expiration int64) [2]string {
	return [2]string{"session_tokens", fmt.Sprintf(`a:1:{s:64:"%s";a:1:{s:10:"expiration";i:%d;}}`, auth.TokenVerifier(token), expiration)}
}

func basic(login, password string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
	r.SetBasicAuth(login, password)
	return r
}

// TestDatabaseBehindFiles_ApplicationPassword: WordPress 7.1's files over a
// database still at 6.1's db_version (a package upgrade before
// upgrade.php) make $generic$ application passwords, and accept them; so
// does the sidecar (it answered 401 incorrect_password).
func TestDatabaseBehindFiles_ApplicationPassword(t *testing.T) {
	var v struct {
		H map[string]struct{ Raw, Chunked, Hash string } `json:"app_password_hash"`
	}
	testvectors.Decode(t, &v)
	item := v.H["7.1"]
	if !strings.HasPrefix(item.Hash, "$generic$") {
		t.Fatalf("7.1 application password vector: %+v", item)
	}
	items := fmt.Sprintf(`a:1:{i:0;a:3:{s:4:"uuid";s:1:"u";s:8:"password";s:%d:"%s";s:9:"last_used";i:%d;}}`, len(item.Hash), item.Hash, vecNow.Unix())
	s := newFormatSite(t, db61, vecPHPass, nil, func(o *auth.Options) { o.EnvironmentType = "local" }, nil,
		[2]string{"_application_passwords", items})
	s.tdb.SetOption(t, "using_application_passwords", "1")
	u, err := s.a.Authenticate(basic("admin", item.Chunked))
	if err != nil || u == nil || u.Via != "application_password" || u.ID != s.id {
		t.Fatalf("$generic$ item on a 6.1 database: %+v %v", u, err)
	}
	if u, err := s.a.Authenticate(basic("admin", "x"+item.Raw[1:])); u != nil || err == nil {
		t.Errorf("a wrong application password: %+v %v", u, err)
	}
}

// TestDatabaseBehindFiles_Cookies: the logged-in cookies 7.1 mints, for a
// user of each stored format, are accepted on a database still at 6.1's
// db_version — the $wp$ user's cookie got 403 rest_cookie_invalid_nonce
// (issue) — and so are 6.1's own.
func TestDatabaseBehindFiles_Cookies(t *testing.T) {
	var v struct {
		Salts struct {
			Constants map[string]*string `json:"constants"`
		} `json:"salts"`
		AuthCookies struct {
			Vectors []struct {
				ProducedBy struct {
					WordPress string `json:"wordpress"`
				} `json:"produced_by"`
				UserPass    string `json:"user_pass"`
				Scheme      string `json:"scheme"`
				Expiration  int64  `json:"expiration"`
				Token       string `json:"token"`
				CookieValue string `json:"cookie_value"`
			} `json:"vectors"`
		} `json:"auth_cookies"`
	}
	testvectors.Decode(t, &v)
	keys := map[string]string{}
	for k, val := range v.Salts.Constants {
		if val != nil && !strings.HasPrefix(k, "SECRET_") {
			keys[k] = *val
		}
	}
	n := 0
	for _, c := range v.AuthCookies.Vectors {
		if c.Scheme != auth.SchemeLoggedIn {
			continue
		}
		n++
		name := c.ProducedBy.WordPress + " cookie, " + c.UserPass[:min(10, len(c.UserPass))]
		t.Run(name, func(t *testing.T) {
			s := newFormatSite(t, db61, c.UserPass, keys, nil, nil, session(c.Token, c.Expiration))
			u, err := s.a.Authenticate(s.cookieRequest(t, c.CookieValue, c.Token))
			if err != nil || u == nil || u.Via != "cookie" || u.ID != s.id {
				t.Fatalf("on a 6.1 database: %+v %v", u, err)
			}
		})
	}
	if n != 10 {
		t.Errorf("%d logged-in cookie vectors", n)
	}
}

// TestBasicAccountPassword_Formats: over Basic (--basic-auth-passwords),
// the account password as wp_authenticate checks it: trimmed, then by its
// stored format — argon2 was refused — on a database of either version.
func TestBasicAccountPassword_Formats(t *testing.T) {
	tests := []struct {
		name, dbVersion, stored, password string
		ok                                bool
	}{
		{"argon2id, 7.1 database", db71, vecArgon2id, vecPassword, true},
		{"argon2id, 6.1 database (7.1 files)", db61, vecArgon2id, vecPassword, true},
		{"argon2id, wrong", db71, vecArgon2id, vecPassword + "x", false},
		{"$wp$, 6.1 database (7.1 files)", db61, vecWP, vecPassword, true},
		{"sha512-crypt", db71, vecSHA512, vecPassword, true},
		{"phpass, trailing whitespace trimmed", db61, vecPHPass, vecPassword + " \t", true},
		{"$wp$, leading whitespace trimmed", db71, vecWP, "\n " + vecPassword, true},
		{"whitespace inside is kept", db71, vecWP, "admin-pass- 123", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFormatSite(t, tt.dbVersion, tt.stored, nil, func(o *auth.Options) { o.BasicAuthPasswords = true }, nil)
			u, err := s.a.Authenticate(basic("admin", tt.password))
			if tt.ok && (err != nil || u == nil || u.Via != "basic_password") {
				t.Fatalf("refused: %+v %v", u, err)
			}
			if !tt.ok && (u != nil || err == nil) {
				t.Fatalf("accepted: %+v %v", u, err)
			}
		})
	}
}

// TestBasicAccountPassword_Rehash: a successful account-password login
// rewrites an outdated hash as the site's WordPress would — 6.8+: anything
// but $wp (and argon2, see rehash.go) becomes $wp$2y$10$; 6.1: md5 becomes
// $P$B — emptying user_activation_key; the new hash takes the same
// password, and the cookies bound to the old hash stop working.
func TestBasicAccountPassword_Rehash(t *testing.T) {
	tests := []struct {
		name, dbVersion, stored, password string
		becomes                           string // the new hash's prefix; "" keeps it
	}{
		{"phpass on 7.1", db71, vecPHPass, vecPassword, "$wp$2y$10$"},
		{"md5 on 7.1", db71, vecMD5, vecPassword, "$wp$2y$10$"},
		{"plain bcrypt on 7.1", db71, vecBcrypt, vecPassword, "$wp$2y$10$"},
		{"sha512-crypt on 7.1", db71, vecSHA512, vecPassword, "$wp$2y$10$"},
		{"phpass on 7.1, the trimmed password hashed", db71, vecPHPass, " " + vecPassword + " ", "$wp$2y$10$"},
		{"$wp$ on 7.1", db71, vecWP, vecPassword, ""},
		{"argon2id on 7.1", db71, vecArgon2id, vecPassword, ""},
		{"md5 on 6.1", db61, vecMD5, vecPassword, "$P$B"},
		{"phpass on 6.1", db61, vecPHPass, vecPassword, ""},
		{"plain bcrypt on 6.1", db61, vecBcrypt, vecPassword, ""},
		{"$wp$ on 6.1", db61, vecWP, vecPassword, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const token = "RehashToken012345678901234567890123456789abc"
			exp := vecNow.Add(time.Hour).Unix()
			s := newFormatSite(t, tt.dbVersion, tt.stored, nil, func(o *auth.Options) { o.BasicAuthPasswords = true }, nil, session(token, exp))
			if _, err := s.tdb.SQL.Exec("UPDATE wp_users SET user_activation_key = '1700000000:$P$Breset' WHERE ID = ?", s.id); err != nil {
				t.Fatal(err)
			}
			// A cookie WordPress minted for the hash as it is.
			c := auth.AuthCookie{Login: "admin", Expiration: fmt.Sprint(exp), Token: token}
			v := auth.WP61
			if tt.dbVersion == db71 {
				v = auth.WP68
			}
			var err error
			if c.HMAC, err = auth.NewSalts(s.keys, nil).CookieHMAC(c, tt.stored, auth.SchemeLoggedIn, v); err != nil {
				t.Fatal(err)
			}
			raw := strings.Join([]string{c.Login, c.Expiration, c.Token, c.HMAC}, "%7C")
			if u, err := s.a.Authenticate(s.cookieRequest(t, raw, token)); err != nil || u == nil {
				t.Fatalf("the cookie before the login: %+v %v", u, err)
			}

			u, err := s.a.Authenticate(basic("admin", tt.password))
			if err != nil || u == nil || u.Via != "basic_password" {
				t.Fatalf("login: %+v %v", u, err)
			}
			s.a.Wait()
			pass, activation := s.row(t)
			if tt.becomes == "" {
				if pass != tt.stored || activation == "" {
					t.Fatalf("rewritten: %q, activation key %q", pass, activation)
				}
				return
			}
			if !strings.HasPrefix(pass, tt.becomes) || activation != "" {
				t.Fatalf("user_pass %q, activation key %q; want %s…, emptied", pass, activation, tt.becomes)
			}
			if u, err := s.a.Authenticate(basic("admin", tt.password)); err != nil || u == nil {
				t.Errorf("the password against the new hash: %+v %v", u, err)
			}
			if u, err := s.a.Authenticate(s.cookieRequest(t, raw, token)); !errors.Is(err, auth.ErrBadNonce) || u != nil {
				t.Errorf("the old hash's cookie after the rehash: %+v %v; want logged out", u, err)
			}
			s.a.Wait()
			if again, _ := s.row(t); again != pass {
				t.Errorf("rewritten twice: %q then %q", pass, again)
			}
		})
	}
}

// userCache is an object cache that can drop a users row.
type userCache struct{ users atomic.Int64 }

func (c *userCache) OptionChanged(context.Context, int64, string) {}
func (c *userCache) UserMetaChanged(context.Context, int64)       {}
func (c *userCache) UserChanged(context.Context, int64)           { c.users.Add(1) }

// TestBasicAccountPassword_RehashAndObjectCache: with a persistent object
// cache, the rewritten hash's users row is dropped from it, as
// clean_user_cache does, so PHP reads the new one.
func TestBasicAccountPassword_RehashAndObjectCache(t *testing.T) {
	on := func(o *auth.Options) { o.BasicAuthPasswords = true }
	var dropping userCache
	s := newFormatSite(t, db71, vecPHPass, nil, on, func(o *store.Options) { o.Cache = &dropping })
	if u, err := s.a.Authenticate(basic("admin", vecPassword)); err != nil || u == nil {
		t.Fatalf("%+v %v", u, err)
	}
	s.a.Wait()
	if pass, _ := s.row(t); !strings.HasPrefix(pass, "$wp$") || dropping.users.Load() != 1 {
		t.Errorf("cache that drops users rows: %q, %d drops", pass, dropping.users.Load())
	}
}

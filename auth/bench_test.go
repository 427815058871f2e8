package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

var benchKeys = map[string]string{
	"AUTH_KEY": "bench auth key", "AUTH_SALT": "bench auth salt", "SECURE_AUTH_KEY": "bench sa key", "SECURE_AUTH_SALT": "bench sa salt",
	"LOGGED_IN_KEY": "bench li key", "LOGGED_IN_SALT": "bench li salt", "NONCE_KEY": "bench nonce key", "NONCE_SALT": "bench nonce salt",
}

// benchSite is a database with one administrator holding an application
// password in the given stored format and a live session.
func benchSite(b testing.TB, dbVersion, appHash string) (*auth.Authenticator, *testdb.DB) {
	b.Helper()
	tdb := testdb.New(b)
	roles, err := os.ReadFile("testdata/user_roles_6.1.txt")
	if err != nil {
		b.Fatal(err)
	}
	tdb.SetOption(b, "wp_user_roles", strings.TrimSpace(string(roles)))
	tdb.SetOption(b, "using_application_passwords", "1")
	tdb.SetOption(b, "db_version", dbVersion)
	items := fmt.Sprintf(`a:1:{i:0;a:7:{s:4:"uuid";s:3:"u-1";s:6:"app_id";s:0:"";s:4:"name";s:1:"b";s:8:"password";s:%d:"%s";s:7:"created";i:1;s:9:"last_used";i:%d;s:7:"last_ip";s:9:"127.0.0.1";}}`,
		len(appHash), appHash, time.Now().Unix())
	session := fmt.Sprintf(`a:1:{s:64:"%s";a:1:{s:10:"expiration";i:%d;}}`, auth.TokenVerifier("BenchToken0123456789012345678901234567890ab"), time.Now().Add(time.Hour).Unix())
	tdb.AddUser(b, "bench", "bench@example.test", "$P$B12345678Cxt6GCcSG3ugUXOuJv5r00",
		[2]string{"wp_capabilities", `a:1:{s:13:"administrator";b:1;}`}, [2]string{"_application_passwords", items}, [2]string{"session_tokens", session})
	db := tdb.Store(b)
	w := store.NewSettingsWatcher(db, time.Hour, store.SiteURLs{})
	if err := w.Refresh(context.Background()); err != nil {
		b.Fatal(err)
	}
	return auth.New(auth.Options{Store: db, Settings: w, Keys: benchKeys, EnvironmentType: "local", Log: zerolog.Nop()}), tdb
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func questions(b *testing.B, tdb *testdb.DB) int64 {
	var name string
	var n int64
	tdb.SQL.QueryRow("SHOW GLOBAL STATUS LIKE 'Questions'").Scan(&name, &n)
	return n
}

// runWarm authenticates the same request b.N times and reports the CPU
// time of this process and the database statements per request.
func runWarm(b *testing.B, a *auth.Authenticator, tdb *testdb.DB, req *http.Request, wantVia string) {
	b.Helper()
	u, err := a.Authenticate(req) // warm: settings derived, hash check cached
	if err != nil || u == nil || u.Via != wantVia {
		b.Fatalf("warm-up: %+v %v", u, err)
	}
	q0, c0 := questions(b, tdb), cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if u, err := a.Authenticate(req); err != nil || u == nil {
			b.Fatalf("%+v %v", u, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
	// Questions also counts the two SHOW STATUS statements around the loop.
	b.ReportMetric(float64(questions(b, tdb)-q0-1)/float64(b.N), "queries/op")
}

func BenchmarkAuthenticate_AppPasswordFastHash(b *testing.B) {
	a, tdb := benchSite(b, "61833", auth.FastHash("abcdEFGHijklMNOPqrstUVWX"))
	req, _ := http.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
	req.SetBasicAuth("bench", "abcd EFGH ijkl MNOP qrst UVWX")
	runWarm(b, a, tdb, req, "application_password")
}

func BenchmarkAuthenticate_AppPasswordPHPass(b *testing.B) {
	// $P$ items are 8192 MD5 rounds each: the cache of successful checks
	// keeps them off the warm path.
	a, tdb := benchSite(b, "53496", "$P$B12345678mnoCn6tRto6wAiOQuWlHL.")
	req, _ := http.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
	req.SetBasicAuth("bench", "abcd EFGH ijkl MNOP qrst UVWX")
	runWarm(b, a, tdb, req, "application_password")
}

func BenchmarkAuthenticate_CookieAndNonce(b *testing.B) {
	a, tdb := benchSite(b, "53496", "x")
	s := auth.NewSalts(benchKeys, nil)
	c := auth.AuthCookie{Login: "bench", Expiration: fmt.Sprint(time.Now().Add(time.Hour).Unix()), Token: "BenchToken0123456789012345678901234567890ab"}
	var err error
	if c.HMAC, err = s.CookieHMAC(c, "$P$B12345678Cxt6GCcSG3ugUXOuJv5r00", auth.SchemeLoggedIn, auth.WP61); err != nil {
		b.Fatal(err)
	}
	var id int64
	tdb.SQL.QueryRow("SELECT ID FROM wp_users WHERE user_login = 'bench'").Scan(&id)
	nonce, _ := s.Nonce(auth.NonceTick(time.Now()), "wp_rest", id, c.Token)
	var siteurl string
	tdb.SQL.QueryRow("SELECT option_value FROM wp_options WHERE option_name = 'siteurl'").Scan(&siteurl)
	req, _ := http.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
	req.Header.Set("Cookie", auth.LoggedInCookieName(auth.CookieHash(siteurl))+"="+strings.Join([]string{c.Login, c.Expiration, c.Token, c.HMAC}, "%7C"))
	req.Header.Set("X-WP-Nonce", nonce)
	runWarm(b, a, tdb, req, "cookie")
}

// BenchmarkUserQueryAlone is the one query of the warm path without the
// authentication around it, for comparison.
func BenchmarkUserQueryAlone(b *testing.B) {
	_, tdb := benchSite(b, "61833", "x")
	db := tdb.Store(b)
	ctx := context.Background()
	q0, c0 := questions(b, tdb), cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.UserForAuth(ctx, "bench", true, nil, db.CapabilitiesKey(), store.MetaSessionTokens, store.MetaApplicationPasswords); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(questions(b, tdb)-q0-1)/float64(b.N), "queries/op")
}

// BenchmarkAuthenticate_WrongAppPassword: a wrong application password for
// a known user on a 6.1 site whose item is phpass, short and long. WordPress
// hashes neither a password over 4096 bytes nor one it cannot decode, so the
// long ones must cost no more than the short one (which pays phpass's 8192
// MD5 rounds, as in WordPress).
func BenchmarkAuthenticate_WrongAppPassword(b *testing.B) {
	for _, n := range []int{24, 4097, 45000} {
		b.Run(fmt.Sprintf("bytes=%d", n), func(b *testing.B) {
			a, _ := benchSite(b, "53496", "$P$B12345678mnoCn6tRto6wAiOQuWlHL.")
			req, _ := http.NewRequest(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", nil)
			req.SetBasicAuth("bench", strings.Repeat("x", n))
			c0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if u, _ := a.Authenticate(req); u != nil {
					b.Fatalf("a wrong password let %+v in", u)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

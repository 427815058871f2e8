package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestMultibyteCharsetsCannotInject: the probe that broke out of the
// driver's byte-wise escaping under gbk (a lead byte swallows the escaping
// backslash) finds no user, and a stacked statement is not executed, in
// every connection charset a site may name — also where one round trip
// carries two statements. The same lookups still find real users.
func TestMultibyteCharsetsCannotInject(t *testing.T) {
	probes := []struct {
		login   string
		byEmail bool
	}{
		{"\xbf' OR (SELECT SLEEP(2)),1,1,1 FROM wp_users u LIMIT 1#", false},
		{"\xbf' OR 1=1 LIMIT 1#", false},
		{"\xbf' OR 1=1 LIMIT 1#@x.test", true},
		{"\xbf'; UPDATE wp_options SET option_value = 'pwned' WHERE option_name = 'blogname'#", false},
		{"\xbf'; UPDATE wp_options SET option_value = 'pwned' WHERE option_name = 'blogname'#@x.test", true},
	}
	for _, cs := range []string{"utf8mb4", "latin1", "gbk", "big5", "sjis", "cp932", "gb2312"} {
		t.Run(cs, func(t *testing.T) {
			tdb := testdb.New(t)
			o := tdb.StoreOptions()
			o.Charset, o.Collation = cs, ""
			db, err := store.Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			admin := tdb.AddUser(t, "admin", "admin@example.test", "$P$hash", [2]string{"wp_capabilities", `a:1:{s:13:"administrator";b:1;}`})
			ctx := context.Background()
			keys := []string{db.CapabilitiesKey(), store.MetaSessionTokens}
			for _, p := range probes {
				var v string
				var found bool
				ride := db.OptionPiggyback("blogname", &v, &found)
				if u, err := db.UserForAuth(ctx, p.login, p.byEmail, ride, keys...); !errors.Is(err, wpsidecar.ErrNotFound) {
					t.Errorf("%q: %+v %v, want not found", p.login, u, err)
				}
			}
			var got string
			if err := tdb.SQL.QueryRow("SELECT option_value FROM wp_options WHERE option_name = 'blogname'").Scan(&got); err != nil || got != "Test site" {
				t.Errorf("blogname = %q, %v: a stacked statement ran", got, err)
			}
			for _, login := range []string{"admin", "admin@example.test"} {
				if u, err := db.UserForAuth(ctx, login, true, nil, keys...); err != nil || u.ID != admin {
					t.Errorf("%s: %+v %v", login, u, err)
				}
			}
		})
	}
}

func TestInterpolationSafe(t *testing.T) {
	tests := []struct {
		charset, collation string
		want               bool
	}{
		{"", "", true},
		{"utf8mb4", "utf8mb4_unicode_520_ci", true},
		{"UTF8MB4", "", true},
		{"utf8", "utf8_general_ci", true},
		{"latin1", "latin1_swedish_ci", true},
		{"ascii", "", true},
		{"utf8mb4", "gbk_chinese_ci", false},
		{"gbk", "", false},
		{"big5", "", false},
		{"sjis", "", false},
		{"cp932", "", false},
		{"gb18030", "gb18030_chinese_ci", false},
		{"ucs2", "", false},
	}
	for _, tt := range tests {
		if got := store.InterpolationSafe(tt.charset, tt.collation); got != tt.want {
			t.Errorf("InterpolationSafe(%q, %q) = %v", tt.charset, tt.collation, got)
		}
	}
}

// BenchmarkLookupWithRead: the user lookup with a ride-along option read,
// per connection charset: one round trip where parameters are interpolated
// (utf8mb4), a prepared lookup and a separate read elsewhere (gbk).
func BenchmarkLookupWithRead(b *testing.B) {
	for _, cs := range []string{"utf8mb4", "gbk"} {
		b.Run(cs, func(b *testing.B) {
			tdb := testdb.New(b)
			o := tdb.StoreOptions()
			o.Charset, o.Collation = cs, ""
			db, err := store.Open(o)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			tdb.AddUser(b, "admin", "admin@example.test", "$P$hash", [2]string{"wp_capabilities", `a:1:{s:13:"administrator";b:1;}`})
			ctx := context.Background()
			status := func() (q, c int64) {
				var name string
				tdb.SQL.QueryRow("SHOW GLOBAL STATUS LIKE 'Questions'").Scan(&name, &q)
				tdb.SQL.QueryRow("SHOW GLOBAL STATUS LIKE 'Com_stmt_prepare'").Scan(&name, &c)
				return q, c
			}
			q0, p0 := status()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var v string
				var found bool
				pb := db.OptionPiggyback("blogname", &v, &found)
				if _, err := db.UserForAuth(ctx, "admin", true, pb, db.CapabilitiesKey()); err != nil {
					b.Fatal(err)
				}
				if done, _ := pb.Done(); !done {
					if v, err = db.Option(ctx, "blogname"); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			q1, p1 := status()
			b.ReportMetric(float64(q1-q0-2)/float64(b.N), "statements/op")
			b.ReportMetric(float64(p1-p0)/float64(b.N), "prepares/op")
		})
	}
}

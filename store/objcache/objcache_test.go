package objcache_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testlog"
	"github.com/wpsidecar/wpsidecar/internal/harness/testredis"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/store/objcache"
)

func newCache(t *testing.T, o objcache.Options) *objcache.Redis {
	t.Helper()
	if o.Host == "" && o.Path == "" {
		o.Host, o.Port = testredis.Addr(t)
	}
	r, err := objcache.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestBlogKey: on a network a site's per-blog groups carry its blog id (the
// main site's 1), its global groups none; a single site's, the table
// prefix whatever the blog.
func TestBlogKey(t *testing.T) {
	network, _ := objcache.New(objcache.Options{TablePrefix: "wp_", Multisite: true, Salt: "s_"})
	single, _ := objcache.New(objcache.Options{TablePrefix: "wp_"})
	defer network.Close()
	defer single.Close()
	for _, c := range []struct{ got, want string }{
		{network.BlogKey(7, "options", "alloptions"), "s_7:options:alloptions"},
		{network.BlogKey(1, "options", "x"), "s_1:options:x"},
		{network.BlogKey(0, "options", "x"), "s_1:options:x"},
		{strings.Join(network.OptionKeys(12, "o"), " "), "s_12:options:alloptions s_12:options:notoptions s_12:options:o"},
		{network.Key("user_meta", "3", true), "s_:user_meta:3"},
		{single.BlogKey(7, "options", "x"), "wp:options:x"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// TestKey: the drop-in's key names, as its build_key makes them.
func TestKey(t *testing.T) {
	cases := []struct {
		name   string
		o      objcache.Options
		group  string
		key    string
		global bool
		want   string
	}{
		{"single site", objcache.Options{TablePrefix: "wp_"}, "options", "alloptions", false, "wp:options:alloptions"},
		{"single site global group", objcache.Options{TablePrefix: "wp_"}, "user_meta", "7", true, "wp:user_meta:7"},
		{"salt trimmed of white space only", objcache.Options{TablePrefix: "wp_", Salt: "  site-a_ \n"}, "options", "notoptions", false, "site-a_wp:options:notoptions"},
		{"prefix trimmed of _-:$ both ends", objcache.Options{TablePrefix: "$_wp2_-:"}, "options", "x", false, "wp2:options:x"},
		{"prefix inner underscores kept", objcache.Options{TablePrefix: "wp_1_"}, "options", "x", false, "wp_1:options:x"},
		{"multisite blog group", objcache.Options{TablePrefix: "wp_", Multisite: true}, "options", "alloptions", false, "1:options:alloptions"},
		{"multisite global group", objcache.Options{TablePrefix: "wp_", Multisite: true, Salt: "s"}, "user_meta", "3", true, "s:user_meta:3"},
		{"colons in key and group", objcache.Options{TablePrefix: "wp_"}, "my:group", "a:b:c", false, "wp:my-group:a-b-c"},
		{"unicode key", objcache.Options{TablePrefix: "wp_"}, "options", "thème", false, "wp:options:thème"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := objcache.New(c.o)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := r.Key(c.group, c.key, c.global); got != c.want {
				t.Errorf("Key(%q, %q) = %q, want %q", c.group, c.key, got, c.want)
			}
		})
	}
}

func TestNew_BadScheme(t *testing.T) {
	for _, o := range []objcache.Options{{Scheme: "udp"}, {Scheme: "unix"}} {
		if _, err := objcache.New(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func exists(t *testing.T, c *redis.Client, keys ...string) []string {
	t.Helper()
	var out []string
	for _, k := range keys {
		n, err := c.Exists(context.Background(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			out = append(out, k)
		}
	}
	return out
}

func set(t *testing.T, c *redis.Client, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if err := c.Set(context.Background(), k, "cached", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOptionChanged: the option's keys go, now and once more after Again;
// other options' keys and other sites' keys stay.
func TestOptionChanged(t *testing.T) {
	rc := testredis.Client(t)
	salt := testredis.Salt(t, rc)
	r := newCache(t, objcache.Options{Salt: salt, TablePrefix: "wp_", Again: 150 * time.Millisecond})
	stale := []string{salt + "wp:options:alloptions", salt + "wp:options:notoptions", salt + "wp:options:theme_opts"}
	kept := []string{salt + "wp:options:other", salt + "wp2:options:alloptions", salt + "wp:user_meta:1", "other" + salt + "wp:options:alloptions"}
	t.Cleanup(func() { rc.Del(context.Background(), kept[3]) })
	// On a loaded machine the checks may outlast Again, and the key set
	// after them come after the second deletion: then the write is made
	// again (nothing pending: that deletion was counted).
	testwait.For(t, "a write whose checks end before its second deletion", func() bool {
		set(t, rc, append(stale, kept...)...)
		before, _ := r.Passes()
		r.OptionChanged(context.Background(), 0, "theme_opts")
		if got := exists(t, rc, stale...); got != nil {
			t.Errorf("still cached after the write: %v", got)
		}
		if got := exists(t, rc, kept...); !slices.Equal(got, kept) {
			t.Errorf("kept %v, want %v", got, kept)
		}
		// A PHP request that read the old row before the commit caches it now.
		set(t, rc, stale[0])
		switch done, failed := r.Passes(); {
		case failed != 0 || done < before+1:
			t.Fatalf("passes: %d done, %d failed, %d before the write", done, failed, before)
		case done > before+1:
			return false // the second deletion came first
		}
		return true
	})
	testwait.For(t, "the second deletion", func() bool { return exists(t, rc, stale[0]) == nil })
}

// TestUserChanged: a user's cached row goes (the global users group, as
// clean_user_cache deletes it); another user's and the meta stay.
func TestUserChanged(t *testing.T) {
	rc := testredis.Client(t)
	salt := testredis.Salt(t, rc)
	r := newCache(t, objcache.Options{Salt: salt, TablePrefix: "wp_", Again: -1})
	kept := []string{salt + "wp:users:43", salt + "wp:user_meta:42", salt + "wp:userlogins:admin"}
	set(t, rc, append([]string{salt + "wp:users:42"}, kept...)...)
	r.UserChanged(context.Background(), 42)
	if got := exists(t, rc, append([]string{salt + "wp:users:42"}, kept...)...); !slices.Equal(got, kept) {
		t.Errorf("left %v, want %v", got, kept)
	}
}

// TestClose_RunsPendingDeletions: shutting down does the second deletion
// at once instead of dropping it.
func TestClose_RunsPendingDeletions(t *testing.T) {
	rc := testredis.Client(t)
	salt := testredis.Salt(t, rc)
	r := newCache(t, objcache.Options{Salt: salt, TablePrefix: "wp_", Again: time.Hour})
	r.UserMetaChanged(context.Background(), 42)
	key := salt + "wp:user_meta:42"
	set(t, rc, key)
	done := make(chan struct{})
	go func() { r.Close(); close(done) }()
	// The timer is an hour away: Close returning at all means it did not
	// wait for it.
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Close waited for the timer")
	}
	if exists(t, rc, key) != nil {
		t.Error("pending deletion dropped at Close")
	}
	r.OptionChanged(context.Background(), 0, "after-close") // no panic, no goroutine left
}

// TestUnreachable: a dead cache costs a write one attempt, bounded by its
// timeout, and says so in the log: a port nobody listens on refuses it; a
// server that takes the connection and never answers is given up on at
// the timeout (the write would hang without it).
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		var held []net.Conn // read nothing, answer nothing
		for {
			c, err := silent.Accept()
			if err != nil {
				break
			}
			held = append(held, c)
		}
		for _, c := range held {
			c.Close()
		}
	}()
	defer func() { silent.Close(); <-accepted }()
	for _, tt := range []struct {
		name string
		port int
		err  string
	}{
		{"refused", refused, "connection refused"},
		{"silent", silent.Addr().(*net.TCPAddr).Port, "i/o timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log testlog.Buffer
			r := newCache(t, objcache.Options{Host: "127.0.0.1", Port: tt.port, TablePrefix: "wp_", Timeout: 200 * time.Millisecond, Again: -1, Logger: zerolog.New(&log)})
			done := make(chan struct{})
			go func() { r.OptionChanged(context.Background(), 0, "x"); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("the write waited for the dead cache")
			}
			if !strings.Contains(log.String(), `"level":"error"`) || !strings.Contains(log.String(), tt.err) ||
				!strings.Contains(log.String(), `"keys":["wp:options:alloptions","wp:options:notoptions","wp:options:x"]`) {
				t.Errorf("log: %s", log.String())
			}
			if done, failed := r.Passes(); done != 0 || failed != 1 {
				t.Errorf("passes: %d done, %d failed", done, failed)
			}
			if err := r.Ping(context.Background()); err == nil {
				t.Error("Ping: no error")
			}
		})
	}
}

// TestStoreWrites: each kind of write the store makes evicts its keys
// after it commits; a write that changes nothing evicts nothing.
func TestStoreWrites(t *testing.T) {
	rc := testredis.Client(t)
	salt := testredis.Salt(t, rc)
	cache := newCache(t, objcache.Options{Salt: salt, TablePrefix: testdb.Prefix, Again: -1})
	tdb := testdb.New(t)
	o := tdb.StoreOptions()
	o.Cache = cache
	db, err := store.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	optKeys := cache.OptionKeys(0, "theme_opts")

	set(t, rc, optKeys...)
	err = db.ModifyOption(ctx, "theme_opts", 61833, nil, func(string, bool) (string, error) { return "a:0:{}", nil })
	if err != nil {
		t.Fatal(err)
	}
	if got := exists(t, rc, optKeys...); got != nil {
		t.Errorf("create: still cached %v", got)
	}

	set(t, rc, optKeys...)
	err = db.ModifyOption(ctx, "theme_opts", 61833, nil, func(string, bool) (string, error) { return "a:0:{}", nil })
	if err != nil {
		t.Fatal(err)
	}
	if got := exists(t, rc, optKeys...); len(got) != 3 {
		t.Errorf("unchanged write evicted: left %v", got)
	}

	err = db.ModifyOption(ctx, "theme_opts", 61833, nil, func(string, bool) (string, error) { return `a:1:{s:1:"a";i:1;}`, nil })
	if err != nil {
		t.Fatal(err)
	}
	if got := exists(t, rc, optKeys...); got != nil {
		t.Errorf("update: still cached %v", got)
	}

	set(t, rc, optKeys...)
	refused := db.ModifyOption(ctx, "theme_opts", 61833, nil, func(string, bool) (string, error) { return "", context.Canceled })
	if refused == nil {
		t.Fatal("no error")
	}
	if got := exists(t, rc, optKeys...); len(got) != 3 {
		t.Errorf("refused write evicted: left %v", got)
	}

	id := tdb.AddUser(t, "app", "app@example.test", "x", [2]string{store.MetaApplicationPasswords,
		`a:1:{i:0;a:6:{s:4:"uuid";s:3:"u-1";s:6:"app_id";s:0:"";s:4:"name";s:1:"n";s:8:"password";s:1:"h";s:7:"created";i:1;s:9:"last_used";N;}}`})
	metaKeys := cache.UserMetaKeys(id)
	set(t, rc, metaKeys...)
	wrote, err := db.TouchApplicationPassword(ctx, id, "u-1", "127.0.0.1", time.Unix(1_800_000_000, 0))
	if err != nil || !wrote {
		t.Fatalf("touch: wrote=%v %v", wrote, err)
	}
	if got := exists(t, rc, metaKeys...); got != nil {
		t.Errorf("application password use: still cached %v", got)
	}
}

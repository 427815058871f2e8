package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

// usersCache records what it is told to drop.
type usersCache struct {
	mu    sync.Mutex
	users []int64
	meta  atomic.Int64
}

func (c *usersCache) OptionChanged(context.Context, int64, string) {}
func (c *usersCache) UserMetaChanged(context.Context, int64)       { c.meta.Add(1) }
func (c *usersCache) UserChanged(_ context.Context, id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.users = append(c.users, id)
}

const (
	oldPass = "$P$B12345678Cxt6GCcSG3ugUXOuJv5r00"
	newPass = "$wp$2y$10$WordPressVectorSalt12uApnWSBJi6RCivJvU6POJ7G/CeLkQyuO"
)

// TestSetUserPass: wp_set_password's write — user_pass and an emptied
// user_activation_key — made only over the hash the caller checked (byte
// for byte: the column's collation ignores case and trailing spaces), then
// the memo forgets users and the object cache drops the users row.
func TestSetUserPass(t *testing.T) {
	tdb := testdb.New(t)
	cache := &usersCache{}
	db := tdb.StoreWith(t, func(o *store.Options) { o.Cache = cache })
	var serving atomic.Bool
	serving.Store(true)
	db.UseMemo(store.NewMemo(func(context.Context) bool { return serving.Load() }, 100))
	id := tdb.AddUser(t, "admin", "admin@example.test", oldPass)
	other := tdb.AddUser(t, "other", "other@example.test", oldPass)
	if _, err := tdb.SQL.Exec("UPDATE wp_users SET user_activation_key = '1700000000:$P$Breset'"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	row := func(id int64) (pass, key string) {
		t.Helper()
		if err := tdb.SQL.QueryRow("SELECT user_pass, user_activation_key FROM wp_users WHERE ID = ?", id).Scan(&pass, &key); err != nil {
			t.Fatal(err)
		}
		return pass, key
	}
	lookup := func() string {
		t.Helper()
		u, err := db.UserForAuth(ctx, "admin", false, nil)
		if err != nil {
			t.Fatal(err)
		}
		return u.Pass
	}
	if got := lookup(); got != oldPass {
		t.Fatalf("lookup: %q", got)
	}

	tests := []struct {
		name, old string
		wrote     bool
	}{
		{"the hash changed meanwhile", "$P$Bsomethingelse", false},
		{"same letters, other case", "$p$b12345678cxt6gccsg3ugUXOuJv5r00", false},
		{"trailing space", oldPass + " ", false},
		{"the hash checked", oldPass, true},
		{"again: the old hash is gone", oldPass, false},
	}
	for _, tt := range tests {
		wrote, err := db.SetUserPass(ctx, id, tt.old, newPass)
		if err != nil || wrote != tt.wrote {
			t.Errorf("%s: wrote %v, %v; want %v", tt.name, wrote, err, tt.wrote)
		}
	}
	if pass, key := row(id); pass != newPass || key != "" {
		t.Errorf("row: %q %q", pass, key)
	}
	if pass, key := row(other); pass != oldPass || key == "" {
		t.Errorf("another user's row changed: %q %q", pass, key)
	}
	if got := lookup(); got != newPass {
		t.Errorf("the memo still serves %q", got)
	}
	if len(cache.users) != 1 || cache.users[0] != id || cache.meta.Load() != 0 {
		t.Errorf("cache told: users %v, meta %d; want the user's row once", cache.users, cache.meta.Load())
	}
	if wrote, err := db.SetUserPass(ctx, 9999, oldPass, newPass); err != nil || wrote {
		t.Errorf("no such user: %v %v", wrote, err)
	}
}

// TestSetUserPass_Concurrent: of many rewrites of the same old hash at
// once, exactly one writes.
func TestSetUserPass_Concurrent(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	id := tdb.AddUser(t, "admin", "admin@example.test", oldPass)
	var wrote atomic.Int64
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := db.SetUserPass(context.Background(), id, oldPass, newPass[:len(newPass)-1]+string(rune('a'+i)))
			if err != nil {
				t.Error(err)
			}
			if ok {
				wrote.Add(1)
			}
		}()
	}
	wg.Wait()
	if wrote.Load() != 1 {
		t.Errorf("%d writes", wrote.Load())
	}
}

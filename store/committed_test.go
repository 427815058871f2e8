package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestCommitted: while another transaction holds a row it wrote (an
// update, an insert, a delete: as between a server's binary log and its
// engine's commit), the row is not shown committed; once it commits, it
// is. A row nobody holds, a row that does not exist and a table without
// row locks are at once.
func TestCommitted(t *testing.T) {
	tdb := testdb.New(t)
	db := tdb.Store(t)
	ctx := context.Background()
	tdb.SQL.Exec("CREATE TABLE rows_innodb (id BIGINT PRIMARY KEY, v INT) ENGINE=InnoDB")
	tdb.SQL.Exec("CREATE TABLE rows_memory (id BIGINT PRIMARY KEY, v INT) ENGINE=MEMORY")
	tdb.SQL.Exec("INSERT INTO rows_innodb VALUES (1, 0), (2, 0), (3, 0)")
	tdb.SQL.Exec("INSERT INTO rows_memory VALUES (1, 0)")
	tests := []struct {
		name  string
		table string
		write string // run in a transaction left open; "" none
		id    int64
		held  bool
	}{
		{"an update", "rows_innodb", "UPDATE rows_innodb SET v = 1 WHERE id = 1", 1, true},
		{"an insert", "rows_innodb", "INSERT INTO rows_innodb VALUES (10, 0)", 10, true},
		{"a delete", "rows_innodb", "DELETE FROM rows_innodb WHERE id = 2", 2, true},
		{"another row", "rows_innodb", "UPDATE rows_innodb SET v = 1 WHERE id = 3", 1, false},
		{"no such row", "rows_innodb", "", 99, false},
		{"no row locks", "rows_memory", "UPDATE rows_memory SET v = 1 WHERE id = 1", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := tdb.SQL.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if tt.write != "" {
				for _, q := range []string{"BEGIN", tt.write} {
					if _, err := conn.ExecContext(ctx, q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
			}
			if tt.held {
				if ok, err := db.Committed(ctx, tt.table, "id", tt.id); ok || err != nil {
					t.Fatalf("while the writer holds the row: %v, %v; want false, no error", ok, err)
				}
			}
			if tt.write != "" {
				if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
					t.Fatal(err)
				}
			}
			if ok, err := db.Committed(ctx, tt.table, "id", tt.id); !ok || err != nil {
				t.Fatalf("once committed: %v, %v; want true", ok, err)
			}
		})
	}
	if _, err := db.Committed(ctx, "rows`innodb", "id", 1); err == nil {
		t.Error("a table name that is not an identifier: no error")
	}
	// A user who may not read the table is refused for good
	// (ErrCannotLock: the feed stops asking); a table gone is not.
	user := "nl_" + tdb.Name[len(tdb.Name)-8:]
	for _, q := range []string{"CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON " + tdb.Name + ".rows_memory TO '" + user + "'@'%'"} {
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { tdb.SQL.Exec("DROP USER '" + user + "'@'%'") })
	limited := tdb.StoreWith(t, func(o *store.Options) { o.User, o.Password = user, "pw" })
	if _, err := limited.Committed(ctx, "rows_innodb", "id", 1); !errors.Is(err, store.ErrCannotLock) {
		t.Errorf("a table the user may not read: %v, want ErrCannotLock", err)
	}
	if _, err := db.Committed(ctx, "rows_gone", "id", 1); err == nil || errors.Is(err, store.ErrCannotLock) {
		t.Errorf("a table that does not exist: %v, want an error of its own", err)
	}
}

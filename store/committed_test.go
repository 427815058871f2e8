package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestAwaitCommitted: while another transaction holds a row it wrote
// (an update, an insert, a delete: as between a server's binary log and
// its engine's commit), the wait does not end; once it commits, it does.
// A row nobody holds, a row that does not exist and a table without row
// locks end it at once.
func TestAwaitCommitted(t *testing.T) {
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
				wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				err := db.AwaitCommitted(wctx, tt.table, "id", tt.id)
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("while the writer holds the row: %v, want the deadline", err)
				}
			}
			if tt.write != "" {
				if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
					t.Fatal(err)
				}
			}
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := db.AwaitCommitted(wctx, tt.table, "id", tt.id); err != nil {
				t.Fatalf("once committed: %v", err)
			}
		})
	}
	if err := db.AwaitCommitted(ctx, "rows`innodb", "id", 1); err == nil {
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
	if err := limited.AwaitCommitted(ctx, "rows_innodb", "id", 1); !errors.Is(err, store.ErrCannotLock) {
		t.Errorf("a table the user may not read: %v, want ErrCannotLock", err)
	}
	if err := db.AwaitCommitted(ctx, "rows_gone", "id", 1); err == nil || errors.Is(err, store.ErrCannotLock) {
		t.Errorf("a table that does not exist: %v, want an error of its own", err)
	}
}

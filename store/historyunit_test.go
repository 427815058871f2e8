package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/history"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

// menus is a third namespace that exists only here: menus in a table of
// their own, as a new namespace's package and store file would add them.
const menus wpsidecar.Namespace = "menus"

type menuUnit struct{}

func (menuUnit) Namespace() wpsidecar.Namespace { return menus }
func (menuUnit) Summary() string                { return "Menus (menus/v1); edit_theme_options." }
func (menuUnit) ItemsField() string             { return "menus" }
func (menuUnit) Listed() bool                   { return true }
func (menuUnit) HistoryTag() string             { return "m" }
func (menuUnit) Labels() (one, many string)     { return "menu", "menus" }
func (menuUnit) HistoryCapability() string      { return "edit_theme_options" }
func (menuUnit) WriteValue(b *bytes.Buffer, v string) {
	b.WriteString(v) // the items column is JSON already
}

// menuReverter writes a menu's items back, refusing as the store's own
// reverters do, and records the revert through the history's recorder.
// Outside store it reaches the table through the test's connection.
type menuReverter struct{ sql *sql.DB }

func (r menuReverter) Revert(ctx context.Context, db *store.DB, e history.Entry, rv store.Revert) error {
	tx, err := r.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var items string
	var cur *string
	switch err := tx.QueryRowContext(ctx, "SELECT items FROM `"+e.Object+"` WHERE menu_key = ? FOR UPDATE", e.Key).Scan(&items); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	default:
		cur = &items
	}
	if !rv.Force && value(cur) != value(e.After) {
		return wpsidecar.ErrChanged
	}
	if e.Before == nil {
		_, err = tx.ExecContext(ctx, "DELETE FROM `"+e.Object+"` WHERE menu_key = ?", e.Key)
	} else {
		_, err = tx.ExecContext(ctx, "INSERT INTO `"+e.Object+"` (menu_key, title, items, updated_at) VALUES (?, '', ?, ?) ON DUPLICATE KEY UPDATE items = VALUES(items), updated_at = VALUES(updated_at)",
			e.Key, *e.Before, rv.Now)
	}
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return db.History().Record(ctx, wpsidecar.Commit{Namespace: menus, Object: e.Object, Author: rv.By,
		Items: []wpsidecar.Item{{Key: e.Key, Before: cur, After: e.Before}}})
}

// A namespace the store's code never names is recorded under its unit's
// origin tag and reverted by its own reverter, both handed in through
// store.Options; a store without its unit refuses to record or revert it.
func TestHistory_ThirdNamespace(t *testing.T) {
	tdb := testdb.New(t)
	ctx := context.Background()
	table := testdb.Prefix + "menus"
	if _, err := tdb.SQL.ExecContext(ctx, "CREATE TABLE `"+table+"` (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, menu_key VARCHAR(191) NOT NULL, "+
		"title TEXT NOT NULL, items LONGTEXT NOT NULL, updated_at DATETIME NOT NULL, PRIMARY KEY (id), UNIQUE KEY menu_key (menu_key))"); err != nil {
		t.Fatal(err)
	}
	db := tdb.StoreWith(t, func(o *store.Options) {
		o.History = true
		o.HistoryUnits = append(o.HistoryUnits, store.HistoryUnit{Unit: menuUnit{}, Reverter: menuReverter{sql: tdb.SQL}})
	})
	h := db.History()
	// PHP changed the main menu; the feed saw it in one transaction with
	// a field group's change.
	if _, err := tdb.SQL.ExecContext(ctx, "INSERT INTO `"+table+"` (menu_key, title, items, updated_at) VALUES ('main', 'Main', '[1,2,3]', '2026-01-01 00:00:00')"); err != nil {
		t.Fatal(err)
	}
	php := wpsidecar.Author{Login: wpsidecar.LoginPHP, Via: wpsidecar.ViaBinlog}
	for _, c := range []wpsidecar.Commit{
		{Namespace: wpsidecar.FieldGroups, Object: testdb.Prefix + "fieldmgr_groups", Items: []wpsidecar.Item{{Key: "g1", After: str(`{"title":"G","status":"active","config":"{}"}`)}}},
		{Namespace: menus, Object: table, Items: []wpsidecar.Item{{Key: "main", Before: str("[1,2]"), After: str("[1,2,3]")}}},
	} {
		c.Origin, c.Author = "0-1-42", php
		if err := h.Record(ctx, c); err != nil {
			t.Fatalf("record %s: %v", c.Namespace, err)
		}
	}
	origins := map[string]string{}
	rows, err := tdb.SQL.QueryContext(ctx, "SELECT namespace, origin FROM `"+h.Table()+"`")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ns, origin string
		if err := rows.Scan(&ns, &origin); err != nil {
			t.Fatal(err)
		}
		origins[ns] = origin
	}
	rows.Close()
	if origins["menus"] != "0-1-42/m#0" || origins["fieldmgr"] != "0-1-42/g#0" {
		t.Errorf("origins %v, want menus 0-1-42/m#0 and fieldmgr 0-1-42/g#0", origins)
	}

	list, _, err := h.List(ctx, history.Filter{Namespace: string(menus), Page: 1, PerPage: 10})
	if err != nil || len(list) != 1 {
		t.Fatalf("menus' entries: %+v, %v", list, err)
	}
	entry := list[0].ID
	rv := store.Revert{By: wpsidecar.Author{UserID: 1, Login: "admin"}, Now: "2026-01-02 00:00:00"}
	if err := h.Revert(ctx, entry, rv); err != nil {
		t.Fatalf("revert: %v", err)
	}
	var items string
	if err := tdb.SQL.QueryRowContext(ctx, "SELECT items FROM `"+table+"` WHERE menu_key = 'main'").Scan(&items); err != nil || items != "[1,2]" {
		t.Errorf("after the revert: %q, %v; want [1,2]", items, err)
	}
	list, _, err = h.List(ctx, history.Filter{Namespace: string(menus), Page: 1, PerPage: 10})
	if err != nil || len(list) != 2 || list[0].Via != wpsidecar.ViaRevert || list[0].Login != "admin" || value(list[0].After) != "[1,2]" {
		t.Errorf("the revert's entry: %+v, %v", list, err)
	}
	// Its "after" is no longer current: refused.
	if err := h.Revert(ctx, entry, rv); !errors.Is(err, wpsidecar.ErrChanged) {
		t.Errorf("second revert: %v, want ErrChanged", err)
	}

	// A store not given the unit neither records nor reverts menus.
	bare := tdb.StoreWith(t, func(o *store.Options) { o.History = true })
	err = bare.History().Record(ctx, wpsidecar.Commit{Namespace: menus, Object: table, Origin: "0-1-43", Author: php,
		Items: []wpsidecar.Item{{Key: "main", Before: str("[1,2]"), After: str("[1]")}}})
	if err == nil {
		t.Error("recording a namespace without a unit: no error")
	}
	if err := bare.History().Revert(ctx, entry, store.Revert{Force: true}); !errors.Is(err, wpsidecar.ErrUnrevertable) {
		t.Errorf("reverting a namespace without a unit: %v, want ErrUnrevertable", err)
	}
	var n int
	if err := tdb.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM `"+h.Table()+"`").Scan(&n); err != nil || n != 3 {
		t.Errorf("%d entries (%v), want 3: the refused record wrote one", n, err)
	}
}

// Units that would give one transaction's entries one origin are refused
// when the store opens, as is a unit without its reverter.
func TestOpen_HistoryUnitsChecked(t *testing.T) {
	for name, units := range map[string][]store.HistoryUnit{
		"twice":       {{Unit: menuUnit{}, Reverter: menuReverter{}}, {Unit: menuUnit{}, Reverter: menuReverter{}}},
		"no reverter": {{Unit: menuUnit{}}},
		"no unit":     {{Reverter: menuReverter{}}},
	} {
		if db, err := store.Open(store.Options{TablePrefix: "wp_", HistoryUnits: units}); err == nil {
			db.Close()
			t.Errorf("%s: opened", name)
		}
	}
	if db, err := store.Open(store.Options{TablePrefix: "wp_", History: true}); err == nil {
		db.Close()
		t.Error("the history kept with no unit: opened")
	}
	shared := append(testdb.HistoryUnits(), store.HistoryUnit{Unit: gTagged{}, Reverter: menuReverter{}})
	if db, err := store.Open(store.Options{TablePrefix: "wp_", HistoryUnits: shared}); err == nil {
		db.Close()
		t.Error("two units tagged g: opened")
	}
}

// gTagged takes the field groups' origin tag.
type gTagged struct{ menuUnit }

func (gTagged) HistoryTag() string { return "g" }

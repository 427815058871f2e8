package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/history"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

func historyStore(t *testing.T) (*testdb.DB, *store.DB, *fieldgrouptable.Groups) {
	tdb := testdb.New(t)
	db := tdb.StoreWith(t, func(o *store.Options) { o.History = true })
	groups, _ := fieldgrouptable.Open(db, testdb.Prefix+"fieldmgr_groups")
	if _, err := groups.EnsureTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tdb, db, groups
}

func str(s string) *string { return &s }

func value(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// Every write is recorded in its transaction, item by item; filters and
// pages select; a revert writes "before" back and is recorded; a second
// revert of the same entry is refused; pruning keeps the newest.
func TestHistory_RecordListRevertPrune(t *testing.T) {
	_, db, groups := historyStore(t)
	ctx := context.Background()
	h := db.History()
	by := wpsidecar.Author{UserID: 7, Login: "ann", Via: wpsidecar.ViaREST, RequestID: "r1"}
	now := "2026-01-01 00:00:00"

	if err := groups.Create(ctx, "g1", "One", `{"type":"post"}`, now, by); err != nil {
		t.Fatal(err)
	}
	if err := groups.Update(ctx, "g1", str("Uno"), nil, now, nil, by); err != nil {
		t.Fatal(err)
	}
	if _, err := groups.Toggle(ctx, "g1", now, nil, by); err != nil {
		t.Fatal(err)
	}
	// An option set: two ids added, then one changed and one removed.
	set := func(v string) {
		t.Helper()
		rec := &store.Recorded{Namespace: wpsidecar.ThemeOptions, Diff: themeoption.Diff, By: by}
		if err := db.ModifyOption(ctx, "opts", wp71, rec, func(string, bool) (string, error) { return v, nil }); err != nil {
			t.Fatal(err)
		}
	}
	set(`a:2:{s:1:"a";i:1;s:1:"b";d:1;}`)
	set(`a:1:{s:1:"a";i:2;}`)
	// A write without an author is not recorded (tests, tools).
	if err := db.ModifyOption(ctx, "other", wp71, nil, func(string, bool) (string, error) { return "x", nil }); err != nil {
		t.Fatal(err)
	}

	list, total, err := h.List(ctx, history.Filter{Page: 1, PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ ns, key, before, after string }
	want := []row{
		{"themeopts", "b", `d:1;`, "<nil>"},
		{"themeopts", "a", `i:1;`, `i:2;`},
		{"themeopts", "b", "<nil>", `d:1;`},
		{"themeopts", "a", "<nil>", `i:1;`},
		{"fieldmgr", "g1", `{"title":"Uno","status":"active","config":"{\"type\":\"post\"}"}`, `{"title":"Uno","status":"inactive","config":"{\"type\":\"post\"}"}`},
		{"fieldmgr", "g1", `{"title":"One","status":"active","config":"{\"type\":\"post\"}"}`, `{"title":"Uno","status":"active","config":"{\"type\":\"post\"}"}`},
		{"fieldmgr", "g1", "<nil>", `{"title":"One","status":"active","config":"{\"type\":\"post\"}"}`},
	}
	if total != len(want) || len(list) != len(want) {
		t.Fatalf("%d entries (total %d), want %d: %+v", len(list), total, len(want), list)
	}
	for i, w := range want {
		e := list[i]
		got := row{e.Namespace, e.Key, value(e.Before), value(e.After)}
		if got != w || e.Login != "ann" || e.UserID != 7 || e.Via != "rest" || e.RequestID != "r1" {
			t.Errorf("entry %d: %+v %s %d %s, want %+v", i, got, e.Login, e.UserID, e.Via, w)
		}
	}

	for _, c := range []struct {
		f    history.Filter
		want int
		n    int
	}{
		{history.Filter{Namespace: "fieldmgr", Page: 1, PerPage: 10}, 3, 3},
		{history.Filter{Key: "a", Page: 1, PerPage: 10}, 2, 2},
		{history.Filter{Key: "A", Page: 1, PerPage: 10}, 0, 0}, // keys are exact
		{history.Filter{Page: 2, PerPage: 5}, 7, 2},
		{history.Filter{Since: time.Now().Add(time.Hour), Page: 1, PerPage: 10}, 0, 0},
	} {
		l, n, err := h.List(ctx, c.f)
		if err != nil || n != c.want || len(l) != c.n {
			t.Errorf("%+v: %d entries of %d (%v), want %d of %d", c.f, len(l), n, err, c.n, c.want)
		}
	}

	// Revert "a: 1 → 2": a is 1 again; again: refused; forced: written.
	rv := store.Revert{By: by, Now: now, DBVersion: wp71}
	if err := h.Revert(ctx, list[1].ID, rv); err != nil {
		t.Fatal(err)
	}
	if raw, _ := db.RawOption(ctx, "opts"); raw != `a:1:{s:1:"a";i:1;}` {
		t.Errorf("after the revert: %s", raw)
	}
	if err := h.Revert(ctx, list[1].ID, rv); !errors.Is(err, wpsidecar.ErrChanged) {
		t.Errorf("second revert: %v", err)
	}
	// Revert the removal of b: it comes back, exactly (a float).
	if err := h.Revert(ctx, list[0].ID, rv); err != nil {
		t.Fatal(err)
	}
	if raw, _ := db.RawOption(ctx, "opts"); raw != `a:2:{s:1:"a";i:1;s:1:"b";d:1;}` {
		t.Errorf("after reverting the removal: %s", raw)
	}
	// Revert the group's creation: deleted; the revert of that: back.
	if err := h.Revert(ctx, list[6].ID, store.Revert{By: by, Now: now, Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := groups.Get(ctx, "g1"); !errors.Is(err, wpsidecar.ErrNotFound) {
		t.Errorf("the group after reverting its creation: %v", err)
	}
	latest, _, _ := h.List(ctx, history.Filter{Page: 1, PerPage: 1})
	if latest[0].Via != wpsidecar.ViaRevert || latest[0].After != nil {
		t.Errorf("the revert's own entry: %+v", latest[0])
	}
	if err := h.Revert(ctx, latest[0].ID, rv); err != nil {
		t.Fatal(err)
	}
	if g, err := groups.Get(ctx, "g1"); err != nil || g.Title != "Uno" || g.Status != "inactive" {
		t.Errorf("the group back: %+v %v", g, err)
	}
	if err := h.Revert(ctx, 999999, rv); !errors.Is(err, wpsidecar.ErrNotFound) {
		t.Errorf("no such entry: %v", err)
	}

	_, before, _ := h.List(ctx, history.Filter{Page: 1, PerPage: 1})
	if n, err := h.Prune(ctx, 0, 3); err != nil || n != int64(before-3) {
		t.Errorf("prune to 3: %d deleted (%v), had %d", n, err, before)
	}
	if _, n, _ := h.List(ctx, history.Filter{Page: 1, PerPage: 1}); n != 3 {
		t.Errorf("after pruning: %d", n)
	}
	if n, err := h.Prune(ctx, time.Hour, 0); err != nil || n != 0 {
		t.Errorf("prune by an hour: %d (%v)", n, err)
	}
}

// A history that was never written is empty, not an error.
func TestHistory_NoTableYet(t *testing.T) {
	_, db, _ := historyStore(t)
	l, n, err := db.History().List(context.Background(), history.Filter{Page: 1, PerPage: 10})
	if err != nil || n != 0 || len(l) != 0 {
		t.Errorf("%v %d %v", l, n, err)
	}
	if _, err := db.History().Get(context.Background(), 1); !errors.Is(err, wpsidecar.ErrNotFound) {
		t.Errorf("get: %v", err)
	}
}

// A request that cannot have a connection within MaxWait is refused with
// ErrBusy, counted, and nothing waits for it; once one is free, reads go on.
func TestMaxWait_RefusesInsteadOfQueueing(t *testing.T) {
	db := testdb.New(t).StoreWith(t, func(o *store.Options) { o.MaxOpen, o.MaxWait = 1, 20*time.Millisecond })
	ctx := context.Background()
	holding, release := make(chan struct{}), make(chan struct{})
	wrote := make(chan error)
	go func() {
		wrote <- db.ModifyOption(ctx, "held", wp71, nil, func(string, bool) (string, error) {
			close(holding)
			<-release
			return "x", nil
		})
	}()
	<-holding
	if _, err := db.RawOption(ctx, "held"); !errors.Is(err, store.ErrBusy) {
		t.Errorf("while the only connection is held: %v", err)
	}
	close(release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if v, err := db.RawOption(ctx, "held"); err != nil || v != "x" {
		t.Errorf("once free: %q %v", v, err)
	}
	refused := -1.0
	for _, c := range db.ReplicaMetrics() {
		d := make(chan *prometheus.Desc, 1)
		c.Describe(d)
		if strings.Contains((<-d).String(), `"wpsidecar_db_wait_refused_total"`) {
			refused = testutil.ToFloat64(c)
		}
	}
	if refused != 1 {
		t.Errorf("wpsidecar_db_wait_refused_total = %v, want 1", refused)
	}
}

// A change seen in the log is recorded once however many instances
// record it, and an item that did not change (a write of a group's dates
// alone) takes no place in the names: the entries are those an instance
// handed only the changed items records too, so both agree.
func TestHistory_RecordOnce(t *testing.T) {
	_, db, _ := historyStore(t)
	ctx := context.Background()
	h := db.History()
	a, b := `{"title":"A","status":"publish","config":"{}"}`, `{"title":"B","status":"publish","config":"{}"}`
	author := wpsidecar.Author{Login: wpsidecar.LoginPHP, Via: wpsidecar.ViaBinlog}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	all := wpsidecar.Commit{Namespace: wpsidecar.FieldGroups, Object: "wp_fieldmgr_groups", Origin: "0-1-5", Author: author, When: at,
		Items: []wpsidecar.Item{{Key: "dates_only", Before: &a, After: &a}, {Key: "renamed", Before: &a, After: &b}}}
	changed := all
	changed.Items = all.Items[1:]
	for _, c := range []wpsidecar.Commit{all, changed, all} {
		if err := h.Record(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	entries, total, err := h.List(ctx, history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if total != 1 || len(entries) != 1 || entries[0].Key != "renamed" || value(entries[0].After) != b {
		t.Errorf("entries %+v (total %d), want the one change once", entries, total)
	}
}

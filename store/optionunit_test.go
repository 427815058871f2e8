package store_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/history"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
)

// bookmarks is a namespace that exists only here, kept as one serialized
// array in an option row, as the theme options are: the store records
// and reverts its row through what the caller hands it (store.Recorded,
// store.OptionArrayReverter), naming it nowhere.
const bookmarks wpsidecar.Namespace = "bookmarks"

type bookmarkUnit struct{ menuUnit }

func (bookmarkUnit) Namespace() wpsidecar.Namespace       { return bookmarks }
func (bookmarkUnit) HistoryTag() string                   { return "b" }
func (bookmarkUnit) Labels() (one, many string)           { return "bookmark", "bookmarks" }
func (bookmarkUnit) WriteValue(b *bytes.Buffer, v string) { phpserial.JSONString(b, v) }

// bookmarkDiff is its rules' diff: an item an entry of the array, its
// value serialized; a row that is not an array holds none.
func bookmarkDiff(before, after string) []wpsidecar.Item {
	entries := func(raw string) map[string]string {
		out := map[string]string{}
		if v, err := phpserial.MaybeUnserialize(raw); err == nil {
			for _, e := range v.Entries {
				out[e.Key.String()] = phpserial.Serialize(e.Value)
			}
		}
		return out
	}
	b, a := entries(before), entries(after)
	var out []wpsidecar.Item
	for k, v := range a {
		if old, ok := b[k]; !ok {
			out = append(out, wpsidecar.Item{Key: k, After: &v})
		} else if old != v {
			out = append(out, wpsidecar.Item{Key: k, Before: &old, After: &v})
		}
	}
	for k, old := range b {
		if _, ok := a[k]; !ok {
			out = append(out, wpsidecar.Item{Key: k, Before: &old})
		}
	}
	return out
}

// TestModifyOption_OtherNamespace: a write of an option row is recorded
// under the namespace and with the diff its caller names, and reverted by
// the option-array reverter given them.
func TestModifyOption_OtherNamespace(t *testing.T) {
	tdb := testdb.New(t)
	ctx := context.Background()
	reverter := store.OptionArrayReverter{Namespace: bookmarks, Diff: bookmarkDiff}
	db := tdb.StoreWith(t, func(o *store.Options) {
		o.History = true
		o.HistoryUnits = append(o.HistoryUnits, store.HistoryUnit{Unit: bookmarkUnit{}, Reverter: reverter})
	})
	by := wpsidecar.Author{UserID: 1, Login: "admin", Via: wpsidecar.ViaREST}
	rec := &store.Recorded{Namespace: bookmarks, Diff: bookmarkDiff, By: by}
	for _, v := range []string{`a:1:{s:4:"home";s:1:"/";}`, `a:1:{s:4:"home";s:5:"/home";}`} {
		if err := db.ModifyOption(ctx, "my_bookmarks", wp71, rec, func(string, bool) (string, error) { return v, nil }); err != nil {
			t.Fatal(err)
		}
	}
	h := db.History()
	list, _, err := h.List(ctx, history.Filter{Namespace: string(bookmarks), Page: 1, PerPage: 10})
	if err != nil || len(list) != 2 || list[0].Key != "home" || list[0].Object != "my_bookmarks" || value(list[0].After) != `s:5:"/home";` {
		t.Fatalf("bookmarks' entries: %+v, %v", list, err)
	}
	if err := h.Revert(ctx, list[0].ID, store.Revert{By: by, DBVersion: wp71}); err != nil {
		t.Fatalf("revert: %v", err)
	}
	if raw, err := db.RawOption(ctx, "my_bookmarks"); err != nil || raw != `a:1:{s:4:"home";s:1:"/";}` {
		t.Errorf("after the revert: %q, %v", raw, err)
	}
	list, _, err = h.List(ctx, history.Filter{Namespace: string(bookmarks), Page: 1, PerPage: 10})
	if err != nil || len(list) != 3 || list[0].Via != wpsidecar.ViaRevert || value(list[0].After) != `s:1:"/";` {
		t.Errorf("the revert's entry: %+v, %v", list, err)
	}
}

package history_test

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/proxy/history"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/wpjson"
)

// Filter reads the list's query as WordPress validates collection
// parameters: a bad one is 400 rest_invalid_param naming it.
func TestFilter(t *testing.T) {
	since := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		query string
		want  store.HistoryFilter
		bad   string // the parameter named, when refused
	}{
		{"", store.HistoryFilter{Page: 1, PerPage: 10}, ""},
		{"namespace=themeopts&key=logo&page=2&per_page=100", store.HistoryFilter{Namespace: "themeopts", Key: "logo", Page: 2, PerPage: 100}, ""},
		{"since=2026-11-24T10:00:00Z", store.HistoryFilter{Since: since, Page: 1, PerPage: 10}, ""},
		{"since=2026-11-24T12:00:00%2B02:00", store.HistoryFilter{Since: since, Page: 1, PerPage: 10}, ""},
		{"since=2026-11-24T10:00:00", store.HistoryFilter{Since: since, Page: 1, PerPage: 10}, ""},
		{"namespace=wp", store.HistoryFilter{}, "namespace"},
		{"since=yesterday", store.HistoryFilter{}, "since"},
		{"page=0", store.HistoryFilter{}, "page"},
		{"page=x", store.HistoryFilter{}, "page"},
		{"per_page=101", store.HistoryFilter{}, "per_page"},
		{"per_page=-1", store.HistoryFilter{}, "per_page"},
		{"page=99999999999999999999", store.HistoryFilter{}, "page"},
	} {
		q, _ := url.ParseQuery(c.query)
		got, err := history.Filter(q)
		var e *wpjson.Error
		switch {
		case c.bad != "":
			if !errors.As(err, &e) || e.Status != 400 || e.Code != "rest_invalid_param" || e.Params[c.bad] == "" {
				t.Errorf("%q: %v, want rest_invalid_param naming %s", c.query, err, c.bad)
			}
		case err != nil || !got.Since.Equal(c.want.Since) || got.Namespace != c.want.Namespace || got.Key != c.want.Key || got.Page != c.want.Page || got.PerPage != c.want.PerPage:
			t.Errorf("%q: %+v %v, want %+v", c.query, got, err, c.want)
		}
	}
}

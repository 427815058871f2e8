package history_test

import (
	"bytes"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/history"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
)

// units are the two namespaces served, with no theme options
// configuration.
var units = wpsidecar.Units{fieldgroup.Unit{}, themeoption.Unit{}}

// ParseFilter reads the list's query as WordPress validates collection
// parameters: a bad one is an *InvalidParam naming it and saying what is
// wrong in WordPress's words.
func TestParseFilter(t *testing.T) {
	since := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		query string
		want  history.Filter
		bad   history.InvalidParam // when refused
	}{
		{"", history.Filter{Page: 1, PerPage: 10}, history.InvalidParam{}},
		{"namespace=themeopts&key=logo&page=2&per_page=100", history.Filter{Namespace: "themeopts", Key: "logo", Page: 2, PerPage: 100}, history.InvalidParam{}},
		{"since=2026-11-24T10:00:00Z", history.Filter{Since: since, Page: 1, PerPage: 10}, history.InvalidParam{}},
		{"since=2026-11-24T12:00:00%2B02:00", history.Filter{Since: since, Page: 1, PerPage: 10}, history.InvalidParam{}},
		{"since=2026-11-24T10:00:00", history.Filter{Since: since, Page: 1, PerPage: 10}, history.InvalidParam{}},
		{"namespace=wp", history.Filter{}, history.InvalidParam{Name: "namespace", Message: "namespace is not one of fieldmgr, themeopts."}},
		{"since=yesterday", history.Filter{}, history.InvalidParam{Name: "since", Message: "Invalid date."}},
		{"page=0", history.Filter{}, history.InvalidParam{Name: "page", Message: "page must be between 1 (inclusive) and 2147483647 (inclusive)"}},
		{"page=x", history.Filter{}, history.InvalidParam{Name: "page", Message: "page is not of type integer."}},
		{"per_page=101", history.Filter{}, history.InvalidParam{Name: "per_page", Message: "per_page must be between 1 (inclusive) and 100 (inclusive)"}},
		{"per_page=-1", history.Filter{}, history.InvalidParam{Name: "per_page", Message: "per_page must be between 1 (inclusive) and 100 (inclusive)"}},
		{"page=99999999999999999999", history.Filter{}, history.InvalidParam{Name: "page", Message: "page is not of type integer."}},
	} {
		q, _ := url.ParseQuery(c.query)
		got, err := history.ParseFilter(q, units)
		var e *history.InvalidParam
		switch {
		case c.bad.Name != "":
			if !errors.As(err, &e) || *e != c.bad || err.Error() != "rest_invalid_param: Invalid parameter(s): "+c.bad.Name {
				t.Errorf("%q: %#v, want %+v", c.query, err, c.bad)
			}
		case err != nil || !got.Since.Equal(c.want.Since) || got.Namespace != c.want.Namespace || got.Key != c.want.Key || got.Page != c.want.Page || got.PerPage != c.want.PerPage:
			t.Errorf("%q: %+v %v, want %+v", c.query, got, err, c.want)
		}
	}
}

// The namespaces a filter takes are the units': none is named here.
func TestParseFilter_Units(t *testing.T) {
	only := wpsidecar.Units{fieldgroup.Unit{}}
	if _, err := history.ParseFilter(url.Values{"namespace": {"fieldmgr"}}, only); err != nil {
		t.Errorf("fieldmgr: %v", err)
	}
	var e *history.InvalidParam
	if _, err := history.ParseFilter(url.Values{"namespace": {"themeopts"}}, only); !errors.As(err, &e) || e.Message != "namespace is not one of fieldmgr." {
		t.Errorf("themeopts among fieldmgr alone: %v", err)
	}
}

// An entry's namespace decides who sees it: manage_options for the field
// groups, the theme options configuration's capability for the theme
// options (edit_theme_options without one), no one for anything else.
func TestCapability(t *testing.T) {
	for _, c := range []struct {
		ns   string
		opts *themeoption.Config
		want string
	}{
		{"fieldmgr", nil, "manage_options"},
		{"fieldmgr", &themeoption.Config{Capability: "switch_themes"}, "manage_options"},
		{"themeopts", nil, "edit_theme_options"},
		{"themeopts", &themeoption.Config{Capability: "switch_themes"}, "switch_themes"},
		{"wp", nil, ""},
	} {
		units := wpsidecar.Units{fieldgroup.Unit{}, themeoption.Unit{Config: func() *themeoption.Config { return c.opts }}}
		if got := history.Capability(c.ns, units); got != c.want {
			t.Errorf("%s %+v: %q, want %q", c.ns, c.opts, got, c.want)
		}
	}
}

// WriteEntry: a group's values as its title, status and config; an
// options row's as json_encode renders them; what cannot be read, and a
// namespace not served, null.
func TestWriteEntry(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		e    history.Entry
		want string
	}{
		{history.Entry{ID: 7, Namespace: "themeopts", Object: "themeopts_options", Key: "accent_color",
			Before: str(`s:7:"#111111";`), After: str(`a:1:{i:0;s:1:"x";}`), UserID: 1, Login: "admin", Via: "rest", RequestID: "r1", DateGMT: "2026-11-24 10:00:00"},
			`{"id":7,"namespace":"themeopts","object":"themeopts_options","key":"accent_color","before":"#111111","after":["x"],"user":{"id":1,"login":"admin"},"via":"rest","request_id":"r1","date_gmt":"2026-11-24T10:00:00"}`},
		{history.Entry{ID: 8, Namespace: "themeopts", Key: "k", After: str(`not serialized`)},
			`{"id":8,"namespace":"themeopts","object":"","key":"k","before":null,"after":null,"user":{"id":0,"login":""},"via":"","request_id":"","date_gmt":""}`},
		{history.Entry{ID: 9, Namespace: "fieldmgr", Object: "wp_fieldmgr_groups", Key: "g", Before: str(`{"title":"T","status":"active","config":"{\"fields\":[]}"}`), After: str(`{`)},
			`{"id":9,"namespace":"fieldmgr","object":"wp_fieldmgr_groups","key":"g","before":{"title":"T","status":"active","config":{"fields":[]}},"after":null,"user":{"id":0,"login":""},"via":"","request_id":"","date_gmt":""}`},
		{history.Entry{ID: 10, Namespace: "menus", Key: "m", After: str(`s:1:"x";`)},
			`{"id":10,"namespace":"menus","object":"","key":"m","before":null,"after":null,"user":{"id":0,"login":""},"via":"","request_id":"","date_gmt":""}`},
	} {
		var b bytes.Buffer
		history.WriteEntry(&b, c.e, units)
		if b.String() != c.want {
			t.Errorf("%d:\n%s\nwant\n%s", c.e.ID, b.String(), c.want)
		}
	}
}

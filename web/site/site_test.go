package site

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes/delivery"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/reload"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/module"
)

// TestPurgeOf: a commit's purge names its site's tags as the site's
// answers carry them (none on a single site), and the public routes that
// show it under that site's home (PublicURLs); a site this instance never
// served purges its tags only.
func TestPurgeOf(t *testing.T) {
	tdb := testdb.New(t)
	tdb.AddSite(t, 2, "http://example.test/two")
	db := tdb.Store(t)
	routes := filepath.Join(t.TempDir(), "public.json")
	os.WriteFile(routes, []byte(`{"routes":[{"path":"/wp-json/x/v1/brand","themeopts":["logo"]},{"path":"/wp-json/x/v1/fields","fieldmgr":{"status":"active"}}]}`), 0o644)
	file, err := reload.Open(routes, "public routes", publicroute.Parser(fieldgroup.PublicSource(), themeoption.PublicSource()), nil, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	two := &Site{id: 2, settings: store.NewSettingsWatcher(db.ForSite(2), time.Hour, store.SiteURLs{}), pub: &public{file: file}}
	if err := two.settings.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		change     wpsidecar.Commit
		s          *Site
		tags, urls []string
	}{
		{"single site", wpsidecar.Commit{Namespace: wpsidecar.ThemeOptions, Items: []wpsidecar.Item{{Key: "a b"}}}, nil, []string{"themeopts", "themeopts:a%20b"}, nil},
		{"site 2, served", wpsidecar.Commit{Namespace: wpsidecar.ThemeOptions, Items: []wpsidecar.Item{{Key: "logo"}}, BlogID: 2}, two,
			[]string{"site2:themeopts", "site2:themeopts:logo"}, []string{"http://example.test/two/wp-json/x/v1/brand"}},
		{"site 2, groups", wpsidecar.Commit{Namespace: wpsidecar.FieldGroups, Items: []wpsidecar.Item{{Key: "g"}}, BlogID: 2}, two,
			[]string{"site2:fieldmgr", "site2:fieldmgr:list", "site2:fieldmgr:g"}, []string{"http://example.test/two/wp-json/x/v1/fields"}},
		{"site 3, never served", wpsidecar.Commit{Namespace: wpsidecar.FieldGroups, Items: []wpsidecar.Item{{Key: "g"}}, BlogID: 3}, nil,
			[]string{"site3:fieldmgr", "site3:fieldmgr:list", "site3:fieldmgr:g"}, nil},
	} {
		p := delivery.PurgeOf(c.change, wpsidecar.Units{fieldgroup.Unit{}, themeoption.Unit{}}, c.s.PublicURLs)
		var urls []string
		for _, u := range p.URLs {
			urls = append(urls, u.String())
		}
		if !slices.Equal(p.Tags, c.tags) || !slices.Equal(urls, c.urls) {
			t.Errorf("%s: tags %q urls %q, want %q %q", c.name, p.Tags, urls, c.tags, c.urls)
		}
	}
}

// toyNamespace is a namespace site has never heard of: what it serves of
// one is whatever the module's Site builds.
type toyNamespace struct{ name string }

func (n toyNamespace) Name() string         { return n.name }
func (toyNamespace) Register(r *mux.Router) {}

// TestBuildRangesOverModules: a site's namespaces are the modules'
// handlers, in their order, before its history's; a module without
// handlers (Site nil, or none served on the site) adds none; each is
// built for the site's place; a module that cannot be built fails the
// site.
func TestBuildRangesOverModules(t *testing.T) {
	db := testdb.New(t).Store(t)
	place := &multisite.Site{ID: 2, Domain: "example.test", Path: "/two/"}
	served := func(name string) module.Module {
		return module.Module{Unit: fieldgroup.Unit{}, Site: func(d module.SiteDeps) (module.Served, error) {
			if d.Site != place || d.DB == nil || d.Authn == nil || d.Settings == nil {
				t.Errorf("%s: built with %+v", name, d)
			}
			return module.Served{Handlers: toyNamespace{name}}, nil
		}}
	}
	none := module.Module{Unit: themeoption.Unit{}, Site: func(module.SiteDeps) (module.Served, error) { return module.Served{}, nil }}
	failing := module.Module{Unit: themeoption.Unit{}, Site: func(module.SiteDeps) (module.Served, error) { return module.Served{}, errors.New("no table") }}
	for _, c := range []struct {
		name    string
		mods    []module.Module
		want    []string
		wantErr bool
	}{
		{"none", nil, []string{"wpsidecar/v1"}, false},
		{"in order", []module.Module{served("b/v1"), {Unit: fieldgroup.Unit{}}, none, served("a/v1")}, []string{"b/v1", "a/v1", "wpsidecar/v1"}, false},
		{"failing", []module.Module{served("a/v1"), failing}, nil, true},
	} {
		d := &Deps{Options: Options{SettingsRefresh: time.Hour}, Logger: zerolog.Nop(), Background: func(func(context.Context)) {},
			Modules: c.mods}
		s, err := d.Build(context.Background(), 0, db, place)
		if c.wantErr {
			if err == nil {
				t.Errorf("%s: built", c.name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, n := range s.Options().Handlers {
			got = append(got, n.Name())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: namespaces %q, want %q", c.name, got, c.want)
		}
		s.stop()
	}
}

// TestOpenPublic_Off: a routes file showing a namespace served on no
// site is refused at the start, saying why; one that shows only what is
// served opens.
func TestOpenPublic_Off(t *testing.T) {
	path := filepath.Join(t.TempDir(), "public.json")
	os.WriteFile(path, []byte(`{"routes":[{"path":"/wp-json/x/v1/brand","themeopts":["logo"]}]}`), 0o644)
	kinds := []publicroute.Source{fieldgroup.PublicSource(), themeoption.PublicSource()}
	_, err := OpenPublic(path, kinds, map[wpsidecar.Namespace]string{wpsidecar.ThemeOptions: "--themeopts-config is not set"}, zerolog.Nop())
	if want := "public routes " + path + ": a route shows themeopts, but --themeopts-config is not set"; err == nil || err.Error() != want {
		t.Errorf("%v, want %s", err, want)
	}
	if f, err := OpenPublic(path, kinds, map[wpsidecar.Namespace]string{wpsidecar.FieldGroups: "no table"}, zerolog.Nop()); err != nil || f == nil {
		t.Errorf("%v", err)
	}
}

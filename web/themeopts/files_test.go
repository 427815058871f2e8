package themeopts_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/web/module"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

// TestFilesOf: a site's own configuration by blog id, domain, or
// domain and path (any letter case, with or without the trailing slash),
// else the network's.
func TestFilesOf(t *testing.T) {
	dir := t.TempDir()
	write := func(name, opt string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(`{"opt_name":"`+opt+`","sections":[{"id":"s","title":"S","fields":[{"id":"f","type":"text","title":"F"}]}]}`), 0o644)
		return p
	}
	cfg := themeopts.Paths{All: write("network.json", "network_opts"), Sites: []themeopts.SitePath{
		{Site: "3", File: write("three.json", "three_opts")},
		{Site: "shop.example.test", File: write("shop.json", "shop_opts")},
		{Site: "example.test/blog/", File: write("blog.json", "blog_opts")},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	files, reloads, err := themeopts.Open(cfg, zerolog.Nop(), func(f func(context.Context)) { go f(ctx) })
	if err != nil {
		t.Fatal(err)
	}
	if len(reloads) != 4 {
		t.Errorf("%d reloads, want one a file", len(reloads))
	}
	for _, c := range []struct {
		s    *multisite.Site
		want string
	}{
		{nil, "network_opts"},
		{&multisite.Site{ID: 3, Domain: "example.test", Path: "/three/"}, "three_opts"},
		{&multisite.Site{ID: 4, Domain: "Shop.Example.test", Path: "/"}, "shop_opts"},
		{&multisite.Site{ID: 5, Domain: "example.test", Path: "/Blog/"}, "blog_opts"},
		{&multisite.Site{ID: 6, Domain: "example.test", Path: "/other/"}, "network_opts"},
	} {
		if got := files.Of(c.s).Current().OptName; got != c.want {
			t.Errorf("%+v: %s, want %s", c.s, got, c.want)
		}
	}
}

// TestModule_Sites: the module, built once over the files, gives each
// site what its own configuration says — its handlers and its history's
// capability — and follows each site's option row as where finds the
// site; without any configuration no site serves theme options, the
// capability is WordPress's default, and no row is followed.
func TestModule_Sites(t *testing.T) {
	dir := t.TempDir()
	write := func(name, opt, capability string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(`{"opt_name":"`+opt+`","capability":"`+capability+`","sections":[{"id":"s","title":"S","fields":[{"id":"f","type":"text","title":"F"}]}]}`), 0o644)
		return p
	}
	three := &multisite.Site{ID: 3, Domain: "example.test", Path: "/three/"}
	other := &multisite.Site{ID: 4, Domain: "example.test", Path: "/four/"}
	where := func(id int64) (*multisite.Site, bool) {
		switch id {
		case 1:
			return nil, true
		case 3:
			return three, true
		case 4:
			return other, true
		}
		return nil, false
	}
	paths := themeopts.Paths{All: write("network.json", "network_opts", "edit_theme_options"),
		Sites: []themeopts.SitePath{{Site: "3", File: write("three.json", "three_opts", "switch_themes")}}, Where: where}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	files, _, err := themeopts.Open(paths, zerolog.Nop(), func(f func(context.Context)) { go f(ctx) })
	if err != nil {
		t.Fatal(err)
	}
	m := themeopts.Module(files)
	for _, c := range []struct {
		place      *multisite.Site
		capability string
	}{{nil, "edit_theme_options"}, {three, "switch_themes"}, {other, "edit_theme_options"}} {
		sv, err := m.Site(module.SiteDeps{Site: c.place, Log: zerolog.Nop()})
		if err != nil || sv.Handlers == nil || sv.Unit == nil || sv.Unit.HistoryCapability() != c.capability {
			t.Errorf("site %+v: %v, handlers %v, capability %q, want %q", c.place, err, sv.Handlers, sv.Unit.HistoryCapability(), c.capability)
		}
	}
	if m.OptionRow == nil {
		t.Fatal("no option row followed")
	}
	for id, want := range map[int64]string{1: "network_opts", 3: "three_opts", 4: "network_opts", 9: ""} {
		if got := m.OptionRow.Name(id); got != want {
			t.Errorf("site %d's option row %q, want %q", id, got, want)
		}
	}

	for name, c := range map[string]themeopts.Configurations{"nil": nil, "nil files": (*themeopts.Files)(nil), "fixed none": themeopts.Fixed{}} {
		none := themeopts.Module(c)
		if sv, err := none.Site(module.SiteDeps{Log: zerolog.Nop()}); err != nil || sv.Handlers != nil || sv.Unit.HistoryCapability() != "edit_theme_options" {
			t.Errorf("%s: %v, handlers %v", name, err, sv.Handlers)
		}
		if none.OptionRow != nil {
			t.Errorf("%s: no configuration, and an option row followed", name)
		}
	}
}

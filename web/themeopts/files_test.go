package themeopts_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/domain/multisite"
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

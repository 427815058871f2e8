package command

import (
	"context"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/multisite"
	"github.com/wpsidecar/wpsidecar/objcache"
	"github.com/wpsidecar/wpsidecar/site"
	"github.com/wpsidecar/wpsidecar/store"
)

// storedSites are the sites a command works on: the single site; on a
// network site only (when > 0), else every site.
func storedSites(ctx context.Context, cfg *config.Config, db *store.DB, only int64) ([]site.Stored, error) {
	topts, _, err := site.OpenThemeopts(themeoptsFiles(cfg), zerolog.Nop(), func(func(context.Context)) {})
	if err != nil {
		return nil, err
	}
	stored := func(id int64, ms *multisite.Site) (site.Stored, error) {
		view := db
		if id > 0 {
			view = db.ForSite(id)
		}
		s := site.Stored{ID: id, DB: view}
		if f := topts.Of(ms); f != nil {
			s.OptName = f.Current().OptName
		}
		s.Groups, err = view.FieldGroups(view.Table(strings.TrimPrefix(cfg.FieldmgrTable, cfg.TablePrefix)))
		return s, err
	}
	if !cfg.Multisite {
		if only > 0 {
			return nil, fmt.Errorf("--site %d: not a multisite network", only)
		}
		s, err := stored(0, nil)
		return []site.Stored{s}, err
	}
	m, err := multisite.Load(ctx, db.SQL(), cfg.TablePrefix, networkConstants(cfg))
	if err != nil {
		return nil, err
	}
	var out []site.Stored
	for i := range m.Sites {
		ms := &m.Sites[i]
		if only > 0 && ms.ID != only {
			continue
		}
		s, err := stored(ms.ID, ms)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--site %d: no such site on the network", only)
	}
	return out, nil
}

// themeoptsFiles are the configuration's theme options files.
func themeoptsFiles(cfg *config.Config) site.ThemeoptsFiles {
	f := site.ThemeoptsFiles{All: cfg.ThemeoptsConfig}
	for _, s := range cfg.ThemeoptsSites {
		f.Sites = append(f.Sites, site.ThemeoptsSite{Site: s.Site, File: s.File})
	}
	return f
}

// networkConstants are the network's wp-config.php constants.
func networkConstants(cfg *config.Config) multisite.Constants {
	n := cfg.Network
	return multisite.Constants{Defined: n.Domain != "" && n.Path != "", Domain: n.Domain, Path: n.Path, NetworkID: int64(n.ID), Subdomain: n.Subdomain}
}

// openObjectCache connects to the site's Redis object cache, as the
// server does.
func openObjectCache(ctx context.Context, cfg *config.Config) (*objcache.Redis, error) {
	r := cfg.Redis
	return objcache.Open(ctx, objcache.Options{
		Scheme: r.Scheme, Host: r.Host, Port: r.Port, Path: r.Path, Username: r.Username, Password: r.Password,
		Database: r.Database, Timeout: r.Timeout, Salt: r.Salt(), TablePrefix: cfg.TablePrefix, Multisite: cfg.Multisite,
		Logger: zerolog.Nop(),
	}, cfg.Source("object-cache"))
}

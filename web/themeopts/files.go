package themeopts

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/reload"
)

// Files are the theme options configuration files: the network's (or
// the single site's) and those of sites with their own, each opened,
// watched and reloaded once however many sites share it.
type Files struct {
	all   *reload.File[themeoption.Config] // nil: none
	sites []SitePath
	files map[string]*reload.File[themeoption.Config] // by path
	// where finds a site's place on a network by its id (Paths.Where).
	where func(id int64) (*multisite.Site, bool)
}

// Paths are the theme options configuration files: the network's (or
// the single site's), and sites' own.
type Paths struct {
	All   string // "" without
	Sites []SitePath
	// Where finds a site's place on a network by its id, for the option
	// row change detection follows (nil: none followed); called only
	// once changes are detected, so it may look up what is built after
	// Open.
	Where func(id int64) (*multisite.Site, bool)
}

// SitePath is a site's own file: Site is its blog id, its domain, or its
// domain and path.
type SitePath struct{ Site, File string }

// Open opens every configuration file, watched in the background;
// reloads are theirs to run on SIGHUP, one a file.
func Open(paths Paths, logger zerolog.Logger, background func(func(context.Context))) (t *Files, reloads []func() error, err error) {
	t = &Files{sites: paths.Sites, files: map[string]*reload.File[themeoption.Config]{}, where: paths.Where}
	log := logger.With().Str("component", "themeopts").Logger()
	open := func(path string) (*reload.File[themeoption.Config], error) {
		if f, ok := t.files[path]; ok {
			return f, nil
		}
		f, err := openFile(path, log)
		if err != nil {
			return nil, err
		}
		c := f.Current()
		log.Info().Str("path", path).Str("opt_name", c.OptName).Int("fields", len(c.Fields)).
			Bool("dev_mode", c.DevMode).Msg("theme options configuration loaded")
		t.files[path] = f
		background(func(ctx context.Context) { f.Watch(ctx, time.Second) })
		reloads = append(reloads, f.Reload)
		return f, nil
	}
	if paths.All != "" {
		if t.all, err = open(paths.All); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range paths.Sites {
		if _, err := open(s.File); err != nil {
			return nil, nil, fmt.Errorf("themeopts-site-config %s: %w", s.Site, err)
		}
	}
	return t, reloads, nil
}

// OnReload has fn called after every reload of any of the files.
func (t *Files) OnReload(fn func()) {
	if t == nil {
		return
	}
	for _, f := range t.files {
		f.OnReload(fn)
	}
}

// Any tells whether any theme options configuration is open. A nil
// *Files opens none: its methods say so.
func (t *Files) Any() bool { return t != nil && len(t.files) > 0 }

// Of is the configuration of a site: its own (by blog id, domain, or
// domain and path), else the network's.
func (t *Files) Of(s *multisite.Site) *reload.File[themeoption.Config] {
	if t == nil {
		return nil
	}
	if s != nil {
		id := strconv.FormatInt(s.ID, 10)
		for _, o := range t.sites {
			if o.Site == id || o.Site == strings.ToLower(s.Domain) || strings.TrimSuffix(o.Site, "/") == strings.ToLower(s.Domain+strings.TrimSuffix(s.Path, "/")) {
				return t.files[o.File]
			}
		}
	}
	return t.all
}

// Current is the configuration in force of a site (nil: none), as Of
// finds it.
func (t *Files) Current(s *multisite.Site) *themeoption.Config {
	if f := t.Of(s); f != nil {
		return f.Current()
	}
	return nil
}

// Source is the configuration of site s (nil: a single site, or the
// network's) as its handlers answer from it, as Of finds it; nil: none.
func (t *Files) Source(s *multisite.Site) Source {
	if f := t.Of(s); f != nil {
		return f
	}
	return nil
}

// OptName is the option row of site id ("": none), as the Files' where
// finds the site (its place on a network, nil on a single site; false: no
// such site).
func (t *Files) OptName(id int64) string {
	if t == nil || t.where == nil {
		return ""
	}
	s, ok := t.where(id)
	if !ok {
		return ""
	}
	if c := t.Current(s); c != nil {
		return c.OptName
	}
	return ""
}

// openFile reads a theme options configuration file, for one site or
// several (the sites of a network that share it).
func openFile(path string, log zerolog.Logger) (*reload.File[themeoption.Config], error) {
	return reload.Open(path, "theme options configuration", themeoption.ParseConfig, func(c *themeoption.Config, ev *zerolog.Event) *zerolog.Event {
		return ev.Str("opt_name", c.OptName).Int("fields", len(c.Fields)).Bool("dev_mode", c.DevMode)
	}, log)
}

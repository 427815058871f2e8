// Package site holds one site's services — its settings, authenticator,
// field groups, theme options and public routes — and a network of sites:
// a request routed to its site, each site's services built on its first
// request and let go when it leaves the network. Only cmd imports it.
package site

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/cachetag"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/multisite"
	"github.com/wpsidecar/wpsidecar/proxy"
	"github.com/wpsidecar/wpsidecar/proxy/fieldmgr"
	"github.com/wpsidecar/wpsidecar/proxy/history"
	publicroutes "github.com/wpsidecar/wpsidecar/proxy/public"
	"github.com/wpsidecar/wpsidecar/proxy/themeopts"
	"github.com/wpsidecar/wpsidecar/reload"
	"github.com/wpsidecar/wpsidecar/rest"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/themeopt"
)

// site is what the sidecar answers one site with: its settings, its
// authenticator (roles and capabilities are a site's), its field groups
// and theme options, its public routes.
type Site struct {
	id       int64              // the blog id on a network; 0 on a single site
	stop     context.CancelFunc // ends its settings watcher
	db       *store.DB
	settings *store.SettingsWatcher
	authn    *auth.Authenticator
	groups   *store.FieldGroups
	fields   *fieldmgr.Service
	opts     *themeopts.Service // nil without a theme options configuration
	pub      *public            // nil without public routes
	history  *history.Service   // nil when no history is kept
}

// optName is the option the site's theme options live in ("" without).
func (s *Site) OptName() string {
	if s.opts == nil {
		return ""
	}
	return s.opts.Config().OptName
}

// Themeopts is the site's theme options configuration in force (nil
// without one).
func (s *Site) Themeopts() *themeopt.Config {
	if s.opts == nil {
		return nil
	}
	return s.opts.Config()
}

// ID is the site's blog id on a network; 0 on a single site.
func (s *Site) ID() int64 { return s.id }

// Settings are the site's settings, kept fresh.
func (s *Site) Settings() *store.SettingsWatcher { return s.settings }

// Groups are the site's field groups.
func (s *Site) Groups() *store.FieldGroups { return s.groups }

// rest is what the router needs of the site's settings.
func (s *Site) REST() rest.Site {
	return rest.SiteFunc(func() (rest.SiteREST, error) {
		st, err := s.settings.Current()
		return rest.SiteREST{Home: st.Home, PlainPermalinks: st.PlainPermalinks()}, err
	})
}

// Index finds a site's services by blog id, for what the change
// detection and the feed report: the main site (0 on a single site, 1 on
// a network), or on a network another site once a request has had its
// services built.
type Index struct {
	Main    *Site
	Network *Network // nil on a single site
}

func (x Index) Built(id int64) *Site {
	if id <= 1 {
		return x.Main
	}
	if x.Network == nil {
		return nil
	}
	return x.Network.Built(id)
}

// optName is site id's theme options row ("" without).
func (x Index) OptName(id int64) string {
	if id <= 1 || x.Network == nil {
		return x.Main.OptName()
	}
	return x.Network.OptName(id)
}

// Deps are what every site's services share: the configuration, the
// authentication settings (the throttle counts failures network-wide),
// the configuration files, and run's background work.
type Deps struct {
	Config     *config.Config
	Logger     zerolog.Logger
	Auth       auth.Options // Store and Settings are each site's
	Background func(func(context.Context))
	Themeopts  *Themeopts
	Public     *reload.File[publicroutes.Config] // nil without public routes

	mu     sync.Mutex
	authns []*auth.Authenticator // waited for before the database closes
}

// build makes the services of site id (0: a single site) over db, its
// view of the database, and starts its settings watcher. The settings
// are read once before it returns, so that a site's first request does
// not find them unread.
func (d *Deps) Build(ctx context.Context, id int64, db *store.DB, topts *reload.File[themeopt.Config]) (*Site, error) {
	log := d.Logger
	if id > 0 {
		log = log.With().Int64("blog_id", id).Logger()
	}
	s := &Site{id: id, db: db}
	urls := store.SiteURLs{Home: d.Config.HomeURL, SiteURL: d.Config.SiteURL}
	if id > 1 {
		urls = store.SiteURLs{} // WP_HOME and WP_SITEURL are the main site's
	}
	s.settings = store.NewSettingsWatcher(db, d.Config.SettingsRefresh, urls)
	if id > 1 {
		rctx, cancel := context.WithTimeout(ctx, d.Config.DB.Timeout)
		_ = s.settings.Refresh(rctx) // Run tries again, and logs
		cancel()
	}
	watch, stop := context.WithCancel(context.Background())
	s.stop = stop
	d.Background(func(ctx context.Context) {
		defer context.AfterFunc(ctx, stop)()
		s.settings.Run(watch)
	})
	ao := d.Auth
	ao.Store, ao.Settings, ao.Log = db, s.settings, log.With().Str("component", "auth").Logger()
	s.authn = auth.New(ao)
	d.mu.Lock()
	d.authns = append(d.authns, s.authn)
	d.mu.Unlock()
	var err error
	if s.groups, err = db.FieldGroups(siteTable(d.Config, db)); err != nil {
		return nil, err
	}
	s.fields = fieldmgr.New(s.authn, s.groups, s.settings, log.With().Str("component", "fieldmgr").Logger())
	if topts != nil {
		s.opts = themeopts.NewService(s.authn, db, s.settings, topts, log.With().Str("component", "themeopts").Logger())
	}
	if d.Public != nil {
		s.pub = newPublic(d.Public, s.fields, s.opts)
	}
	if h := db.History(); h != nil {
		s.history = history.New(s.authn, h, s.settings, s.opts)
	}
	return s, nil
}

// routes are the site's routes on h. On a network, the cache tags of every
// answer name the site.
func (s *Site) Routes(h *proxy.Handler) (*rest.Routes, error) { return h.NewSite(s.Options()) }

// Options are what the router answers the site with.
func (s *Site) Options() rest.SiteOptions {
	namespaces := []rest.Namespace{s.fields}
	if s.opts != nil {
		namespaces = append(namespaces, s.opts)
	}
	if s.history != nil {
		namespaces = append(namespaces, s.history)
	}
	return rest.SiteOptions{Site: s.REST(), Namespaces: namespaces, Public: s.pub.handler(), TagPrefix: cachetag.SitePrefix(s.id)}
}

// siteTable is the field-group table as db's site names it: the
// configured name with the site's prefix in place of the base prefix
// (config requires the base prefix on a network).
func siteTable(cfg *config.Config, db *store.DB) string {
	return db.Table(strings.TrimPrefix(cfg.FieldmgrTable, cfg.TablePrefix))
}

// wait waits for every site's background records of application password
// uses.
func (d *Deps) Wait() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, a := range d.authns {
		a.Wait()
	}
}

// Themeopts are the theme options configuration files: the network's
// (or the single site's) and those of sites with their own, each opened,
// watched and reloaded once however many sites share it.
type Themeopts struct {
	all   *reload.File[themeopt.Config] // nil: none
	sites []config.ThemeoptsSite
	files map[string]*reload.File[themeopt.Config] // by path
}

// OpenThemeopts opens every configuration file, watched in the background
// and reloaded on SIGHUP (reloads).
func OpenThemeopts(cfg *config.Config, logger zerolog.Logger, background func(func(context.Context)), reloads *[]func() error) (*Themeopts, error) {
	t := &Themeopts{sites: cfg.ThemeoptsSites, files: map[string]*reload.File[themeopt.Config]{}}
	log := logger.With().Str("component", "themeopts").Logger()
	open := func(path string) (*reload.File[themeopt.Config], error) {
		if f, ok := t.files[path]; ok {
			return f, nil
		}
		f, err := openThemeoptsFile(path, log)
		if err != nil {
			return nil, err
		}
		c := f.Current()
		log.Info().Str("path", path).Str("opt_name", c.OptName).Int("fields", len(c.Fields)).
			Bool("dev_mode", c.DevMode).Msg("theme options configuration loaded")
		t.files[path] = f
		background(func(ctx context.Context) { f.Watch(ctx, time.Second) })
		*reloads = append(*reloads, f.Reload)
		return f, nil
	}
	var err error
	if cfg.ThemeoptsConfig != "" {
		if t.all, err = open(cfg.ThemeoptsConfig); err != nil {
			return nil, err
		}
	}
	for _, s := range cfg.ThemeoptsSites {
		if _, err := open(s.File); err != nil {
			return nil, fmt.Errorf("themeopts-site-config %s: %w", s.Site, err)
		}
	}
	return t, nil
}

// Any tells whether any theme options configuration is open.
func (t *Themeopts) Any() bool { return len(t.files) > 0 }

// Of is the configuration of a site: its own (by blog id, domain, or
// domain and path), else the network's.
func (t *Themeopts) Of(s *multisite.Site) *reload.File[themeopt.Config] {
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

// openThemeoptsFile reads a theme options configuration file, for one site or
// several (the sites of a network that share it).
func openThemeoptsFile(path string, log zerolog.Logger) (*reload.File[themeopt.Config], error) {
	return reload.Open(path, "theme options configuration", themeopt.ParseConfig, func(c *themeopt.Config, ev *zerolog.Event) *zerolog.Event {
		return ev.Str("opt_name", c.OptName).Int("fields", len(c.Fields)).Bool("dev_mode", c.DevMode)
	}, log)
}

// PurgeOf is what a change makes stale: the namespace's tag (answers whose
// tags overflowed carry only it), each changed key's or id's tag (and for
// field groups every list's), all named as the change's site names them,
// and the URLs of the public routes that show what changed, under the
// site's home URL (s, the site's services: nil when not built, which
// leaves the URLs out: no answer of it went through this instance).
func PurgeOf(c changes.Change, s *Site) changes.Purge {
	x := changes.Purge{Tags: cachetag.Stale(c.Site, c.Namespace, c.Keys)}
	if s == nil || s.pub == nil {
		return x
	}
	st, err := s.settings.Current()
	if err != nil {
		return x
	}
	for _, r := range s.pub.file.Current().Routes {
		shows := r.Fieldmgr != nil && c.Namespace == "fieldmgr" ||
			c.Namespace == "themeopts" && slices.ContainsFunc(r.Themeopts, func(id string) bool { return slices.Contains(c.Keys, id) })
		if !shows {
			continue
		}
		if u, err := url.Parse(strings.TrimSuffix(st.Home, "/") + r.Path); err == nil {
			x.URLs = append(x.URLs, u)
		}
	}
	return x
}

// public is the site owner's public routes, when --public-routes is set.
type public struct {
	file *reload.File[publicroutes.Config]
	h    *publicroutes.Handler
}

func (p *public) handler() rest.Public {
	if p == nil {
		return nil
	}
	return p.h
}

// OpenPublic opens the public routes file, when --public-routes is set,
// and says, route by route, what it exposes.
func OpenPublic(cfg *config.Config, themeopts bool, logger zerolog.Logger) (*reload.File[publicroutes.Config], error) {
	if cfg.PublicRoutes == "" {
		return nil, nil
	}
	log := logger.With().Str("component", "public").Logger()
	file, err := reload.Open(cfg.PublicRoutes, "public routes", publicroutes.ParseConfig, func(c *publicroutes.Config, ev *zerolog.Event) *zerolog.Event {
		return ev.Int("routes", len(c.Routes)).Strs("cors_origins", c.CORSOrigins)
	}, log)
	if err != nil {
		return nil, err
	}
	c := file.Current()
	if c.UsesThemeopts() && !themeopts {
		return nil, fmt.Errorf("public routes %s: a route shows theme options, but --themeopts-config is not set", cfg.PublicRoutes)
	}
	for _, r := range c.Routes {
		ev := log.Warn().Str("path", r.Path)
		if r.Fieldmgr != nil {
			ev = ev.Interface("field_groups", r.Fieldmgr)
		} else {
			ev = ev.Strs("theme_options", r.Themeopts)
		}
		ev.Msg("public route: exposed to anyone, without credentials")
	}
	return file, nil
}

// newPublic is a site's public routes: file's routes answered from the
// site's field groups and theme options.
func newPublic(file *reload.File[publicroutes.Config], fields *fieldmgr.Service, opts *themeopts.Service) *public {
	var options publicroutes.Options
	if opts != nil {
		options = opts.Public
	}
	groups := func(ctx context.Context, s publicroutes.Selector) ([]byte, string, []string, error) {
		return fields.Public(ctx, fieldmgr.Selection{Keys: s.Keys, Status: s.Status, Type: s.Type, PostType: s.PostType, Taxonomy: s.Taxonomy})
	}
	return &public{file: file, h: publicroutes.New(file, options, groups)}
}

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/cachetag"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/proxy"
	"github.com/wpsidecar/wpsidecar/proxy/fieldmgr"
	publicroutes "github.com/wpsidecar/wpsidecar/proxy/public"
	"github.com/wpsidecar/wpsidecar/proxy/themeopts"
	"github.com/wpsidecar/wpsidecar/reload"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/store/multisite"
)

// site is what the sidecar answers one site with: its settings, its
// authenticator (roles and capabilities are a site's), its field groups
// and theme options, its public routes.
type site struct {
	id       int64              // the blog id on a network; 0 on a single site
	stop     context.CancelFunc // ends its settings watcher
	db       *store.DB
	settings *store.SettingsWatcher
	authn    *auth.Authenticator
	groups   *store.FieldGroups
	fields   *fieldmgr.Service
	opts     *themeopts.Service // nil without a theme options configuration
	pub      *public            // nil without public routes
}

// optName is the option the site's theme options live in ("" without).
func (s *site) optName() string {
	if s.opts == nil {
		return ""
	}
	return s.opts.Config().OptName
}

// rest is what the router needs of the site's settings.
func (s *site) rest() proxy.Site {
	return proxy.SiteFunc(func() (proxy.SiteREST, error) {
		st, err := s.settings.Current()
		return proxy.SiteREST{Home: st.Home, PlainPermalinks: st.PlainPermalinks()}, err
	})
}

// siteIndex finds a site's services by blog id, for what the change
// detection and the feed report: the main site (0 on a single site, 1 on
// a network), or on a network another site once a request has had its
// services built.
type siteIndex struct {
	main    *site
	network *network // nil on a single site
}

func (x siteIndex) built(id int64) *site {
	if id <= 1 {
		return x.main
	}
	if x.network == nil {
		return nil
	}
	return x.network.built(id)
}

// optName is site id's theme options row ("" without).
func (x siteIndex) optName(id int64) string {
	if id <= 1 || x.network == nil {
		return x.main.optName()
	}
	return x.network.optName(id)
}

// siteDeps are what every site's services share: the configuration, the
// authentication settings (the throttle counts failures network-wide),
// the configuration files, and run's background work.
type siteDeps struct {
	cfg        *config.Config
	logger     zerolog.Logger
	auth       auth.Options // Store and Settings are each site's
	background func(func(context.Context))
	themeopts  *themeoptsFiles
	public     *reload.File[publicroutes.Config] // nil without public routes

	mu     sync.Mutex
	authns []*auth.Authenticator // waited for before the database closes
}

// build makes the services of site id (0: a single site) over db, its
// view of the database, and starts its settings watcher. The settings
// are read once before it returns, so that a site's first request does
// not find them unread.
func (d *siteDeps) build(ctx context.Context, id int64, db *store.DB, topts *reload.File[themeopts.Config]) (*site, error) {
	log := d.logger
	if id > 0 {
		log = log.With().Int64("blog_id", id).Logger()
	}
	s := &site{id: id, db: db}
	urls := store.SiteURLs{Home: d.cfg.HomeURL, SiteURL: d.cfg.SiteURL}
	if id > 1 {
		urls = store.SiteURLs{} // WP_HOME and WP_SITEURL are the main site's
	}
	s.settings = store.NewSettingsWatcher(db, d.cfg.SettingsRefresh, urls)
	if id > 1 {
		rctx, cancel := context.WithTimeout(ctx, d.cfg.DB.Timeout)
		_ = s.settings.Refresh(rctx) // Run tries again, and logs
		cancel()
	}
	watch, stop := context.WithCancel(context.Background())
	s.stop = stop
	d.background(func(ctx context.Context) {
		defer context.AfterFunc(ctx, stop)()
		s.settings.Run(watch)
	})
	ao := d.auth
	ao.Store, ao.Settings, ao.Log = db, s.settings, log.With().Str("component", "auth").Logger()
	s.authn = auth.New(ao)
	d.mu.Lock()
	d.authns = append(d.authns, s.authn)
	d.mu.Unlock()
	var err error
	if s.groups, err = db.FieldGroups(siteTable(d.cfg, db)); err != nil {
		return nil, err
	}
	s.fields = fieldmgr.New(s.authn, s.groups, s.settings, log.With().Str("component", "fieldmgr").Logger())
	if topts != nil {
		s.opts = themeopts.NewService(s.authn, db, s.settings, topts, log.With().Str("component", "themeopts").Logger())
	}
	if d.public != nil {
		s.pub = newPublic(d.public, s.fields, s.opts)
	}
	return s, nil
}

// routes are the site's routes on h. On a network, the cache tags of every
// answer name the site.
func (s *site) routes(h *proxy.Handler) (*proxy.SiteRoutes, error) {
	namespaces := []proxy.Namespace{s.fields}
	if s.opts != nil {
		namespaces = append(namespaces, s.opts)
	}
	return h.NewSite(proxy.SiteOptions{Site: s.rest(), Namespaces: namespaces, Public: s.pub.handler(), TagPrefix: cachetag.SitePrefix(s.id)})
}

// siteTable is the field-group table as db's site names it: the
// configured name with the site's prefix in place of the base prefix
// (config requires the base prefix on a network).
func siteTable(cfg *config.Config, db *store.DB) string {
	return db.Table(strings.TrimPrefix(cfg.FieldmgrTable, cfg.TablePrefix))
}

// wait waits for every site's background records of application password
// uses.
func (d *siteDeps) wait() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, a := range d.authns {
		a.Wait()
	}
}

// themeoptsFiles are the theme options configuration files: the network's
// (or the single site's) and those of sites with their own, each opened,
// watched and reloaded once however many sites share it.
type themeoptsFiles struct {
	all   *reload.File[themeopts.Config] // nil: none
	sites []config.ThemeoptsSite
	files map[string]*reload.File[themeopts.Config] // by path
}

// openThemeopts opens every configuration file, watched in the background
// and reloaded on SIGHUP (reloads).
func openThemeopts(cfg *config.Config, logger zerolog.Logger, background func(func(context.Context)), reloads *[]func() error) (*themeoptsFiles, error) {
	t := &themeoptsFiles{sites: cfg.ThemeoptsSites, files: map[string]*reload.File[themeopts.Config]{}}
	log := logger.With().Str("component", "themeopts").Logger()
	open := func(path string) (*reload.File[themeopts.Config], error) {
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

// of is the configuration of a site: its own (by blog id, domain, or
// domain and path), else the network's.
func (t *themeoptsFiles) of(s *multisite.Site) *reload.File[themeopts.Config] {
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
func openThemeoptsFile(path string, log zerolog.Logger) (*reload.File[themeopts.Config], error) {
	return reload.Open(path, "theme options configuration", themeopts.ParseConfig, func(c *themeopts.Config, ev *zerolog.Event) *zerolog.Event {
		return ev.Str("opt_name", c.OptName).Int("fields", len(c.Fields)).Bool("dev_mode", c.DevMode)
	}, log)
}

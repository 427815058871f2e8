// Package site holds one site's services — its settings, authenticator,
// field groups, theme options and public routes — and a network of sites:
// a request routed to its site, each site's services built on its first
// request and let go when it leaves the network. Only cmd imports it, and hands it
// Options, never the whole configuration.
package site

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/domain/cachetag"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/domain/themeopt"
	"github.com/wpsidecar/wpsidecar/internal/reload"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/fieldmgr"
	"github.com/wpsidecar/wpsidecar/web/historyapi"
	"github.com/wpsidecar/wpsidecar/web/proxy"
	publicapi "github.com/wpsidecar/wpsidecar/web/public"
	"github.com/wpsidecar/wpsidecar/web/rest"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
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
	history  *historyapi.Service
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

// Options are what of the sidecar's settings a site's services are built
// with (cmd makes them from the configuration).
type Options struct {
	// HomeURL and SiteURL are WP_HOME and WP_SITEURL, when defined: the
	// main site's.
	HomeURL, SiteURL string
	// SettingsRefresh is how often a site's settings are read again.
	SettingsRefresh time.Duration
	// DBTimeout bounds the first read of a site's settings.
	DBTimeout time.Duration
	// GroupsTable is the field-group table's name after the table prefix:
	// each site's view of the database prefixes it as it prefixes its
	// other tables.
	GroupsTable string
}

// Deps are what every site's services share: the settings, the
// authentication settings (the throttle counts failures network-wide),
// the configuration files, and run's background work.
type Deps struct {
	Options    Options
	Logger     zerolog.Logger
	Auth       auth.Options // Store and Settings are each site's
	Background func(func(context.Context))
	Themeopts  *Themeopts
	Public     *reload.File[publicroute.Config] // nil without public routes
	// Units are the namespaces served, as the history sees them, under a
	// site's theme options configuration in force (nil without one); nil:
	// the history shows no entry.
	Units func(themeopts func() *themeopt.Config) wpsidecar.Units

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
	urls := store.SiteURLs{Home: d.Options.HomeURL, SiteURL: d.Options.SiteURL}
	if id > 1 {
		urls = store.SiteURLs{} // WP_HOME and WP_SITEURL are the main site's
	}
	s.settings = store.NewSettingsWatcher(db, d.Options.SettingsRefresh, urls)
	if id > 1 {
		rctx, cancel := context.WithTimeout(ctx, d.Options.DBTimeout)
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
	if s.groups, err = db.FieldGroups(db.Table(d.Options.GroupsTable)); err != nil {
		return nil, err
	}
	s.fields = fieldmgr.New(s.authn, s.groups, s.settings, log.With().Str("component", "fieldmgr").Logger())
	if topts != nil {
		s.opts = themeopts.NewService(s.authn, db, s.settings, topts, log.With().Str("component", "themeopts").Logger())
	}
	if d.Public != nil {
		s.pub = newPublic(d.Public, s.fields, s.opts)
	}
	var units wpsidecar.Units
	if d.Units != nil {
		units = d.Units(s.Themeopts)
	}
	// Without a kept history (nil) the routes still answer: that it is off.
	s.history = historyapi.New(s.authn, db.History(), s.settings, units)
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
	namespaces = append(namespaces, s.history)
	return rest.SiteOptions{Site: s.REST(), Namespaces: namespaces, Public: s.pub.handler(), TagPrefix: cachetag.SitePrefix(s.id)}
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
	sites []ThemeoptsSite
	files map[string]*reload.File[themeopt.Config] // by path
}

// ThemeoptsFiles are the theme options configuration files: the
// network's (or the single site's), and sites' own.
type ThemeoptsFiles struct {
	All   string // "" without
	Sites []ThemeoptsSite
}

// ThemeoptsSite is a site's own file: Site is its blog id, its domain, or
// its domain and path.
type ThemeoptsSite struct{ Site, File string }

// OpenThemeopts opens every configuration file, watched in the background;
// reloads are theirs to run on SIGHUP, one a file.
func OpenThemeopts(files ThemeoptsFiles, logger zerolog.Logger, background func(func(context.Context))) (t *Themeopts, reloads []func() error, err error) {
	t = &Themeopts{sites: files.Sites, files: map[string]*reload.File[themeopt.Config]{}}
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
		reloads = append(reloads, f.Reload)
		return f, nil
	}
	if files.All != "" {
		if t.all, err = open(files.All); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range files.Sites {
		if _, err := open(s.File); err != nil {
			return nil, nil, fmt.Errorf("themeopts-site-config %s: %w", s.Site, err)
		}
	}
	return t, reloads, nil
}

// OnReload has fn called after every reload of a configuration file the
// sites answer from (theme options, public routes).
func (d *Deps) OnReload(fn func()) {
	d.Themeopts.OnReload(fn)
	if d.Public != nil {
		d.Public.OnReload(fn)
	}
}

// OnReload has fn called after every reload of any of the files.
func (t *Themeopts) OnReload(fn func()) {
	for _, f := range t.files {
		f.OnReload(fn)
	}
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

// Current is the configuration in force of a site (nil: none), as Of
// finds it.
func (t *Themeopts) Current(s *multisite.Site) *themeopt.Config {
	if f := t.Of(s); f != nil {
		return f.Current()
	}
	return nil
}

// openThemeoptsFile reads a theme options configuration file, for one site or
// several (the sites of a network that share it).
func openThemeoptsFile(path string, log zerolog.Logger) (*reload.File[themeopt.Config], error) {
	return reload.Open(path, "theme options configuration", themeopt.ParseConfig, func(c *themeopt.Config, ev *zerolog.Event) *zerolog.Event {
		return ev.Str("opt_name", c.OptName).Int("fields", len(c.Fields)).Bool("dev_mode", c.DevMode)
	}, log)
}

// PublicURLs are the URLs of the site's public routes that show what c
// changed, under the site's home URL: what a CDN must purge besides the
// tags. None when the site has no public routes or its settings are not
// read.
func (s *Site) PublicURLs(c wpsidecar.Commit) []*url.URL {
	if s == nil || s.pub == nil {
		return nil
	}
	st, err := s.settings.Current()
	if err != nil {
		return nil
	}
	var out []*url.URL
	for _, r := range s.pub.file.Current().Routes {
		if !r.Shows(c) {
			continue
		}
		if u, err := url.Parse(strings.TrimSuffix(st.Home, "/") + r.Path); err == nil {
			out = append(out, u)
		}
	}
	return out
}

// PublicURLs are those of the site c names (see Site.PublicURLs): none
// for a site whose services are not built, which no answer of this
// instance showed.
func (x Index) PublicURLs(c wpsidecar.Commit) []*url.URL { return x.Built(c.Site).PublicURLs(c) }

// public is the site owner's public routes, when --public-routes is set.
type public struct {
	file *reload.File[publicroute.Config]
	h    *publicapi.Handler
}

func (p *public) handler() rest.Public {
	if p == nil {
		return nil
	}
	return p.h
}

// OpenPublic opens the public routes file (path, --public-routes; ""
// none), and says, route by route, what it exposes.
func OpenPublic(path string, themeopts bool, logger zerolog.Logger) (*reload.File[publicroute.Config], error) {
	if path == "" {
		return nil, nil
	}
	log := logger.With().Str("component", "public").Logger()
	file, err := reload.Open(path, "public routes", publicroute.ParseConfig, func(c *publicroute.Config, ev *zerolog.Event) *zerolog.Event {
		return ev.Int("routes", len(c.Routes)).Strs("cors_origins", c.CORSOrigins)
	}, log)
	if err != nil {
		return nil, err
	}
	c := file.Current()
	if c.UsesThemeopts() && !themeopts {
		return nil, fmt.Errorf("public routes %s: a route shows theme options, but --themeopts-config is not set", path)
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
func newPublic(file *reload.File[publicroute.Config], fields *fieldmgr.Service, opts *themeopts.Service) *public {
	var options publicapi.Options
	if opts != nil {
		options = opts.Public
	}
	groups := func(ctx context.Context, s publicroute.Selector) ([]byte, string, []string, error) {
		return fields.Public(ctx, fieldmgr.Selection{Keys: s.Keys, Status: s.Status, Type: s.Type, PostType: s.PostType, Taxonomy: s.Taxonomy})
	}
	return &public{file: file, h: publicapi.New(file, options, groups)}
}

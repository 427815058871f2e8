// Package site holds one site's services — its settings, authenticator,
// its handlers of each namespace served (built by ranging over the
// modules cmd hands it: it names none) and public routes — and a
// network of sites:
// a request routed to its site, each site's services built on its first
// request and let go when it leaves the network. Only cmd imports it, and hands it
// Options, never the whole configuration.
package site

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/domain/cachetag"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/internal/reload"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/historyapi"
	"github.com/wpsidecar/wpsidecar/web/module"
	"github.com/wpsidecar/wpsidecar/web/proxy"
	publicapi "github.com/wpsidecar/wpsidecar/web/public"
	"github.com/wpsidecar/wpsidecar/web/rest"
)

// site is what the sidecar answers one site with: its settings, its
// authenticator (roles and capabilities are a site's), each namespace
// as it serves it, its public routes.
type Site struct {
	id       int64              // the blog id on a network; 0 on a single site
	place    *multisite.Site    // its place on a network; nil on a single site
	stop     context.CancelFunc // ends its settings watcher
	db       *store.DB
	settings *store.SettingsWatcher
	authn    *auth.Authenticator
	served   []module.Served // the modules', in their order
	pub      *public         // nil without public routes
	history  *historyapi.Service
}

// Place is the site's place on a network as its services were built
// for it (what finds its configurations); nil on a single site.
func (s *Site) Place() *multisite.Site { return s.place }

// ID is the site's blog id on a network; 0 on a single site.
func (s *Site) ID() int64 { return s.id }

// Settings are the site's settings, kept fresh.
func (s *Site) Settings() *store.SettingsWatcher { return s.settings }

// rest is what the router needs of the site's settings.
func (s *Site) REST() rest.Settings {
	return rest.SettingsFunc(func() (rest.Routing, error) {
		st, err := s.settings.Current()
		return rest.Routing{Home: st.Home, PlainPermalinks: st.PlainPermalinks()}, err
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

// Place is site id's place on a network (nil on a single site), as
// what finds a site's configurations sees it: its services', or, before
// they are built, the network map's; false when there is no such site.
func (x Index) Place(id int64) (*multisite.Site, bool) {
	if id <= 1 || x.Network == nil {
		return x.Main.Place(), true
	}
	return x.Network.Place(id)
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
}

// Deps are what every site's services share: the settings, the
// authentication settings (the throttle counts failures network-wide),
// the configuration files, and run's background work.
type Deps struct {
	Options    Options
	Logger     zerolog.Logger
	Auth       auth.Options // Store and Settings are each site's
	Background func(func(context.Context))
	Public     *reload.File[publicroute.Config] // nil without public routes
	// Modules are the namespaces served: each builds its handlers for a
	// site (Site), and the site's history's units are what they serve
	// (Served.Unit, else the module's). nil: none (the history shows no
	// entry).
	Modules []module.Module
	// Reloaded has a function called after every reload of the
	// configuration files the modules' handlers answer from; nil: none.
	Reloaded func(func())

	mu     sync.Mutex
	authns []*auth.Authenticator // waited for before the database closes
}

// build makes the services of site id (0: a single site) over db, its
// view of the database, and starts its settings watcher. The settings
// are read once before it returns, so that a site's first request does
// not find them unread.
func (d *Deps) Build(ctx context.Context, id int64, db *store.DB, place *multisite.Site) (*Site, error) {
	log := d.Logger
	if id > 0 {
		log = log.With().Int64("blog_id", id).Logger()
	}
	s := &Site{id: id, place: place, db: db}
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
	answers := map[wpsidecar.Namespace]publicapi.Answer{} // the public routes'
	var units wpsidecar.Units
	if d.Modules != nil {
		units = wpsidecar.Units{}
	}
	for _, m := range d.Modules {
		unit := m.Unit
		if m.Site != nil {
			sv, err := m.Site(module.SiteDeps{Site: place, DB: db, Authn: s.authn, Settings: s.settings, Log: log})
			if err != nil {
				return nil, err
			}
			s.served = append(s.served, sv)
			if sv.Public != nil {
				answers[m.Unit.Namespace()] = sv.Public
			}
			if sv.Unit != nil {
				unit = sv.Unit
			}
		}
		units = append(units, unit)
	}
	if d.Public != nil {
		s.pub = &public{file: d.Public, h: publicapi.New(d.Public, answers)}
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
	var namespaces []rest.Handlers
	for _, sv := range s.served {
		if sv.Handlers != nil {
			namespaces = append(namespaces, sv.Handlers)
		}
	}
	namespaces = append(namespaces, s.history)
	return rest.SiteOptions{Settings: s.REST(), Handlers: namespaces, Public: s.pub.handler(), TagPrefix: cachetag.SitePrefix(s.id), FeedSite: s.id}
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

// OnReload has fn called after every reload of a configuration file the
// sites answer from (the modules' (Reloaded), public routes).
func (d *Deps) OnReload(fn func()) {
	if d.Reloaded != nil {
		d.Reloaded(fn)
	}
	if d.Public != nil {
		d.Public.OnReload(fn)
	}
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
func (x Index) PublicURLs(c wpsidecar.Commit) []*url.URL { return x.Built(c.BlogID).PublicURLs(c) }

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
// none), whose routes may show the namespaces of kinds, and says, route
// by route, what it exposes. off names the namespaces this server serves
// on no site, each with why: a route showing one is refused.
func OpenPublic(path string, kinds []publicroute.Source, off map[wpsidecar.Namespace]string, logger zerolog.Logger) (*reload.File[publicroute.Config], error) {
	if path == "" {
		return nil, nil
	}
	log := logger.With().Str("component", "public").Logger()
	file, err := reload.Open(path, "public routes", publicroute.Parser(kinds...), func(c *publicroute.Config, ev *zerolog.Event) *zerolog.Event {
		return ev.Int("routes", len(c.Routes)).Strs("cors_origins", c.CORSOrigins)
	}, log)
	if err != nil {
		return nil, err
	}
	c := file.Current()
	for _, k := range kinds {
		if why, ok := off[k.Namespace]; ok && c.Uses(k.Namespace) {
			return nil, fmt.Errorf("public routes %s: a route shows %s, but %s", path, k.Key, why)
		}
	}
	for _, r := range c.Routes {
		log.Warn().Str("path", r.Path).Str("shows", string(r.Namespace)).Interface("selection", r.Selection).
			Msg("public route: exposed to anyone, without credentials")
	}
	return file, nil
}

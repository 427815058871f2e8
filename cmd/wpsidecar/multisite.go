package main

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/proxy"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/store/multisite"
)

// network serves every site of a multisite network: each request's site is
// found as WordPress finds it (multisite.Map.Resolve on the watcher's map),
// and each site's services are built the first time one of its requests
// comes, then kept. Only sites of the map are ever built, so clients
// cannot make the sidecar hold more than the network has.
type network struct {
	watcher *store.NetworkWatcher
	deps    *siteDeps
	db      *store.DB
	h       *proxy.Handler
	log     zerolog.Logger

	mu    sync.Mutex
	sites map[int64]*networkSite
}

// networkSite is a site's services, built once.
type networkSite struct {
	once   sync.Once
	site   *site
	routes *proxy.SiteRoutes
}

// newNetwork serves main (site 1, built already) and the other sites of
// the watcher's map through h.
func newNetwork(watcher *store.NetworkWatcher, deps *siteDeps, db *store.DB, h *proxy.Handler, main *site, mainRoutes *proxy.SiteRoutes, log zerolog.Logger) *network {
	n := &network{watcher: watcher, deps: deps, db: db, h: h, log: log, sites: map[int64]*networkSite{}}
	ms := &networkSite{site: main, routes: mainRoutes}
	ms.once.Do(func() {})
	n.sites[main.id] = ms
	return n
}

// route is proxy.Options.Sites: the routes of r's site and the site's path
// (without its trailing slash) that its REST routes follow. A request that
// finds no site, or a site WordPress blocks (archived, spam, deleted: PHP
// answers those, and lets super admins in), goes to PHP, which answers it
// as WordPress does; so does everything before the map is first read.
func (n *network) route(r *http.Request) (*proxy.SiteRoutes, string) {
	m, err := n.watcher.Current()
	if err != nil {
		return nil, ""
	}
	// As ms-settings.php reads HTTP_HOST and REQUEST_URI.
	host := strings.ToLower(r.Host)
	if h, ok := strings.CutSuffix(host, ":80"); ok {
		host = h
	} else if h, ok := strings.CutSuffix(host, ":443"); ok {
		host = h
	}
	res := m.Resolve(host, r.URL.EscapedPath(), r.TLS != nil)
	if res.Site == nil || res.Site.Blocked() != "" {
		return nil, ""
	}
	s := n.site(r.Context(), res.Site)
	if s == nil {
		return nil, ""
	}
	return s.routes, strings.TrimSuffix(res.Site.Path, "/")
}

// site is the services of ms, built on first use; nil when they cannot be
// built (logged; PHP answers meanwhile).
func (n *network) site(ctx context.Context, ms *multisite.Site) *networkSite {
	n.mu.Lock()
	e := n.sites[ms.ID]
	if e == nil {
		e = &networkSite{}
		n.sites[ms.ID] = e
	}
	n.mu.Unlock()
	e.once.Do(func() {
		s, err := n.deps.build(context.WithoutCancel(ctx), ms.ID, n.db.ForSite(ms.ID), n.deps.themeopts.of(ms))
		if err == nil {
			e.routes, err = s.routes(n.h)
		}
		if err != nil {
			n.log.Error().Err(err).Int64("blog_id", ms.ID).Msg("cannot serve this site of the network; PHP answers it")
			return
		}
		e.site = s
		n.log.Info().Int64("blog_id", ms.ID).Str("domain", ms.Domain).Str("path", ms.Path).Str("fieldmgr_table", s.groups.Table()).
			Bool("themeopts", s.opts != nil).Msg("serving a site of the network")
	})
	if e.site == nil {
		return nil
	}
	return e
}

// networkConstants are the network's wp-config.php constants.
func networkConstants(cfg *config.Config) multisite.Constants {
	n := cfg.Network
	return multisite.Constants{Defined: n.Domain != "" && n.Path != "", Domain: n.Domain, Path: n.Path, NetworkID: int64(n.ID), Subdomain: n.Subdomain}
}

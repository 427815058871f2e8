package site

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/web/proxy"
	"github.com/wpsidecar/wpsidecar/web/rest"
)

// network serves every site of a multisite network: each request's site is
// found as WordPress finds it (multisite.Map.Resolve on the watcher's map),
// and each site's services are built the first time one of its requests
// comes, then kept. Only sites of the map are ever built, so clients
// cannot make the sidecar hold more than the network has.
type Network struct {
	watcher *store.NetworkWatcher
	deps    *Deps
	db      *store.DB
	h       *proxy.Handler
	log     zerolog.Logger

	mu    sync.RWMutex // read on every request; written when a site is first served or leaves
	sites map[int64]*networkSite
}

// networkSite is a site's services, built once.
type networkSite struct {
	once   sync.Once
	site   atomic.Pointer[Site] // set once built
	routes *rest.Routes
}

// NewNetwork serves main (site 1, built already) and the other sites of
// the watcher's map; serve gives it the handler and the main site's routes.
func NewNetwork(watcher *store.NetworkWatcher, deps *Deps, db *store.DB, main *Site, log zerolog.Logger) *Network {
	n := &Network{watcher: watcher, deps: deps, db: db, log: log, sites: map[int64]*networkSite{}}
	ms := &networkSite{}
	ms.site.Store(main)
	n.sites[main.id] = ms
	return n
}

// serve has the network's sites answered through h, site 1 by mainRoutes.
// It is called once, before the first request.
func (n *Network) Serve(h *proxy.Handler, mainRoutes *rest.Routes) {
	n.h = h
	e := n.sites[1]
	e.once.Do(func() { e.routes = mainRoutes })
}

// route is proxy.Options.Sites: the routes of r's site and the site's path
// (without its trailing slash) that its REST routes follow. A request that
// finds no site, or a site WordPress blocks (archived, spam, deleted: PHP
// answers those, and lets super admins in), goes to PHP, which answers it
// as WordPress does; so does everything before the map is first read.
func (n *Network) Route(r *http.Request) (*rest.Routes, string) {
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
func (n *Network) site(ctx context.Context, ms *multisite.Site) *networkSite {
	n.mu.RLock()
	e := n.sites[ms.ID]
	n.mu.RUnlock()
	if e == nil {
		n.mu.Lock()
		if e = n.sites[ms.ID]; e == nil {
			e = &networkSite{}
			n.sites[ms.ID] = e
		}
		n.mu.Unlock()
	}
	e.once.Do(func() {
		s, err := n.deps.Build(context.WithoutCancel(ctx), ms.ID, n.db.ForSite(ms.ID), ms)
		if err == nil {
			e.routes, err = s.Routes(n.h)
		}
		if err != nil {
			n.log.Error().Err(err).Int64("blog_id", ms.ID).Msg("cannot serve this site of the network; PHP answers it")
			return
		}
		e.site.Store(s)
		ev := n.log.Info().Int64("blog_id", ms.ID).Str("domain", ms.Domain).Str("path", ms.Path)
		for _, sv := range s.served {
			if sv.Log != nil {
				ev = sv.Log(ev)
			}
		}
		ev.Msg("serving a site of the network")
	})
	if e.site.Load() == nil {
		return nil
	}
	return e
}

// built is site id's services when a request has had them built, else nil.
func (n *Network) Built(id int64) *Site {
	n.mu.RLock()
	e := n.sites[id]
	n.mu.RUnlock()
	if e == nil {
		return nil
	}
	return e.site.Load()
}

// prune lets go of the services of sites that have left the network's map
// (deleted from wp_blogs), checked every interval until ctx ends: their
// settings watchers would otherwise read a dropped table for ever.
func (n *Network) Prune(ctx context.Context, every time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		m, err := n.watcher.Current()
		if err != nil {
			continue
		}
		in := map[int64]bool{}
		for _, s := range m.Sites {
			in[s.ID] = true
		}
		n.mu.Lock()
		for id, e := range n.sites {
			if s := e.site.Load(); s != nil && id != 1 && !in[id] {
				s.stop()
				delete(n.sites, id)
				n.log.Info().Int64("blog_id", id).Msg("a site left the network; its services are let go")
			}
		}
		n.mu.Unlock()
	}
}

// Place is site id's place on the network: its services', or, before
// they are built, the map's; false when the map has no such site.
func (n *Network) Place(id int64) (*multisite.Site, bool) {
	if s := n.Built(id); s != nil {
		return s.Place(), true
	}
	m, err := n.watcher.Current()
	if err != nil {
		return nil, false
	}
	for i := range m.Sites {
		if m.Sites[i].ID == id {
			return &m.Sites[i], true
		}
	}
	return nil, false
}

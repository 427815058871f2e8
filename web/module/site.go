package module

import (
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/store"
	publicapi "github.com/wpsidecar/wpsidecar/web/public"
	"github.com/wpsidecar/wpsidecar/web/rest"
)

// SiteDeps are what a site hands each module to build its handlers
// with: the site's own services, so that a namespace's handlers answer
// with the site's roles, settings and tables.
type SiteDeps struct {
	// Site is the site's place on a network; nil on a single site.
	Site     *multisite.Site
	DB       *store.DB // the site's view of the database
	Authn    *auth.Authenticator
	Settings *store.SettingsWatcher
	Log      zerolog.Logger // the site's
}

// Served is a namespace as one site serves it. Its zero value is a
// namespace the site does not serve (no configuration for it).
type Served struct {
	// Handlers are its routes on the site; nil: not served.
	Handlers rest.Handlers
	// Public answers the public routes that show it (its Module's
	// PublicSource's selections); nil: none.
	Public publicapi.Answer
	// Unit is the namespace as this site's history sees it (its
	// capability may be the site's configuration's); nil: its Module's.
	Unit wpsidecar.Unit
	// Log adds to the line logged when a site of a network is first
	// served what it serves of the namespace; nil: nothing.
	Log func(*zerolog.Event) *zerolog.Event
}

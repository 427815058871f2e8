// Package publicroute is the public routes file a site owner configures
// (--public-routes): its model and its rules, with no HTTP. Each route
// shows chosen theme options or field groups, the same for everyone,
// without credentials, cacheable by a CDN and a browser; web/public
// serves them, and the command line and the OpenAPI description read the
// same file through this package without reaching the handler.
package publicroute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/wpsidecar/wpsidecar"
)

// Config is the public routes file.
type Config struct {
	Routes []Route `json:"routes"`
	// CORSOrigins may read the routes from a browser (exact origins such
	// as "https://www.example.com"); none: no CORS headers.
	CORSOrigins []string `json:"cors_origins"`
}

// Route is one public route: exactly one of Themeopts and Fieldmgr.
type Route struct {
	Path string `json:"path"`
	// Themeopts lists the theme option ids the route shows.
	Themeopts []string `json:"themeopts,omitempty"`
	// Fieldmgr picks the field groups the route lists.
	Fieldmgr *Selector `json:"fieldmgr,omitempty"`
	// Cache lifetimes in seconds: max_age for browsers (default 60),
	// s_maxage for shared caches (default max_age), and the
	// stale-while-revalidate and stale-if-error allowances (default none).
	MaxAge               *int `json:"max_age,omitempty"`
	SMaxAge              *int `json:"s_maxage,omitempty"`
	StaleWhileRevalidate int  `json:"stale_while_revalidate,omitempty"`
	StaleIfError         int  `json:"stale_if_error,omitempty"`

	cacheControl string // worked out by ParseConfig
}

// CacheControl is the Cache-Control header of the route's answers, from
// its lifetimes (ParseConfig works it out once).
func (r *Route) CacheControl() string { return r.cacheControl }

// Selector picks field groups: every criterion given must hold.
type Selector struct {
	Keys     []string `json:"keys,omitempty"`
	Status   string   `json:"status,omitempty"`
	Type     string   `json:"type,omitempty"`
	PostType string   `json:"post_type,omitempty"`
	Taxonomy string   `json:"taxonomy,omitempty"`
}

// defaultMaxAge is a public answer's browser lifetime unless configured:
// short, since a purge reaches CDNs but not browsers.
const defaultMaxAge = 60

var (
	routePath = regexp.MustCompile(`^/wp-json/[a-z0-9-]+/v[0-9]+(/[A-Za-z0-9_.-]+)+$`)
	// reserved are namespaces a public route may not shadow: the sidecar's
	// own and WordPress's.
	reserved = []string{"/wp-json/fieldmgr/", "/wp-json/themeopts/", "/wp-json/wp/", "/wp-json/wp-site-health/", "/wp-json/oembed/", "/wp-json/wpsidecar-companion/"}
	idRe     = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,191}$`)
)

// ParseConfig checks a public routes file; the error names every problem
// with its place.
func ParseConfig(b []byte) (*Config, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("not a public routes file: %v", err)
	}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if len(c.Routes) == 0 {
		bad("routes: at least one route")
	}
	seen := map[string]bool{}
	for i := range c.Routes {
		r := &c.Routes[i]
		at := fmt.Sprintf("routes[%d]", i)
		lower := strings.ToLower(r.Path)
		switch {
		case !routePath.MatchString(r.Path):
			bad("%s.path: %q is not /wp-json/<namespace>/v<n>/<route> of letters, digits, _, . and -", at, r.Path)
		case seen[lower]:
			bad("%s.path: %q is given twice (routes match without regard to case)", at, r.Path)
		}
		for _, p := range reserved {
			if strings.HasPrefix(lower, p) {
				bad("%s.path: %q would shadow the routes under %s", at, r.Path, p)
			}
		}
		seen[lower] = true
		switch {
		case (len(r.Themeopts) > 0) == (r.Fieldmgr != nil):
			bad("%s: give exactly one of themeopts (a list of option ids) and fieldmgr (a selector)", at)
		case r.Fieldmgr != nil:
			s := r.Fieldmgr
			if len(s.Keys) == 0 && s.Status == "" && s.Type == "" && s.PostType == "" && s.Taxonomy == "" {
				bad("%s.fieldmgr: name at least one of keys, status, type, post_type, taxonomy (no route shows every group)", at)
			}
			for j, k := range s.Keys {
				if !idRe.MatchString(k) {
					bad("%s.fieldmgr.keys[%d]: %q is not a field group key", at, j, k)
				}
			}
		}
		for j, id := range r.Themeopts {
			if !idRe.MatchString(id) {
				bad("%s.themeopts[%d]: %q is not an option id (no wildcards)", at, j, id)
			}
		}
		maxAge := defaultMaxAge
		if r.MaxAge != nil {
			maxAge = *r.MaxAge
		}
		sMaxAge := maxAge
		if r.SMaxAge != nil {
			sMaxAge = *r.SMaxAge
		}
		if maxAge < 0 || sMaxAge < 0 || r.StaleWhileRevalidate < 0 || r.StaleIfError < 0 {
			bad("%s: cache lifetimes are seconds, 0 or more", at)
		}
		r.cacheControl = fmt.Sprintf("public, max-age=%d, s-maxage=%d", maxAge, sMaxAge)
		if r.StaleWhileRevalidate > 0 {
			r.cacheControl += fmt.Sprintf(", stale-while-revalidate=%d", r.StaleWhileRevalidate)
		}
		if r.StaleIfError > 0 {
			r.cacheControl += fmt.Sprintf(", stale-if-error=%d", r.StaleIfError)
		}
	}
	for i, o := range c.CORSOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || o != u.Scheme+"://"+u.Host {
			bad("cors_origins[%d]: %q is not an origin such as https://www.example.com", i, o)
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	return &c, nil
}

// Shows tells whether the route's answer shows what c changed: a field
// group list any change of the field groups, a theme options route a
// change of one of its ids. A CDN purges the route's URL then.
func (r Route) Shows(c wpsidecar.Commit) bool {
	switch c.Namespace {
	case wpsidecar.FieldGroups:
		return r.Fieldmgr != nil
	case wpsidecar.ThemeOptions:
		keys := c.Keys()
		return slices.ContainsFunc(r.Themeopts, func(id string) bool { return slices.Contains(keys, id) })
	}
	return false
}

// UsesThemeopts tells whether a route shows theme options (which needs the
// theme options configuration).
func (c *Config) UsesThemeopts() bool {
	for _, r := range c.Routes {
		if len(r.Themeopts) > 0 {
			return true
		}
	}
	return false
}

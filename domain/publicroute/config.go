// Package publicroute is the public routes file a site owner configures
// (--public-routes): its model and its rules, with no HTTP. Each route
// shows a selection of one namespace's items (chosen theme options, field
// groups picked by a selector), the same for everyone, without
// credentials, cacheable by a CDN and a browser; web/public serves them,
// and the command line and the OpenAPI description read the same file
// through this package without reaching the handler. It names no
// namespace: each namespace that routes may show gives its Source (the
// key naming it in a route, and how it reads what follows the key).
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

// Route is one public route: a path, and what it shows of exactly one
// namespace, under the key of that namespace's Source.
type Route struct {
	Path string `json:"path"`
	// Namespace is the namespace the route shows, Selection what it
	// shows of it, as its Source read it.
	Namespace wpsidecar.Namespace `json:"-"`
	Selection Selection           `json:"-"`
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

// Selection is what a route shows of its namespace.
type Selection interface {
	// Shows tells whether c, a change of the namespace, shows in the
	// route's answer.
	Shows(c wpsidecar.Commit) bool
	// Schema is the JSON schema of the route's answer, given the
	// site's component schemas (OpenAPI's components/schemas).
	Schema(schemas map[string]any) map[string]any
}

// Source is a namespace routes may show, as the file names it.
type Source struct {
	// Key names the namespace in a route ("themeopts": [...]).
	Key       string
	Namespace wpsidecar.Namespace
	// Parse reads what follows the key; each problem it finds is said
	// of at (the key's place, "routes[0].themeopts"), as ParseConfig
	// says its own.
	Parse func(raw json.RawMessage, at string) (Selection, []string)
}

// defaultMaxAge is a public answer's browser lifetime unless configured:
// short, since a purge reaches CDNs but not browsers.
const defaultMaxAge = 60

var (
	routePath = regexp.MustCompile(`^/wp-json/[a-z0-9-]+/v[0-9]+(/[A-Za-z0-9_.-]+)+$`)
	// reserved are namespaces a public route may not shadow besides the
	// kinds' own: the sidecar's (its history, its companion plugin's)
	// and WordPress's.
	reserved = []string{"/wp-json/wpsidecar/", "/wp-json/wpsidecar-companion/", "/wp-json/wp/", "/wp-json/wp-site-health/", "/wp-json/oembed/"}
)

// Parser is ParseConfig for the namespaces of kinds.
func Parser(kinds ...Source) func([]byte) (*Config, error) {
	return func(b []byte) (*Config, error) { return ParseConfig(b, kinds...) }
}

// routeFields are a route's own fields: every other key names a Source.
var routeFields = []string{"path", "max_age", "s_maxage", "stale_while_revalidate", "stale_if_error"}

// ParseConfig checks a public routes file whose routes may show the
// namespaces of kinds; the error names every problem with its place.
func ParseConfig(b []byte, kinds ...Source) (*Config, error) {
	var file struct {
		Routes      []map[string]json.RawMessage `json:"routes"`
		CORSOrigins []string                     `json:"cors_origins"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("not a public routes file: %v", err)
	}
	c := Config{CORSOrigins: file.CORSOrigins, Routes: make([]Route, len(file.Routes))}
	var keys []string
	shadowed := slices.Clone(reserved)
	for _, k := range kinds {
		keys = append(keys, k.Key)
		shadowed = append(shadowed, "/wp-json/"+string(k.Namespace)+"/")
	}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if len(c.Routes) == 0 {
		bad("routes: at least one route")
	}
	seen := map[string]bool{}
	for i, fields := range file.Routes {
		r := &c.Routes[i]
		at := fmt.Sprintf("routes[%d]", i)
		if err := readRoute(fields, keys, r); err != nil {
			return nil, fmt.Errorf("not a public routes file: %s: %v", at, err)
		}
		lower := strings.ToLower(r.Path)
		switch {
		case !routePath.MatchString(r.Path):
			bad("%s.path: %q is not /wp-json/<namespace>/v<n>/<route> of letters, digits, _, . and -", at, r.Path)
		case seen[lower]:
			bad("%s.path: %q is given twice (routes match without regard to case)", at, r.Path)
		}
		for _, p := range shadowed {
			if strings.HasPrefix(lower, p) {
				bad("%s.path: %q would shadow the routes under %s", at, r.Path, p)
			}
		}
		seen[lower] = true
		var shown []Source
		for _, k := range kinds {
			if _, ok := fields[k.Key]; ok {
				shown = append(shown, k)
			}
		}
		if len(shown) != 1 {
			bad("%s: give exactly one of %s", at, strings.Join(keys, ", "))
		} else {
			k := shown[0]
			sel, p := k.Parse(fields[k.Key], at+"."+k.Key)
			problems = append(problems, p...)
			r.Namespace, r.Selection = k.Namespace, sel
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

// readRoute reads a route's own fields into r: an unknown key (neither
// a route's field nor a kind's key, which the caller checks) is an error
// as the decoder says it.
func readRoute(fields map[string]json.RawMessage, kinds []string, r *Route) error {
	own := map[string]json.RawMessage{}
	for f, v := range fields {
		switch {
		case slices.Contains(routeFields, f):
			own[f] = v
		case !slices.Contains(kinds, f):
			return fmt.Errorf("json: unknown field %q", f)
		}
	}
	b, err := json.Marshal(own)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, r)
}

// Shows tells whether the route's answer shows what c changed: a change
// of its namespace that its selection shows. A CDN purges the route's
// URL then.
func (r Route) Shows(c wpsidecar.Commit) bool {
	return r.Selection != nil && c.Namespace == r.Namespace && r.Selection.Shows(c)
}

// Uses tells whether a route shows namespace ns.
func (c *Config) Uses(ns wpsidecar.Namespace) bool {
	return slices.ContainsFunc(c.Routes, func(r Route) bool { return r.Namespace == ns })
}

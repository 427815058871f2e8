// Package multisite finds which site of a WordPress network a request is
// for, as WordPress's ms_load_current_site_and_network does, from the
// network's wp_site and wp_blogs rows and the wp-config.php constants. It
// knows WordPress's data and nothing of HTTP.
package multisite

import (
	"slices"
	"strings"
)

// Network is a row of {base_prefix}site.
type Network struct {
	ID     int64
	Domain string
	Path   string
}

// Site is a row of {base_prefix}blogs.
type Site struct {
	ID        int64
	NetworkID int64
	Domain    string
	Path      string
	Archived  bool
	Spam      bool
	Deleted   int // 0, 1 (deleted) or 2 (not yet activated)
}

// Constants are the wp-config.php constants that declare the network:
// DOMAIN_CURRENT_SITE and PATH_CURRENT_SITE (Defined when both are),
// SITE_ID_CURRENT_SITE (default 1), SUBDOMAIN_INSTALL, and NOBLOGREDIRECT
// (nil when not defined).
type Constants struct {
	Defined        bool
	Domain, Path   string
	NetworkID      int64
	Subdomain      bool
	NoBlogRedirect *string
}

// Map is a network's sites, read at one moment.
type Map struct {
	Networks []Network
	Sites    []Site
	Const    Constants
	// byPath indexes Sites by lower-case domain and path (Index): a
	// request's site is then found in a few look-ups however many sites
	// the network has. nil: Sites are scanned.
	byPath map[string][]int
}

// Index makes the look-up of sites by domain and path; Load does it. A
// network with a site whose domain or path is not ASCII is not indexed
// (Unicode case folding is the database's, not a lower-case key's).
func (m *Map) Index() {
	idx := make(map[string][]int, len(m.Sites))
	for i, s := range m.Sites {
		if !isASCII(s.Domain) || !isASCII(s.Path) {
			return
		}
		k := siteKey(strings.ToLower(s.Domain), strings.ToLower(s.Path))
		idx[k] = append(idx[k], i)
	}
	m.byPath = idx
}

func siteKey(domain, path string) string { return domain + "\x00" + path }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Result is where a request goes: a Site of a Network; or Redirect, a URL
// WordPress redirects to (a site not found on a known network); or
// neither (WordPress answers that the site is not installed).
type Result struct {
	Site     *Site
	Network  *Network
	Redirect string
}

// Resolve finds the site of a request for domain (the Host header, lower
// case, without :80 or :443) and path (the request path, without query),
// in ms_load_current_site_and_network's order.
func (m *Map) Resolve(domain, path string, secure bool) Result {
	var site *Site
	var network *Network
	c := m.Const
	switch {
	case c.Defined:
		network = &Network{ID: max(c.NetworkID, 1), Domain: c.Domain, Path: c.Path}
		switch {
		case strings.EqualFold(c.Domain, domain) && strings.EqualFold(c.Path, path):
			site = m.siteByPath(domain, path, -1)
		case c.Path != "/" && strings.EqualFold(c.Domain, domain) && hasPrefixFold(path, c.Path):
			// The first segment after the network's path.
			site = m.siteByPath(domain, path, 1+len(strings.Split(strings.Trim(c.Path, "/"), "/")))
		default:
			site = m.siteByPath(domain, path, 1)
		}
	case !c.Subdomain:
		switch len(m.Networks) {
		case 0:
			return Result{}
		case 1:
			network = &m.Networks[0]
		default:
			network = m.networkByPath(domain, path, 1)
		}
		switch {
		case network == nil:
			return Result{}
		case path == network.Path:
			site = m.siteByPath(domain, path, -1)
		default:
			// The network's path and one more segment.
			site = m.siteByPath(domain, path, strings.Count(network.Path, "/"))
		}
	default:
		if site = m.siteByPath(domain, path, 1); site != nil {
			network = m.network(max(site.NetworkID, 1))
		} else {
			network = m.networkByPath(domain, path, 1)
		}
	}
	// The network the site names trumps the constants.
	if site != nil && (network == nil || site.NetworkID != network.ID) {
		network = m.network(site.NetworkID)
	}
	if network == nil {
		return Result{}
	}
	if site == nil {
		scheme := "http"
		if secure {
			scheme = "https"
		}
		dest := scheme + "://" + network.Domain + network.Path
		switch {
		case c.Subdomain && c.NoBlogRedirect == nil:
			dest += "wp-signup.php?new=" + strings.ReplaceAll(domain, "."+network.Domain, "")
		case c.Subdomain:
			if *c.NoBlogRedirect != "%siteurl%" {
				dest = *c.NoBlogRedirect
			}
		case strings.EqualFold(network.Domain, domain):
			return Result{Network: network} // not installed: no redirect to itself
		}
		return Result{Network: network, Redirect: dest}
	}
	return Result{Site: site, Network: network}
}

// candidates are get_site_by_path's paths: the path's first segments
// (all of them when segments < 0), longest first, down to "/".
func candidates(path string, segments int) []string {
	var parts []string
	for _, p := range strings.Split(strings.Trim(path, "/"), "/") {
		if p != "" && p != "0" { // PHP's array_filter drops "" and "0"
			parts = append(parts, p)
		}
	}
	if segments >= 0 && len(parts) > segments {
		parts = parts[:segments]
	}
	var paths []string
	for ; len(parts) > 0; parts = parts[:len(parts)-1] {
		paths = append(paths, "/"+strings.Join(parts, "/")+"/")
	}
	return append(paths, "/")
}

// domains are the domains asked for: a www. domain also without it.
func domains(domain string) []string {
	if strings.HasPrefix(domain, "www.") {
		return []string{domain, domain[4:]}
	}
	return []string{domain}
}

// siteByPath is get_site_by_path: of the sites on one of the domains at
// one of the candidate paths, the longest domain, then the longest path
// (the database compares without case), then the lowest id.
func (m *Map) siteByPath(domain, path string, segments int) *Site {
	ds, ps := domains(domain), candidates(path, segments)
	var best *Site
	if m.byPath != nil && isASCII(domain) && isASCII(path) {
		for _, d := range ds {
			d = strings.ToLower(d)
			for _, p := range ps {
				for _, i := range m.byPath[siteKey(d, strings.ToLower(p))] {
					if s := &m.Sites[i]; best == nil || better(len(s.Domain), len(s.Path), s.ID, len(best.Domain), len(best.Path), best.ID) {
						best = s
					}
				}
			}
		}
		return best
	}
	for i := range m.Sites {
		s := &m.Sites[i]
		if !containsFold(ds, s.Domain) || !containsFold(ps, s.Path) {
			continue
		}
		if best == nil || better(len(s.Domain), len(s.Path), s.ID, len(best.Domain), len(best.Path), best.ID) {
			best = s
		}
	}
	return best
}

// networkByPath is WP_Network::get_by_path: networks on the domain or a
// parent domain of it, at one of the candidate paths, longest domain then
// longest path first; the first whose domain is the request's (or its
// www.) wins, or failing that the first at "/".
func (m *Map) networkByPath(domain, path string, segments int) *Network {
	ds := []string{domain}
	pieces := strings.Split(domain, ".")
	for len(pieces) > 0 && pieces[0] != "" && pieces[0] != "0" { // PHP: while (array_shift($pieces))
		if pieces = pieces[1:]; len(pieces) > 0 {
			ds = append(ds, strings.Join(pieces, "."))
		}
	}
	ps := candidates(path, segments)
	var found []*Network
	for i := range m.Networks {
		if n := &m.Networks[i]; containsFold(ds, n.Domain) && containsFold(ps, n.Path) {
			found = append(found, n)
		}
	}
	slices.SortStableFunc(found, func(a, b *Network) int {
		if len(a.Domain) != len(b.Domain) {
			return len(b.Domain) - len(a.Domain)
		}
		return len(b.Path) - len(a.Path)
	})
	for _, n := range found {
		if n.Domain == domain || "www."+n.Domain == domain || n.Path == "/" {
			return n
		}
	}
	return nil
}

func better(dl, pl int, id int64, bdl, bpl int, bid int64) bool {
	if dl != bdl {
		return dl > bdl
	}
	if pl != bpl {
		return pl > bpl
	}
	return id < bid
}

func (m *Map) network(id int64) *Network {
	for i := range m.Networks {
		if m.Networks[i].ID == id {
			return &m.Networks[i]
		}
	}
	return nil
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// Blocked is why ms_site_check stops a visitor who is not a super admin:
// "deleted" (WordPress answers 410 "This site is no longer available."),
// "inactive" (not yet activated), "suspended" (archived or spam: 410 "This
// site has been archived or suspended."), or "" when the site is open.
func (s *Site) Blocked() string {
	switch {
	case s.Deleted == 1:
		return "deleted"
	case s.Deleted == 2:
		return "inactive"
	case s.Archived || s.Spam:
		return "suspended"
	}
	return ""
}

package main

import (
	"net/http"
	"strings"

	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/store/multisite"
)

// mainSiteOnly is, on a multisite network, whether a request is for site 1,
// whose tables (the base prefix) the sidecar answers from: another site's
// requests, and those that find no site, go to PHP, which answers them for
// that site. Until the site map is first read, requests are the main site's.
func mainSiteOnly(network *store.NetworkWatcher) func(*http.Request) bool {
	return func(r *http.Request) bool {
		m, err := network.Current()
		if err != nil {
			return true
		}
		// As ms-settings.php reads HTTP_HOST and REQUEST_URI.
		host := strings.ToLower(r.Host)
		if h, ok := strings.CutSuffix(host, ":80"); ok {
			host = h
		} else if h, ok := strings.CutSuffix(host, ":443"); ok {
			host = h
		}
		res := m.Resolve(host, r.URL.EscapedPath(), r.TLS != nil)
		return res.Site != nil && res.Site.ID == 1
	}
}

// networkConstants are the network's wp-config.php constants.
func networkConstants(cfg *config.Config) multisite.Constants {
	n := cfg.Network
	return multisite.Constants{Defined: n.Domain != "" && n.Path != "", Domain: n.Domain, Path: n.Path, NetworkID: int64(n.ID), Subdomain: n.Subdomain}
}

package main

import (
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/store/objcache"
	"github.com/wpsidecar/wpsidecar/web/site"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

// What of the configuration each package is handed: only cmd (and
// command) read the settings table.

// siteOptions are what every site's services are built with.
func siteOptions(cfg *config.Config) site.Options {
	return site.Options{HomeURL: cfg.HomeURL, SiteURL: cfg.SiteURL, SettingsRefresh: cfg.SettingsRefresh,
		DBTimeout: cfg.DB.Timeout}
}

// themeoptsFiles are the theme options configuration files.
func themeoptsFiles(cfg *config.Config) themeopts.Paths {
	f := themeopts.Paths{All: cfg.ThemeoptsConfig}
	for _, s := range cfg.ThemeoptsSites {
		f.Sites = append(f.Sites, themeopts.SitePath{Site: s.Site, File: s.File})
	}
	return f
}

// networkConstants are the network's wp-config.php constants.
func networkConstants(cfg *config.Config) multisite.Constants {
	n := cfg.Network
	return multisite.Constants{Defined: n.Domain != "" && n.Path != "", Domain: n.Domain, Path: n.Path, NetworkID: int64(n.ID), Subdomain: n.Subdomain}
}

// objcacheOptions are the Redis object cache's.
func objcacheOptions(cfg *config.Config, logger zerolog.Logger) objcache.Options {
	r := cfg.Redis
	return objcache.Options{
		Scheme: r.Scheme, Host: r.Host, Port: r.Port, Path: r.Path, Username: r.Username, Password: r.Password,
		Database: r.Database, Timeout: r.Timeout, Salt: r.Salt(), TablePrefix: cfg.TablePrefix, Multisite: cfg.Multisite,
		Logger: logger.With().Str("component", "objcache").Logger(),
	}
}

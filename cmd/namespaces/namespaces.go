// Package namespaces is the one list of the namespaces the sidecar
// serves, one line each, provided by their handler packages. Every other
// list (the history's units and reverters, the tables and option rows
// change detection follows, OpenAPI, export and import, each site's
// handlers, the recipes' and the companion's lists) is derived from it
// with package module, by cmd and by the tests' harness alike. Adding a
// namespace is its own packages and a line here.
package namespaces

import (
	"strings"

	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/web/fieldmgr"
	"github.com/wpsidecar/wpsidecar/web/module"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

// Modules are the namespaces served under the settings cfg, built once
// by each process that serves or handles them; t is where the theme
// options' configurations are found (nil: none), which cmd opens, as it
// opens every file the settings name.
func Modules(cfg *config.Config, t themeopts.Configurations) []module.Module {
	// The field groups' table after the prefix, which each site's view of
	// the database prefixes (config requires the base prefix on a network).
	groups := strings.TrimPrefix(cfg.FieldmgrTable, cfg.TablePrefix)
	return []module.Module{
		fieldmgr.Module(cfg.FieldmgrTable, groups),
		themeopts.Module(t),
	}
}

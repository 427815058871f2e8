package main

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/cmd/command"
	"github.com/wpsidecar/wpsidecar/cmd/namespaces"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/web/historyapi"
	"github.com/wpsidecar/wpsidecar/web/module"
	"github.com/wpsidecar/wpsidecar/web/openapi"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

// api is what the openapi command describes: the modules under the
// theme options configuration the settings name.
func api(cfg *config.Config) func() ([]openapi.NamespaceDoc, error) {
	return func() ([]openapi.NamespaceDoc, error) {
		opts, err := command.ReadConfig(cfg.ThemeoptsConfig, "themeopts-config", themeoption.ParseConfig)
		if err != nil {
			return nil, err
		}
		return apiUnder(cfg, opts), nil
	}
}

// apiUnder is what the OpenAPI description shows under a theme options
// configuration (nil: none): the modules, then the sidecar's own (the
// history).
func apiUnder(cfg *config.Config, opts *themeoption.Config) []openapi.NamespaceDoc {
	return apiOf(namespaces.Modules(cfg, themeopts.Fixed{Config: opts}))
}

// apiOf is what the OpenAPI description shows of mods: the modules, then
// the sidecar's own (their history).
func apiOf(mods []module.Module) []openapi.NamespaceDoc {
	return append(module.API(mods), openapi.NamespaceDoc{Name: "wpsidecar/v1", Routes: historyapi.Routes(module.Units(mods))})
}

// parts are the namespaces as export and import handle them: the theme
// options configurations opened once per command (as the server would
// serve them), then each site's kinds over its view of the database.
func parts(cfg *config.Config) func() (command.PartsOf, error) {
	return func() (command.PartsOf, error) {
		topts, _, err := themeopts.Open(themeoptsFiles(cfg), zerolog.Nop(), func(func(context.Context)) {})
		if err != nil {
			return nil, err
		}
		return module.Parts(namespaces.Modules(cfg, topts)), nil
	}
}

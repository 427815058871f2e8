package command

import (
	"context"
	"fmt"

	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/internal/regularfile"
	"github.com/wpsidecar/wpsidecar/web/openapi"
)

// maxConfigBytes bounds the configuration files openapi reads, as the
// server bounds them when it follows them (reload).
const maxConfigBytes = 8 << 20

// openAPI is `wpsidecar openapi`: the site's OpenAPI description on
// stdout, each option of the theme options configuration (themeopts-config)
// with its value's schema and each public route (public-routes) with its
// answer.
func (c *cmd) openAPI(_ context.Context, _ []string) error {
	var site openapi.Configured
	var api []openapi.NamespaceDoc
	var err error
	if c.o.API != nil {
		if api, err = c.o.API(); err != nil {
			return err
		}
	}
	if site.Public, err = ReadConfig(c.o.PublicRoutes, "public-routes", publicroute.Parser(c.o.PublicSources...)); err != nil {
		return err
	}
	_, err = c.out.Write(openapi.Document(api, site))
	return err
}

// ReadConfig reads and parses the configuration file at path for
// openapi, named by its setting; no path, no configuration (nil).
func ReadConfig[T any](path, setting string, parse func([]byte) (*T, error)) (*T, error) {
	if path == "" {
		return nil, nil
	}
	b, err := regularfile.Read(path, maxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", setting, err)
	}
	v, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", setting, err)
	}
	return v, nil
}

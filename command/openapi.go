package command

import (
	"context"
	"fmt"

	"github.com/wpsidecar/wpsidecar/internal/regularfile"
	"github.com/wpsidecar/wpsidecar/openapi"
	"github.com/wpsidecar/wpsidecar/publicroute"
	"github.com/wpsidecar/wpsidecar/themeopt"
)

// maxConfigBytes bounds the configuration files openapi reads, as the
// server bounds them when it follows them (reload).
const maxConfigBytes = 8 << 20

// openAPI is `wpsidecar openapi`: the site's OpenAPI description on
// stdout, each option of the theme options configuration (themeopts-config)
// with its value's schema and each public route (public-routes) with its
// answer.
func (c *cmd) openAPI(_ context.Context, _ []string) error {
	var site openapi.Site
	if p := c.o.ThemeoptsConfig; p != "" {
		b, err := regularfile.Read(p, maxConfigBytes)
		if err == nil {
			site.Themeopts, err = themeopt.ParseConfig(b)
		}
		if err != nil {
			return fmt.Errorf("openapi: themeopts-config: %w", err)
		}
	}
	if p := c.o.PublicRoutes; p != "" {
		b, err := regularfile.Read(p, maxConfigBytes)
		if err == nil {
			site.Public, err = publicroute.ParseConfig(b)
		}
		if err != nil {
			return fmt.Errorf("openapi: public-routes: %w", err)
		}
	}
	_, err := c.out.Write(openapi.Document(c.o.API, site))
	return err
}

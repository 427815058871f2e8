package openapi

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wpsidecar/wpsidecar/proxy/public"
	"github.com/wpsidecar/wpsidecar/themeopt"
)

// Command is `wpsidecar openapi [--themeopts-config F]
// [--public-routes F]`: the site's OpenAPI description on stdout, each
// configured option's value schema and each public route's answer (the
// files may also be named by WPSIDECAR_THEMEOPTS_CONFIG and
// WPSIDECAR_PUBLIC_ROUTES). api are the namespaces described.
func Command(api []Namespace, args, environ []string, stdout, stderr io.Writer) error {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	fs := flag.NewFlagSet("wpsidecar openapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	topts := fs.String("themeopts-config", env["WPSIDECAR_THEMEOPTS_CONFIG"], "the theme options configuration file")
	routes := fs.String("public-routes", env["WPSIDECAR_PUBLIC_ROUTES"], "the public routes file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var site Site
	if *topts != "" {
		b, err := os.ReadFile(*topts)
		if err == nil {
			site.Themeopts, err = themeopt.ParseConfig(b)
		}
		if err != nil {
			return fmt.Errorf("openapi: themeopts-config: %w", err)
		}
	}
	if *routes != "" {
		b, err := os.ReadFile(*routes)
		if err == nil {
			site.Public, err = public.ParseConfig(b)
		}
		if err != nil {
			return fmt.Errorf("openapi: public-routes: %w", err)
		}
	}
	_, err := stdout.Write(Document(api, site))
	return err
}

package config

import (
	"fmt"
	"io"
	"strings"
)

// alsoFrom names where else a setting is read: the official image's
// variable and the wp-config.php constant.
func (s setting) alsoFrom() []string {
	var from []string
	if s.wpEnv != "" {
		from = append(from, s.wpEnv)
	}
	if s.wpConst != "" {
		from = append(from, "wp-config.php "+s.wpConst)
	}
	return from
}

// Usage writes --help: what the sidecar needs to start, then every flag
// with its variable, where else it is read and its default.
func Usage(w io.Writer) {
	fmt.Fprint(w, `Usage: wpsidecar [flags]

Answers the fieldmgr/v1 and themeopts/v1 REST namespaces from WordPress's
database and passes every other request to the WordPress server (--upstream).

The usual start reads the database settings, keys and salts from the site:
  wpsidecar --upstream http://127.0.0.1:8081 --wp-config /var/www/html/wp-config.php
Without --wp-config (or the official image's WORDPRESS_DB_* and WORDPRESS_*_KEY/
_SALT variables) give at least --upstream, --db-user, --db-password, --db-host,
--db-name and, for cookies and nonces, the eight keys and salts (--auth-key …
--nonce-salt). --check-config prints what is in force and where it came from.

Every flag but --check-config is also a variable WPSIDECAR_NAME, named
under it; any variable may be given as NAME_FILE, a file holding the value.

Commands, with the same settings (no --upstream needed); wpsidecar COMMAND --help
lists a command's own flags:
  wpsidecar export DIR        field groups and theme options as files
  wpsidecar import DIR        apply them
  wpsidecar history           the history of changes
  wpsidecar revert ID         write an entry's value back
  wpsidecar openapi           the OpenAPI description of the routes served
  wpsidecar probe [URL]       the container's health check
  wpsidecar --version         the version and the commit built

`)
	for _, s := range settings {
		arg := " VALUE"
		if s.kind == kBool {
			arg = ""
		}
		fmt.Fprintf(w, "  --%s%s\n    \t%s\n", s.name, arg, s.usage)
		var notes []string
		notes = append(notes, EnvName(s.name))
		notes = append(notes, s.alsoFrom()...)
		if s.def != "" {
			notes = append(notes, "default "+s.def)
		}
		fmt.Fprintf(w, "    \t(%s)\n", strings.Join(notes, "; "))
	}
	fmt.Fprint(w, "  --check-config\n    \tprint the effective configuration, secrets masked, and exit\n")
}

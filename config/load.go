package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/config/wpconfig"
	"github.com/wpsidecar/wpsidecar/internal/redact"
	"github.com/wpsidecar/wpsidecar/internal/regularfile"
)

// Where a value came from, for --check-config.
const (
	SourceDefault = "default"
	SourceFlag    = "flag"
	// A value from wp-config.php (or a file it includes) has its file and
	// line as its source.
)

// ErrHelp is returned when the flags asked for help: by Load once the
// server's usage has been written to the output given to it; by
// LoadCommand and ParseCommandFlags with nothing written (a command
// writes its own).
var ErrHelp = flag.ErrHelp

// Load builds the configuration from command-line arguments (without the
// program name) and the environment (as os.Environ gives it). It reports
// every problem at once. checkConfig tells whether --check-config was given.
func Load(args []string, environ []string, usageOut io.Writer) (cfg *Config, checkConfig bool, err error) {
	cfg, checkConfig, _, err = loadWith(args, environ, usageOut, nil, false)
	return cfg, checkConfig, err
}

// LoadCommand builds the configuration of a command, which serves nothing
// (wpsidecar export, import, history, revert, openapi, probe): the same
// settings, no upstream needed, and no database unless database says the
// command reaches one. flags adds the command's own flags; the arguments
// that are not flags are returned, in order, and may come before, between
// or after the flags.
func LoadCommand(args []string, environ []string, flags func(*flag.FlagSet), database bool) (cfg *Config, positional []string, err error) {
	if flags == nil {
		flags = func(*flag.FlagSet) {} // a command all the same
	}
	cfg, _, positional, err = loadWith(args, environ, io.Discard, flags, !database)
	return cfg, positional, err
}

// ParseCommandFlags checks a command's arguments against the server's
// flags and the command's own (flags) and returns those that are not
// flags; it reads nothing else — no variables, no files — for a command
// that must not depend on the configuration on disk (the health check).
func ParseCommandFlags(args []string, flags func(*flag.FlagSet)) ([]string, error) {
	if flags == nil {
		flags = func(*flag.FlagSet) {}
	}
	_, _, positional, err := parseFlags(args, io.Discard, flags)
	return positional, err
}

func loadWith(args []string, environ []string, usageOut io.Writer, command func(*flag.FlagSet), offline bool) (cfg *Config, checkConfig bool, positional []string, err error) {
	env := envMap(environ)
	var problems []string

	flags, checkConfig, positional, err := parseFlags(args, usageOut, command)
	if err != nil {
		return nil, false, nil, err
	}
	if len(positional) > 0 && command == nil {
		problems = append(problems, fmt.Sprintf("unexpected arguments: %q%s", positional, spacedValue(args, len(positional))))
	}

	// Unknown WPSIDECAR_* variables are mistakes worth stopping for.
	known := map[string]bool{}
	for _, s := range settings {
		known[EnvName(s.name)] = true
		known[EnvName(s.name)+"_FILE"] = true
	}
	var unknown []string
	for k := range env {
		if strings.HasPrefix(k, "WPSIDECAR_") && !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		problems = append(problems, fmt.Sprintf("%s: unknown setting", k))
	}

	reads := 0 // NAME_FILE files read
	lookup := func(name string) (string, bool, error) { return lookupEnv(env, name, &reads) }

	// The wp-config.php path decides the lowest layer, so it is read first.
	var wc *wpconfig.Config
	wpPath, ok := flags["wp-config"]
	if !ok {
		wpPath, ok, err = lookup(EnvName("wp-config"))
		if err != nil {
			problems = append(problems, err.Error())
		}
	}
	if ok && wpPath != "" {
		// PHP's getenv() sees the process environment as it is: no
		// NAME_FILE indirection (getenv_docker does that itself).
		getenv := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
		if wpPath, err = wpconfig.Find(wpPath, wpconfig.OSFS{}); err != nil {
			problems = append(problems, fmt.Sprintf("wp-config: %v", err))
		} else if wc, err = wpconfig.Read(wpPath, getenv, wpconfig.OSFS{}); err != nil {
			problems = append(problems, fmt.Sprintf("wp-config: %s: %v", wpPath, err))
		}
	}

	cfg = &Config{Keys: map[string]string{}, sources: map[string]resolved{}, command: command != nil, offline: offline}
	if wc != nil {
		for _, w := range wc.Warnings {
			cfg.Warnings = append(cfg.Warnings, "wp-config: "+w)
		}
		for _, s := range settings {
			if why, ok := wc.Unresolved[s.wpConst]; ok {
				cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("wp-config: %s could not be read (%s); set --%s or %s", s.wpConst, why, s.name, EnvName(s.name)))
			}
		}
	}
	for _, s := range settings {
		v, src, found := "", "", false
		if v, found = flags[s.name]; found {
			src = SourceFlag
		}
		for _, name := range []string{EnvName(s.name), s.wpEnv} {
			if found || name == "" {
				continue
			}
			var err error
			if v, found, err = lookup(name); err != nil {
				problems = append(problems, err.Error())
			}
			src = name
		}
		if !found && wc != nil && s.wpConst != "" {
			if s.wpConst == "$table_prefix" {
				v, found = wc.TablePrefix, wc.HasPrefix
			} else {
				v, found = wc.Constants[s.wpConst]
			}
			src = wc.Origins[s.wpConst]
		}
		if !found {
			if s.def == "" {
				continue
			}
			v, src = s.def, SourceDefault
		}
		cfg.sources[s.name] = resolved{v, src}
		if err := s.set(cfg, v); err != nil {
			shown := strconv.Quote(v)
			if s.secret {
				shown = "(secret)"
			} else if s.redact != nil {
				shown = strconv.Quote(s.redact(v))
			}
			problems = append(problems, fmt.Sprintf("%s: %s from %s: %v", s.name, shown, src, err))
		}
	}
	cfg.derive()
	cfg.resolveObjectCache(wpPath, wc)
	problems = append(problems, cfg.problems()...)
	if len(problems) > 0 && wc != nil {
		// What the configuration's files did not give may be why.
		if _, ok := cfg.sources["db-user"]; !ok {
			problems = append(problems, fmt.Sprintf("wp-config: DB_USER is defined in none of the files read (%s)", strings.Join(wc.Files, ", ")))
		}
		problems = append(problems, cfg.Warnings...)
	}
	if len(problems) > 0 {
		return nil, checkConfig, nil, &Error{Problems: problems}
	}
	return cfg, checkConfig, positional, nil
}

// spacedValue hints at the likeliest cause of the server's n unexpected
// arguments: a true/false flag given its value after a space, which the
// flag package reads as the flag and an argument ("--multisite false").
// The first argument follows the last flag, as parsing stops there.
func spacedValue(args []string, n int) string {
	i := len(args) - n
	if i == 0 {
		return ""
	}
	name := strings.TrimLeft(args[i-1], "-")
	if name == "check-config" || slices.ContainsFunc(settings, func(s setting) bool { return s.name == name && s.kind == kBool }) {
		return fmt.Sprintf(" (--%s takes its value after =: --%s=%s)", name, name, args[i])
	}
	return ""
}

// parseFlags reads the command line: each setting's flag (its value as
// given, repeated ones joined by newlines), --check-config for the server,
// a command's own flags, and the arguments that are not flags.
func parseFlags(args []string, usageOut io.Writer, command func(*flag.FlagSet)) (flags map[string]string, checkConfig bool, positional []string, err error) {
	// The flag package would print a parse error itself and the caller
	// prints the returned one again: keep it quiet and write the usage only
	// when asked for.
	fs := flag.NewFlagSet("wpsidecar", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	flags = map[string]string{}
	for _, s := range settings {
		name := s.name
		usage := s.usage + " (" + EnvName(name) + ")"
		if s.kind == kBool {
			fs.BoolFunc(name, usage, func(v string) error { flags[name] = v; return nil })
		} else {
			repeat := s.repeat
			fs.Func(name, usage, func(v string) error {
				if old, ok := flags[name]; ok && repeat {
					v = old + "\n" + v
				}
				flags[name] = v
				return nil
			})
		}
	}
	if command != nil {
		command(fs)
	} else {
		fs.BoolVar(&checkConfig, "check-config", false, "print the effective configuration, secrets masked, and exit")
	}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if command == nil {
					Usage(usageOut)
				}
				return nil, false, nil, err
			}
			hint := " (wpsidecar --help lists the flags)"
			if command != nil {
				hint = " (the command's --help lists its own flags, wpsidecar --help the server's)"
			}
			return nil, false, nil, &Error{Problems: []string{err.Error() + hint}}
		}
		if fs.NArg() == 0 || command == nil {
			break
		}
		positional, args = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
	return flags, checkConfig, append(positional, fs.Args()...), nil
}

// Error lists every problem found in the configuration.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	return "invalid configuration:\n  " + strings.Join(e.Problems, "\n  ")
}

// IsConfigError tells a configuration problem from other failures.
func IsConfigError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// lookupEnv reads a variable as the official WordPress image's
// getenv_docker() does: NAME_FILE names a file whose content (trailing
// newlines removed) is the value; else NAME, even when empty. The file is
// read as wp-config.php's includes are: a regular file of at most
// wpconfig.MaxFileBytes, and no more than wpconfig.MaxFiles of them (reads
// counts them).
func lookupEnv(env map[string]string, name string, reads *int) (string, bool, error) {
	if f := env[name+"_FILE"]; f != "" {
		if *reads >= wpconfig.MaxFiles {
			return "", false, fmt.Errorf("%s_FILE: more than %d files read", name, wpconfig.MaxFiles)
		}
		*reads++
		b, err := regularfile.Read(f, wpconfig.MaxFileBytes)
		if err != nil {
			return "", false, fmt.Errorf("%s_FILE: %v", name, err)
		}
		return strings.TrimRight(string(b), "\r\n"), true, nil
	}
	v, ok := env[name]
	return v, ok, nil
}

var (
	sqlIdent   = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)
	charsetRe  = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	validTypes = map[string]bool{"local": true, "development": true, "staging": true, "production": true}
)

// derive fills in the values WordPress derives from others: the field-group
// table from the prefix, utf8 read as utf8mb4 and its default collation, an
// unknown environment type read as production.
func (c *Config) derive() {
	if c.FieldmgrTable == "" {
		c.FieldmgrTable = c.TablePrefix + DefaultFieldmgrTableSuffix
		c.sources["fieldmgr-table"] = resolved{c.FieldmgrTable, "table-prefix"}
	}
	if strings.EqualFold(c.DB.Charset, "utf8") {
		c.DB.Charset = "utf8mb4"
		c.sources["db-charset"] = resolved{"utf8mb4", c.sources["db-charset"].source + " (utf8 read as utf8mb4)"}
	}
	if c.DB.Collate == "" && c.DB.Charset == "utf8mb4" {
		c.DB.Collate = "utf8mb4_unicode_520_ci"
		c.sources["db-collate"] = resolved{c.DB.Collate, SourceDefault}
	}
	c.deriveTLS()
	c.warnTLS()
	if c.serveFromFeedAuto {
		c.ServeFromFeed = c.ChangeFeed != "poll"
	}
	if !validTypes[c.EnvironmentType] {
		c.Warnings = append(c.Warnings, fmt.Sprintf("environment-type: %q is not local, development, staging or production; using production, as WordPress does", c.EnvironmentType))
		c.EnvironmentType = DefaultEnvironmentType
		c.sources["environment-type"] = resolved{DefaultEnvironmentType, SourceDefault + " (fallback)"}
	}
}

// The MYSQLI_CLIENT_* flags that decide PHP's TLS to the database.
const (
	clientSSL           = 2048
	clientSSLDontVerify = 64
	clientSSLVerify     = 1073741824
)

// dbTLSModes are store.TLSModes (a test keeps them equal).
var dbTLSModes = []string{"disabled", "preferred", "required", "verify-ca", "verify-identity"}

// deriveTLS gives db-tls, when it is not set, the mode PHP's own
// connection has. wpdb passes MYSQL_CLIENT_FLAGS to mysqli_real_connect and
// sets no certificates itself; mysqlnd then encrypts with MYSQLI_CLIENT_SSL
// and verifies the server only when told to (MYSQLI_CLIENT_SSL_VERIFY_SERVER_CERT)
// or when a CA was set, which sites that define MYSQL_SSL_CA do through a
// db.php drop-in. Without the flag PHP connects in plain TCP, and so does
// the sidecar.
func (c *Config) deriveTLS() {
	if c.DB.TLS.Mode != "" {
		return
	}
	f := c.DB.ClientFlags
	why := "MYSQL_CLIENT_FLAGS from " + c.sources["db-client-flags"].source
	mode := "disabled"
	switch {
	case f&clientSSL == 0:
		why += ": no MYSQLI_CLIENT_SSL"
	case f&clientSSLDontVerify != 0:
		mode, why = "required", why+": MYSQLI_CLIENT_SSL with MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT"
	case f&clientSSLVerify != 0:
		mode, why = "verify-identity", why+": MYSQLI_CLIENT_SSL with MYSQLI_CLIENT_SSL_VERIFY_SERVER_CERT"
	case c.DB.TLS.CA != "":
		mode, why = "verify-identity", why+": MYSQLI_CLIENT_SSL with a CA (db-tls-ca)"
	default:
		mode, why = "required", why+": MYSQLI_CLIENT_SSL"
	}
	c.DB.TLS.Mode = mode
	c.sources["db-tls"] = resolved{mode, why}
}

// dsnTLSModes are the db-tls modes of a DSN's tls= as the driver reads it
// (true verifies the server's name against the system's CAs).
var dsnTLSModes = map[string]string{"false": "disabled", "preferred": "preferred", "skip-verify": "required", "true": "verify-identity"}

// warnTLS says when the TLS settings give less than they seem to: a CA, a
// client certificate or key while TLS is off (each connection is plain);
// a CA with a mode that checks no certificate; a --binlog-dsn whose own
// tls= is weaker than db-tls (it wins for the feed's connection).
func (c *Config) warnTLS() {
	t, src := c.DB.TLS, c.sources["db-tls"].source
	var given []string
	for _, f := range []struct{ name, v string }{{"db-tls-ca", t.CA}, {"db-tls-cert", t.Cert}, {"db-tls-key", t.Key}} {
		if f.v != "" {
			given = append(given, fmt.Sprintf("%s (%s)", f.name, c.sources[f.name].source))
		}
	}
	switch {
	case t.Mode == "disabled" && len(given) > 0:
		verb := "is"
		if len(given) > 1 {
			verb = "are"
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("db-tls: disabled (%s), so the database is reached unencrypted and %s %s not used; give --db-tls verify-identity, verify-ca or required to encrypt", src, strings.Join(given, ", "), verb))
	case (t.Mode == "preferred" || t.Mode == "required") && t.CA != "":
		c.Warnings = append(c.Warnings, fmt.Sprintf("db-tls: %s (%s) does not check the server's certificate, so db-tls-ca (%s) is not used; give --db-tls verify-ca or verify-identity to check it", t.Mode, src, c.sources["db-tls-ca"].source))
	}
	if c.BinlogDSN == nil {
		return
	}
	if m, ok := dsnTLSModes[c.BinlogDSN.TLSConfig]; ok && slices.Index(dbTLSModes, m) < slices.Index(dbTLSModes, t.Mode) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("binlog-dsn: its tls=%s (%s) is weaker than db-tls %s (%s), and the binlog feed's connection keeps it", c.BinlogDSN.TLSConfig, m, t.Mode, src))
	}
}

// Validate checks the settings against each other and reports every
// problem at once. It changes nothing, reads nothing and starts nothing.
func (c *Config) Validate() error {
	if p := c.problems(); len(p) > 0 {
		return &Error{Problems: p}
	}
	return nil
}

func (c *Config) problems() []string {
	var p []string
	if c.Upstream == nil && !c.command {
		if _, given := c.sources["upstream"]; !given {
			p = append(p, "upstream: required (e.g. --upstream http://127.0.0.1:8081)")
		}
	}
	for _, a := range []struct{ name, addr string }{{"listen", c.Listen}, {"admin-listen", c.AdminListen}} {
		if _, port, err := net.SplitHostPort(a.addr); err != nil {
			p = append(p, fmt.Sprintf("%s: %q is not host:port", a.name, a.addr))
		} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			p = append(p, fmt.Sprintf("%s: %q has no valid port", a.name, a.addr))
		}
	}
	if c.Listen == c.AdminListen && !strings.HasSuffix(c.Listen, ":0") {
		p = append(p, fmt.Sprintf("admin-listen: %q is also the public listen address", c.AdminListen))
	}
	if (c.Purge.CloudflareZone == "") != (c.Purge.CloudflareToken == "") {
		p = append(p, "cloudflare-zone, cloudflare-token: give both or neither")
	}
	if (c.Purge.FastlyService == "") != (c.Purge.FastlyToken == "") {
		p = append(p, "fastly-service, fastly-token: give both or neither")
	}
	seen := map[string]bool{}
	for _, r := range c.DB.Replicas {
		if seen[r.Addr] {
			p = append(p, fmt.Sprintf("db-replica: %s is given twice", r.Addr))
		}
		seen[r.Addr] = true
	}
	if c.ServeFromFeed && c.ChangeFeed == "poll" {
		p = append(p, "serve-from-feed: needs change-feed auto or binlog (only the binlog feed tells of every change as it commits)")
	}
	if len(c.CacheREST) > 0 && c.ChangeFeed == "poll" {
		p = append(p, "cache-rest: needs change-feed auto or binlog (only the binlog feed sees every row PHP's answers are made from)")
	}
	if len(c.WebhookURLs) > 0 && c.WebhookSecret == "" {
		p = append(p, "webhook-secret: required when webhook-urls is set (receivers verify the signature with it)")
	}
	if c.ObjectCache == "redis" && c.Redis.Scheme == "unix" && c.Redis.Path == "" {
		p = append(p, "redis-path: required when redis-scheme is unix")
	}
	if (c.DB.TLS.Cert == "") != (c.DB.TLS.Key == "") {
		p = append(p, "db-tls-cert, db-tls-key: give both or neither")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		p = append(p, "tls-cert, tls-key: give both or neither")
	}
	if !sqlIdent.MatchString(c.TablePrefix) {
		p = append(p, fmt.Sprintf("table-prefix: %q may hold only letters, digits and underscores", c.TablePrefix))
	}
	if !sqlIdent.MatchString(c.FieldmgrTable) {
		p = append(p, fmt.Sprintf("fieldmgr-table: %q must be 1-64 letters, digits and underscores", c.FieldmgrTable))
	}
	if c.Multisite && sqlIdent.MatchString(c.FieldmgrTable) && !strings.HasPrefix(c.FieldmgrTable, c.TablePrefix) {
		p = append(p, fmt.Sprintf("fieldmgr-table: %q must begin with the table prefix %q on a multisite network (each site's table is named with the site's prefix)", c.FieldmgrTable, c.TablePrefix))
	}
	if len(c.ThemeoptsSites) > 0 && !c.Multisite {
		p = append(p, "themeopts-site-config: only on a multisite network (MULTISITE in wp-config.php); use themeopts-config")
	}
	if h := wpconfig.ParseDBHost(c.DB.Host); h.Host == "" && h.Socket == "" {
		p = append(p, fmt.Sprintf("db-host: %q names no host or socket", c.DB.Host))
	}
	if c.DB.Name == "" {
		p = append(p, "db-name: required")
	}
	if c.DB.User == "" && !c.offline {
		p = append(p, "db-user: required; usually read from the site's wp-config.php (--wp-config PATH) or the official image's WORDPRESS_DB_* variables")
	}
	if !charsetRe.MatchString(c.DB.Charset) {
		p = append(p, fmt.Sprintf("db-charset: %q is not a character set name", c.DB.Charset))
	}
	if c.DB.Collate != "" && !charsetRe.MatchString(c.DB.Collate) {
		p = append(p, fmt.Sprintf("db-collate: %q is not a collation name", c.DB.Collate))
	}
	if _, err := zerolog.ParseLevel(c.LogLevel); err != nil || c.LogLevel == "" {
		p = append(p, fmt.Sprintf("log-level: %q is not one of debug, info, warn, error", c.LogLevel))
	}
	if c.LogFormat != "json" && c.LogFormat != "console" {
		p = append(p, fmt.Sprintf("log-format: %q is not json or console", c.LogFormat))
	}
	return p
}

// Source tells where a setting's value came from: "flag", a variable's name,
// "wp-config.php", "default", or "" when it is unset.
func (c *Config) Source(name string) string { return c.sources[name].source }

// Print writes the effective configuration, one setting a line with its
// source, secrets masked, then the warnings, each on a line of its own
// starting "# warning: ".
func (c *Config) Print(w io.Writer) {
	for _, s := range settings {
		val, src := c.sources[s.name].value, c.sources[s.name].source
		if s.name == "trusted-proxies" {
			var out []string
			for _, p := range c.TrustedProxies {
				out = append(out, p.String())
			}
			val = strings.Join(out, ",")
		}
		switch {
		case src == "":
			val, src = "(unset)", "-"
		case s.redact != nil:
			val = s.redact(val)
		case s.secret && val != "":
			val = "****** (set)"
		}
		fmt.Fprintf(w, "%-22s %-40s %s\n", s.name, val, src)
	}
	for _, m := range c.Warnings {
		fmt.Fprintf(w, "# warning: %s\n", m)
	}
}

// redactURLs masks the credentials of every URL in a comma-separated list.
func redactURLs(v string) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil {
			parts[i] = redact.URL(u)
		} else {
			parts[i] = "(not a URL)"
		}
	}
	return strings.Join(parts, ", ")
}

// redactDSN is a DSN with its password masked, its user, address and
// parameters (tls= among them) shown; one that cannot be read is not
// shown at all, as the password may be anywhere in it.
func redactDSN(v string) string {
	dc, err := mysql.ParseDSN(v)
	if err != nil {
		return "(secret)"
	}
	if dc.Passwd != "" {
		dc.Passwd = "xxxxx"
	}
	return dc.FormatDSN()
}

package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

type kind int

const (
	kString kind = iota
	kBool
	kDuration
	kInt
)

// setting is one row of the configuration table. Every setting has a flag
// --NAME and a variable WPSIDECAR_NAME (dashes as underscores); WordPress's
// own settings also come from the official image's variable (wpEnv) and from
// wp-config.php (wpConst, or "$table_prefix").
type setting struct {
	name    string
	kind    kind
	def     string
	secret  bool
	wpEnv   string
	wpConst string
	usage   string
	set     func(c *Config, v string) error
	// redact, when set, is the value fit to print (credentials masked):
	// --check-config prints a secret's through it too, while a secret
	// value that could not be read is shown in no form.
	redact func(v string) string
	// repeat: the flag may be given several times; set gets the values
	// one per line.
	repeat bool
}

// EnvName is the WPSIDECAR_* variable of a setting.
func EnvName(flagName string) string {
	return "WPSIDECAR_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func dur(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("not a duration (use e.g. 30s, 2m)")
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return d, nil
}

func durSetter(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := dur(v)
		*field(c) = d
		return err
	}
}

func intSetter(least int, field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < least {
			return fmt.Errorf("must be a whole number of at least %d", least)
		}
		*field(c) = n
		return nil
	}
}

// restNamespaceRe is a REST namespace as WordPress registers them
// ("wp/v2", "wc/store/v1", "oembed/1.0").
var restNamespaceRe = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)

func strSetter(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *field(c) = v; return nil }
}

// Rate is a token bucket: Burst at once, refilled at Burst per Per. A zero
// Burst is no limit.
type Rate struct {
	Burst int
	Per   time.Duration
}

// rateSetter reads "N/DURATION" (e.g. 30/10m), or 0 or off.
func rateSetter(field func(*Config) *Rate) func(*Config, string) error {
	return func(c *Config, v string) error {
		v = strings.TrimSpace(v)
		if v == "0" || strings.EqualFold(v, "off") {
			*field(c) = Rate{}
			return nil
		}
		n, per, ok := strings.Cut(v, "/")
		burst, err := strconv.Atoi(n)
		if !ok || err != nil || burst < 1 {
			return fmt.Errorf("not N/DURATION (e.g. 30/10m), 0 or off")
		}
		d, err := dur(per)
		if err != nil {
			return fmt.Errorf("not N/DURATION (e.g. 30/10m), 0 or off")
		}
		*field(c) = Rate{Burst: burst, Per: d}
		return nil
	}
}

// urlsSetter reads comma-separated http(s) URLs.
func urlsSetter(field func(*Config) *[]*url.URL) func(*Config, string) error {
	return func(c *Config, v string) error {
		*field(c) = nil
		var bad []string
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			u, err := url.Parse(f)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad = append(bad, f)
				continue
			}
			*field(c) = append(*field(c), u)
		}
		if len(bad) > 0 {
			return fmt.Errorf("not http(s) URLs: %s", redactURLs(strings.Join(bad, ", ")))
		}
		return nil
	}
}

// urlSetter reads one http(s) URL.
func urlSetter(field func(*Config) **url.URL) func(*Config, string) error {
	return func(c *Config, v string) error {
		var us []*url.URL
		if err := urlsSetter(func(*Config) *[]*url.URL { return &us })(c, v); err != nil || len(us) != 1 {
			return fmt.Errorf("not an http(s) URL")
		}
		*field(c) = us[0]
		return nil
	}
}

// parseBool accepts what flags, shells and PHP's define() produce.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "", "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean (use true or false)")
}

func keySetting(name string) setting {
	return setting{
		name: strings.ToLower(strings.ReplaceAll(name, "_", "-")), kind: kString, secret: true,
		wpEnv: "WORDPRESS_" + name, wpConst: name,
		usage: "WordPress secret " + name + ", for cookies and nonces",
		set: func(c *Config, v string) error {
			c.Keys[name] = v
			return nil
		},
	}
}

// settings is the whole configuration surface. docs/configuration.md's settings
// table is checked against it by a test.
var settings = func() []setting {
	s := []setting{
		{name: "listen", def: DefaultListen, usage: "public listen address",
			set: strSetter(func(c *Config) *string { return &c.Listen })},
		{name: "upstream", redact: redactURLs, usage: "URL of the WordPress (PHP) server every other request goes to (required)",
			set: func(c *Config, v string) error {
				if v == "" {
					return fmt.Errorf("required")
				}
				u, err := url.Parse(v)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return fmt.Errorf("not an http:// or https:// URL")
				}
				if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
					return fmt.Errorf("must not carry a query, fragment or user")
				}
				c.Upstream = u
				return nil
			}},
		{name: "admin-listen", def: DefaultAdminListen, usage: "listen address of /healthz, /readyz and /metrics",
			set: strSetter(func(c *Config) *string { return &c.AdminListen })},
		{name: "tls-cert", usage: "TLS certificate file for the public listener (with --tls-key)",
			set: strSetter(func(c *Config) *string { return &c.TLSCert })},
		{name: "tls-key", usage: "TLS private key file for the public listener (with --tls-cert)",
			set: strSetter(func(c *Config) *string { return &c.TLSKey })},
		{name: "trusted-proxies", usage: "comma-separated CIDRs or IPs whose X-Forwarded-* headers are believed",
			set: func(c *Config, v string) error {
				c.TrustedProxies = nil
				var bad []string
				for _, f := range strings.Split(v, ",") {
					f = strings.TrimSpace(f)
					if f == "" {
						continue
					}
					if p, err := netip.ParsePrefix(f); err == nil {
						c.TrustedProxies = append(c.TrustedProxies, p.Masked())
					} else if a, err := netip.ParseAddr(f); err == nil {
						c.TrustedProxies = append(c.TrustedProxies, netip.PrefixFrom(a, a.BitLen()))
					} else {
						bad = append(bad, strconv.Quote(f))
					}
				}
				if bad != nil {
					return fmt.Errorf("not a CIDR or IP: %s", strings.Join(bad, ", "))
				}
				return nil
			}},
		{name: "upstream-timeout", kind: kDuration, def: DefaultUpstreamTimeout.String(), usage: "longest wait for the upstream's response headers (then 504)",
			set: durSetter(func(c *Config) *time.Duration { return &c.UpstreamTimeout })},
		{name: "upstream-dial-timeout", kind: kDuration, def: DefaultUpstreamDial.String(), usage: "longest wait to connect to the upstream (then 502)",
			set: durSetter(func(c *Config) *time.Duration { return &c.UpstreamDial })},
		{name: "read-header-timeout", kind: kDuration, def: DefaultReadHeaderTimeout.String(), usage: "longest time a client may take to send request headers",
			set: durSetter(func(c *Config) *time.Duration { return &c.ReadHeaderTimeout })},
		{name: "body-timeout", kind: kDuration, def: DefaultBodyTimeout.String(), usage: "longest time a client may take to send a request body",
			set: durSetter(func(c *Config) *time.Duration { return &c.BodyTimeout })},
		{name: "idle-timeout", kind: kDuration, def: DefaultIdleTimeout.String(), usage: "how long an idle keep-alive connection is kept",
			set: durSetter(func(c *Config) *time.Duration { return &c.IdleTimeout })},
		{name: "shutdown-delay", kind: kDuration, def: DefaultShutdownDelay.String(), usage: "on SIGTERM, how long the sidecar keeps answering, /readyz failing and every answer closing its connection, before it stops accepting and drains (0: no delay)",
			set: func(c *Config, v string) error {
				d, err := time.ParseDuration(v)
				if err != nil || d < 0 {
					return fmt.Errorf("not a duration of 0 or more (use e.g. 5s, 0)")
				}
				c.ShutdownDelay = d
				return nil
			}},
		{name: "shutdown-timeout", kind: kDuration, def: DefaultShutdownTimeout.String(), usage: "how long shutdown waits for in-flight requests",
			set: durSetter(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
		{name: "max-header-bytes", kind: kInt, def: strconv.Itoa(DefaultMaxHeaderBytes), usage: "largest request header block accepted",
			set: intSetter(4096, func(c *Config) *int { return &c.MaxHeaderBytes })},
		{name: "wp-config", usage: "the site's wp-config.php, or its directory (a Bedrock project's root), read with what it includes for database settings, keys and salts",
			set: strSetter(func(c *Config) *string { return &c.WPConfigPath })},
		{name: "themeopts-config", usage: "theme options configuration file; themeopts/v1 is served only when set",
			set: strSetter(func(c *Config) *string { return &c.ThemeoptsConfig })},
		{name: "themeopts-site-config", repeat: true, usage: "on a multisite network, a site's own theme options configuration, SITE=FILE: SITE is a blog id, a domain or a domain and path (example.com/blog/); repeat the flag, or give several separated by spaces or lines; other sites use themeopts-config",
			set: func(c *Config, v string) error {
				c.ThemeoptsSites = nil
				for _, kv := range strings.Fields(v) {
					site, file, ok := strings.Cut(kv, "=")
					if !ok || site == "" || file == "" {
						return fmt.Errorf("%q is not SITE=FILE", kv)
					}
					c.ThemeoptsSites = append(c.ThemeoptsSites, ThemeoptsSite{Site: strings.ToLower(site), File: file})
				}
				return nil
			}},
		{name: "fieldmgr-table", usage: "field group table (default: table prefix + " + DefaultFieldmgrTableSuffix + ")",
			set: strSetter(func(c *Config) *string { return &c.FieldmgrTable })},
		{name: "change-interval", kind: kDuration, def: DefaultChangeInterval.String(), usage: "how often the field groups and the theme options row are checked for changes, when webhook-urls is set",
			set: durSetter(func(c *Config) *time.Duration { return &c.ChangeInterval })},
		{name: "change-feed", def: "auto", usage: "how changes are noticed: auto (the server's binary log whenever the server can feed it, asked at start and, while polling, every 30 change-intervals up to a minute; else polling, the reason logged), binlog (the binary log, as a replica; falls back to poll when it cannot) or poll (every change-interval)",
			set: func(c *Config, v string) error {
				if v != "auto" && v != "poll" && v != "binlog" {
					return fmt.Errorf("not auto, poll or binlog")
				}
				c.ChangeFeed = v
				return nil
			}},
		{name: "binlog-dsn", secret: true, redact: redactDSN, usage: "the binlog feed's connection, user:password@tcp(host:port)/ (a user with REPLICATION SLAVE and REPLICATION CLIENT or BINLOG MONITOR); a tls= in it (false, preferred, skip-verify, true) wins over db-tls for the feed; default: the database settings",
			set: func(c *Config, v string) error {
				dc, err := mysql.ParseDSN(v)
				if err != nil {
					return fmt.Errorf("not a DSN such as user:password@tcp(host:3306)/")
				}
				c.BinlogDSN = dc
				return nil
			}},
		{name: "binlog-server-id", kind: kInt, def: "0", usage: "the feed's replica server id, unique among the server's replicas; 0: one chosen at random",
			set: intSetter(0, func(c *Config) *int { return &c.BinlogServerID })},
		{name: "serve-from-feed", kind: kBool, def: "auto", usage: "answer GETs from memory kept current by the binlog feed, with no database round trip, while the feed has applied the server's log within max-staleness; auto: whenever the binlog feed is followed (change-feed auto or binlog), false: never",
			set: func(c *Config, v string) (err error) {
				if c.serveFromFeedAuto = strings.EqualFold(strings.TrimSpace(v), "auto"); c.serveFromFeedAuto {
					return nil
				}
				c.ServeFromFeed, err = parseBool(v)
				return err
			}},
		{name: "max-staleness", kind: kDuration, def: DefaultMaxStaleness.String(), usage: "with serve-from-feed or cache-rest: how far the binlog feed may be behind the server's log before GETs read the database (or PHP) again; with exact-reads false, also how old what memory answers may be (the feed looks where the log ends every half of it)",
			set: durSetter(func(c *Config) *time.Duration { return &c.MaxStaleness })},
		{name: "exact-reads", kind: kBool, def: "false", usage: "with serve-from-feed or cache-rest: a GET answered from memory first waits until the binlog feed has applied every transaction the server had committed when the GET came (one look at the log's end, shared by the GETs waiting at that moment; docs/caching.md has what it costs); false: answered as the feed stood, at most max-staleness ago",
			set: func(c *Config, v string) (err error) { c.ExactReads, err = parseBool(v); return err }},
		{name: "cache-rest", def: "off", usage: "comma-separated REST namespaces (wp/v2, or a plugin's such as wc/store/v1) whose PHP answers to anonymous GET and HEAD requests are kept and given again until the binlog feed sees a change that may alter them (docs/rest-cache.md); off: none",
			set: func(c *Config, v string) error {
				c.CacheREST = nil
				if v = strings.TrimSpace(v); v == "" || strings.EqualFold(v, "off") {
					return nil
				}
				for _, ns := range strings.Split(v, ",") {
					ns = strings.Trim(strings.TrimSpace(ns), "/")
					if !restNamespaceRe.MatchString(ns) {
						return fmt.Errorf("%q is not a REST namespace such as wp/v2", ns)
					}
					c.CacheREST = append(c.CacheREST, ns)
				}
				return nil
			}},
		{name: "cache-rest-mib", kind: kInt, def: "64", usage: "with cache-rest: the MiB its kept answers may hold together (bodies, headers and keys); an answer over an eighth of it, or over 1 MiB, is not kept",
			set: intSetter(1, func(c *Config) *int { return &c.CacheRESTMiB })},
		{name: "history-retention", def: "90d,10000", usage: "how long and how many entries a site's history of field groups and theme options keeps (age as 90d or 2160h, then a count; 0 for no bound of that kind), pruned by the leader; off keeps no history",
			set: func(c *Config, v string) error { return c.History.parse(v) }},
		{name: "webhook-urls", usage: "comma-separated URLs that get a signed POST naming what changed", redact: redactURLs,
			set: urlsSetter(func(c *Config) *[]*url.URL { return &c.WebhookURLs })},
		{name: "webhook-secret", secret: true, usage: "key of the webhooks' HMAC-SHA256 signature (required with webhook-urls)",
			set: strSetter(func(c *Config) *string { return &c.WebhookSecret })},
		{name: "purge-varnish", usage: "comma-separated Varnish URLs to purge after a change: by cache tag (xkey) and public route URL, as deploy/varnish/wpsidecar.vcl answers", redact: redactURLs,
			set: urlsSetter(func(c *Config) *[]*url.URL { return &c.Purge.Varnish })},
		{name: "purge-varnish-soft", kind: kBool, def: "false", usage: "purge Varnish softly (xkey-softpurge: stale objects may still be served while fetched again)",
			set: func(c *Config, v string) (err error) { c.Purge.VarnishSoft, err = parseBool(v); return err }},
		{name: "purge-nginx", usage: "comma-separated nginx URLs to send PURGE of changed public routes' URLs (ngx_cache_purge)", redact: redactURLs,
			set: urlsSetter(func(c *Config) *[]*url.URL { return &c.Purge.Nginx })},
		{name: "cloudflare-zone", usage: "Cloudflare zone id to purge after a change (by Cache-Tag, and public route URLs)",
			set: strSetter(func(c *Config) *string { return &c.Purge.CloudflareZone })},
		{name: "cloudflare-token", secret: true, usage: "Cloudflare API token with cache purge permission (required with cloudflare-zone)",
			set: strSetter(func(c *Config) *string { return &c.Purge.CloudflareToken })},
		{name: "cloudflare-api", redact: redactURLs, def: "https://api.cloudflare.com", usage: "Cloudflare API base URL",
			set: urlSetter(func(c *Config) **url.URL { return &c.Purge.CloudflareAPI })},
		{name: "fastly-service", usage: "Fastly service id to purge after a change (by surrogate key)",
			set: strSetter(func(c *Config) *string { return &c.Purge.FastlyService })},
		{name: "fastly-token", secret: true, usage: "Fastly API token with purge_select (required with fastly-service)",
			set: strSetter(func(c *Config) *string { return &c.Purge.FastlyToken })},
		{name: "fastly-api", redact: redactURLs, def: "https://api.fastly.com", usage: "Fastly API base URL",
			set: urlSetter(func(c *Config) **url.URL { return &c.Purge.FastlyAPI })},
		{name: "fastly-soft", kind: kBool, def: "false", usage: "purge Fastly softly (Fastly-Soft-Purge: objects marked stale, not removed)",
			set: func(c *Config, v string) (err error) { c.Purge.FastlySoft, err = parseBool(v); return err }},
		{name: "object-cache", def: "auto", usage: "the site's persistent object cache, whose stale keys the sidecar deletes after each write: redis (the Redis Object Cache drop-in's key names), none, or auto (redis when wp-content/object-cache.php is that drop-in or a redis-* setting is given, else none)",
			set: func(c *Config, v string) error {
				switch v {
				case "auto", "redis", "none":
					c.ObjectCache = v
					return nil
				}
				return fmt.Errorf("not auto, redis or none")
			}},
		{name: "redis-scheme", def: "tcp", wpConst: "WP_REDIS_SCHEME", usage: "tcp, tls or unix",
			set: func(c *Config, v string) error {
				switch strings.ToLower(v) {
				case "tcp", "tls", "unix":
					c.Redis.Scheme = strings.ToLower(v)
					return nil
				}
				return fmt.Errorf("not tcp, tls or unix")
			}},
		{name: "redis-host", def: "127.0.0.1", wpConst: "WP_REDIS_HOST", usage: "Redis host",
			set: strSetter(func(c *Config) *string { return &c.Redis.Host })},
		{name: "redis-port", kind: kInt, def: "6379", wpConst: "WP_REDIS_PORT", usage: "Redis port",
			set: intSetter(1, func(c *Config) *int { return &c.Redis.Port })},
		{name: "redis-path", wpConst: "WP_REDIS_PATH", usage: "Redis socket, with redis-scheme unix",
			set: strSetter(func(c *Config) *string { return &c.Redis.Path })},
		{name: "redis-username", wpConst: "WP_REDIS_USERNAME", usage: "Redis ACL user",
			set: strSetter(func(c *Config) *string { return &c.Redis.Username })},
		{name: "redis-password", secret: true, wpConst: "WP_REDIS_PASSWORD", usage: "Redis password",
			set: strSetter(func(c *Config) *string { return &c.Redis.Password })},
		{name: "redis-database", kind: kInt, def: "0", wpConst: "WP_REDIS_DATABASE", usage: "Redis database number",
			set: intSetter(0, func(c *Config) *int { return &c.Redis.Database })},
		{name: "redis-timeout", def: "1", wpConst: "WP_REDIS_TIMEOUT", usage: "Redis connect, read and write timeout: seconds, as the drop-in reads it, or a duration",
			set: func(c *Config, v string) error {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					if f <= 0 || f > 3600 {
						return fmt.Errorf("must be positive and at most 3600 seconds")
					}
					c.Redis.Timeout = time.Duration(f * float64(time.Second))
					return nil
				}
				d, err := dur(v)
				c.Redis.Timeout = d
				return err
			}},
		{name: "redis-prefix", wpEnv: "WP_REDIS_PREFIX", wpConst: "WP_REDIS_PREFIX", usage: "salt the drop-in puts before every key",
			set: func(c *Config, v string) error { c.Redis.Prefix, c.Redis.PrefixSet = v, true; return nil }},
		{name: "cache-key-salt", wpConst: "WP_CACHE_KEY_SALT", usage: "the key salt when redis-prefix is not set, as the drop-in reads it",
			set: strSetter(func(c *Config) *string { return &c.Redis.CacheKeySalt })},
		{name: "settings-refresh", kind: kDuration, def: DefaultSettingsRefresh.String(), usage: "how often site settings (permalinks, URLs, time zone) are re-read",
			set: durSetter(func(c *Config) *time.Duration { return &c.SettingsRefresh })},
		{name: "db-host", def: DefaultDBHost, wpEnv: "WORDPRESS_DB_HOST", wpConst: "DB_HOST", usage: "database host, in any DB_HOST form",
			set: strSetter(func(c *Config) *string { return &c.DB.Host })},
		{name: "db-user", wpEnv: "WORDPRESS_DB_USER", wpConst: "DB_USER", usage: "database user",
			set: strSetter(func(c *Config) *string { return &c.DB.User })},
		{name: "db-password", secret: true, wpEnv: "WORDPRESS_DB_PASSWORD", wpConst: "DB_PASSWORD", usage: "database password",
			set: strSetter(func(c *Config) *string { return &c.DB.Password })},
		{name: "db-name", def: DefaultDBName, wpEnv: "WORDPRESS_DB_NAME", wpConst: "DB_NAME", usage: "database name",
			set: strSetter(func(c *Config) *string { return &c.DB.Name })},
		{name: "db-charset", def: DefaultDBCharset, wpEnv: "WORDPRESS_DB_CHARSET", wpConst: "DB_CHARSET", usage: "connection character set (utf8 is read as utf8mb4, as WordPress does)",
			set: strSetter(func(c *Config) *string { return &c.DB.Charset })},
		{name: "db-collate", wpEnv: "WORDPRESS_DB_COLLATE", wpConst: "DB_COLLATE", usage: "connection collation (empty: utf8mb4_unicode_520_ci)",
			set: strSetter(func(c *Config) *string { return &c.DB.Collate })},
		{name: "db-tls", usage: "TLS to the database, as the MySQL client's --ssl-mode: disabled, preferred, required, verify-ca or verify-identity; unset: what wp-config.php's MYSQL_CLIENT_FLAGS and MYSQL_SSL_CA tell PHP (no TLS when they say nothing)",
			set: func(c *Config, v string) error {
				if !slices.Contains(dbTLSModes, v) {
					return fmt.Errorf("not one of %s", strings.Join(dbTLSModes, ", "))
				}
				c.DB.TLS.Mode = v
				return nil
			}},
		{name: "db-tls-ca", wpConst: "MYSQL_SSL_CA", usage: "PEM file of the CA that signed the database server's certificate (verify-ca, verify-identity; empty: the system's CAs)",
			set: strSetter(func(c *Config) *string { return &c.DB.TLS.CA })},
		{name: "db-tls-cert", wpConst: "MYSQL_SSL_CERT", usage: "PEM client certificate for the database, when it asks for one (with db-tls-key)",
			set: strSetter(func(c *Config) *string { return &c.DB.TLS.Cert })},
		{name: "db-tls-key", wpConst: "MYSQL_SSL_KEY", usage: "PEM private key of db-tls-cert",
			set: strSetter(func(c *Config) *string { return &c.DB.TLS.Key })},
		{name: "db-client-flags", kind: kInt, def: "0", wpConst: "MYSQL_CLIENT_FLAGS", usage: "MySQL client flags as wp-config.php gives PHP (MYSQLI_CLIENT_SSL 2048, MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT 64, MYSQLI_CLIENT_SSL_VERIFY_SERVER_CERT 1073741824): where db-tls comes from when unset",
			set: intSetter(0, func(c *Config) *int { return &c.DB.ClientFlags })},
		{name: "db-socket", def: DefaultMySQLSocket, usage: "local socket used when the database host is \"localhost\" without a port",
			set: strSetter(func(c *Config) *string { return &c.DB.Socket })},
		{name: "db-max-open", kind: kInt, def: strconv.Itoa(DefaultDBMaxOpen), usage: "most open database connections",
			set: intSetter(1, func(c *Config) *int { return &c.DB.MaxOpen })},
		{name: "db-max-wait", kind: kDuration, def: DefaultDBMaxWait.String(), usage: "longest a request waits for one of the db-max-open connections; longer, and it is answered 503 wpsidecar_busy with Retry-After (counted in wpsidecar_db_wait_refused_total) instead of queueing; 0 waits without bound",
			set: durSetter(func(c *Config) *time.Duration { return &c.DB.MaxWait })},
		{name: "db-replica", secret: true, repeat: true, usage: "a read replica, user:password@tcp(host:port)/dbname (user, password and database default to the primary's); repeat the flag for more, or give several separated by spaces or lines; GETs read from one that lags at most max-replica-lag",
			set: func(c *Config, v string) error {
				c.DB.Replicas = nil
				for _, dsn := range strings.Fields(v) {
					dc, err := mysql.ParseDSN(dsn)
					if err != nil || dc.Net != "tcp" {
						return fmt.Errorf("not a DSN such as user:password@tcp(host:3306)/dbname")
					}
					c.DB.Replicas = append(c.DB.Replicas, dc)
				}
				return nil
			}},
		{name: "max-replica-lag", kind: kDuration, def: DefaultMaxReplicaLag.String(), usage: "how far behind the primary a replica may be and still serve reads (measured by GTID position)",
			set: durSetter(func(c *Config) *time.Duration { return &c.DB.MaxReplicaLag })},
		{name: "db-timeout", kind: kDuration, def: DefaultDBTimeout.String(), usage: "database connect, read and write timeout",
			set: durSetter(func(c *Config) *time.Duration { return &c.DB.Timeout })},
		{name: "table-prefix", def: DefaultTablePrefix, wpEnv: "WORDPRESS_TABLE_PREFIX", wpConst: "$table_prefix", usage: "WordPress table prefix",
			set: strSetter(func(c *Config) *string { return &c.TablePrefix })},
	}
	for _, k := range KeyNames {
		s = append(s, keySetting(k))
	}
	s = append(s,
		setting{name: "environment-type", def: DefaultEnvironmentType, wpEnv: "WP_ENVIRONMENT_TYPE", wpConst: "WP_ENVIRONMENT_TYPE", usage: "local, development, staging or production, as WordPress's wp_get_environment_type()",
			set: strSetter(func(c *Config) *string { return &c.EnvironmentType })},
		setting{name: "multisite", kind: kBool, def: "false", wpConst: "MULTISITE", usage: "the site is a multisite network",
			set: func(c *Config, v string) (err error) { c.Multisite, err = parseBool(v); return err }},
		setting{name: "subdomain-install", kind: kBool, def: "false", wpConst: "SUBDOMAIN_INSTALL", usage: "the network's sites are subdomains (with multisite)",
			set: func(c *Config, v string) (err error) { c.Network.Subdomain, err = parseBool(v); return err }},
		setting{name: "domain-current-site", wpConst: "DOMAIN_CURRENT_SITE", usage: "the network's domain, as wp-config.php declares it (with multisite)",
			set: strSetter(func(c *Config) *string { return &c.Network.Domain })},
		setting{name: "path-current-site", wpConst: "PATH_CURRENT_SITE", usage: "the network's path, as wp-config.php declares it (with multisite)",
			set: strSetter(func(c *Config) *string { return &c.Network.Path })},
		setting{name: "site-id-current-site", kind: kInt, def: "1", wpConst: "SITE_ID_CURRENT_SITE", usage: "the network's id, as wp-config.php declares it (with multisite)",
			set: intSetter(1, func(c *Config) *int { return &c.Network.ID })},
		setting{name: "home-url", wpConst: "WP_HOME", usage: "overrides the home option, as the WP_HOME constant does",
			set: strSetter(func(c *Config) *string { return &c.HomeURL })},
		setting{name: "site-url", wpConst: "WP_SITEURL", usage: "overrides the siteurl option, as the WP_SITEURL constant does",
			set: strSetter(func(c *Config) *string { return &c.SiteURL })},
		setting{name: "basic-auth-passwords", kind: kBool, def: "false", usage: "accept HTTP Basic with the account's login password (what the Basic-Auth plugin adds); application passwords need no switch",
			set: func(c *Config, v string) (err error) { c.BasicAuthPasswords, err = parseBool(v); return err }},
		setting{name: "auth-fail-limit-ip", def: "30/10m", usage: "failed Basic authentications a client address (IPv6: its /64) may make: N at once, refilled at N per DURATION; then 429 until a try is refilled; 0 turns it off",
			set: rateSetter(func(c *Config) *Rate { return &c.AuthFailLimitIP })},
		setting{name: "auth-fail-limit-account", def: "60/1h", usage: "failed Basic authentications for one login or e-mail, from all clients together, as N/DURATION; then only credentials verified before are accepted; 0 turns it off",
			set: rateSetter(func(c *Config) *Rate { return &c.AuthFailLimitAccount })},
		setting{name: "public-routes", usage: "public routes file: chosen theme options and field groups served without credentials, cacheable by CDNs (docs/api.md §9); reloaded on SIGHUP or change",
			set: strSetter(func(c *Config) *string { return &c.PublicRoutes })},
		setting{name: "compress", kind: kBool, def: "true", usage: "code the sidecar's own answers of 1 KiB or more with br, zstd or gzip as the client's Accept-Encoding allows (docs/caching.md); what PHP answers passes untouched either way",
			set: func(c *Config, v string) (err error) { c.Compress, err = parseBool(v); return err }},
		setting{name: "companion-secret", secret: true, wpConst: "WPSIDECAR_COMPANION_SECRET", usage: "secret shared with the companion plugin (wordpress/wpsidecar-companion.php): failed Basic authentications are reported to it, signed, so that PHP fires wp_login_failed and application_password_failed_authentication",
			set: strSetter(func(c *Config) *string { return &c.CompanionSecret })},
		setting{name: "pprof", kind: kBool, def: "false", usage: "serve Go's profiles at /debug/pprof/ on the admin listener",
			set: func(c *Config, v string) (err error) { c.Pprof, err = parseBool(v); return err }},
		setting{name: "max-procs", kind: kInt, def: "0", usage: "CPUs the sidecar may use at once (GOMAXPROCS); 0: half of what Go would use, at least one, so PHP on the same host keeps the rest; the GOMAXPROCS variable, when set, wins",
			set: intSetter(0, func(c *Config) *int { return &c.MaxProcs })},
		setting{name: "log-level", def: DefaultLogLevel, usage: "debug, info, warn or error",
			set: strSetter(func(c *Config) *string { return &c.LogLevel })},
		setting{name: "access-log", def: "all", usage: "which requests get an access line: all, errors (status 500 and above), off, or a sample rate between 0 and 1 (e.g. 0.01, of every answer alike)",
			set: func(c *Config, v string) error {
				switch v {
				case "all":
					c.AccessLogSample = 1
				case "errors":
					c.AccessLogSample = AccessLogErrors
				case "off":
					c.AccessLogSample = AccessLogOff
				default:
					r, err := strconv.ParseFloat(v, 64)
					if err != nil || !(r > 0 && r <= 1) {
						return fmt.Errorf("not all, errors, off, or a rate between 0 and 1")
					}
					c.AccessLogSample = r
				}
				return nil
			}},
		setting{name: "log-format", def: DefaultLogFormat, usage: "json, or console for people",
			set: strSetter(func(c *Config) *string { return &c.LogFormat })},
	)
	return s
}()

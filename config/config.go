// Package config holds the sidecar's configuration: one typed Config, the
// table of settings it is made from, and Load, which reads flags,
// WPSIDECAR_* variables, the official WordPress image's WORDPRESS_* variables
// and wp-config.php, in that order of precedence. Reading wp-config.php
// and what it includes is package wpconfig's.
package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/wpsidecar/wpsidecar/config/wpconfig"
)

// Named defaults.
const (
	DefaultListen            = ":8080"
	DefaultAdminListen       = "127.0.0.1:9090"
	DefaultUpstreamTimeout   = 60 * time.Second
	DefaultUpstreamDial      = 5 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout       = 5 * time.Minute
	DefaultIdleTimeout       = 120 * time.Second
	DefaultShutdownTimeout   = 30 * time.Second
	DefaultShutdownDelay     = 5 * time.Second
	DefaultSettingsRefresh   = 2 * time.Second
	DefaultChangeInterval    = 2 * time.Second
	DefaultMaxStaleness      = 250 * time.Millisecond
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultDBHost            = "localhost"
	DefaultDBName            = "wordpress"
	DefaultDBCharset         = "utf8mb4"
	DefaultTablePrefix       = "wp_"
	DefaultMySQLSocket       = "/run/mysqld/mysqld.sock"
	DefaultDBMaxOpen         = 16
	DefaultDBMaxWait         = time.Second
	DefaultDBTimeout         = 5 * time.Second
	DefaultMaxReplicaLag     = time.Second
	DefaultLogLevel          = "info"
	DefaultLogFormat         = "json"
	DefaultEnvironmentType   = "production"
	// DefaultFieldmgrTableSuffix is appended to the table prefix when no
	// field-group table name is configured.
	DefaultFieldmgrTableSuffix = "fieldmgr_groups"
)

// KeyNames are WordPress's eight authentication keys and salts, in
// wp-config-sample.php order.
var KeyNames = []string{
	"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY",
	"AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT",
}

// Config is the sidecar's effective configuration.
type Config struct {
	Listen      string
	AdminListen string
	Upstream    *url.URL
	TLSCert     string
	TLSKey      string

	TrustedProxies    []netip.Prefix
	UpstreamTimeout   time.Duration // time to the upstream's response headers
	UpstreamDial      time.Duration
	ReadHeaderTimeout time.Duration
	BodyTimeout       time.Duration // time to read a request body
	IdleTimeout       time.Duration
	ShutdownTimeout   time.Duration
	// ShutdownDelay is the lame-duck phase after SIGTERM: /readyz fails,
	// answers close their connections, the listener still accepts.
	ShutdownDelay  time.Duration
	MaxHeaderBytes int

	WPConfigPath    string
	ThemeoptsConfig string
	// ThemeoptsSites are sites of a network with a theme options
	// configuration of their own; the others use ThemeoptsConfig.
	ThemeoptsSites []ThemeoptsSite
	// FieldmgrTable is the field-group table; on a network, site N's is
	// the same name with the site's prefix ({base}N_…).
	FieldmgrTable   string
	SettingsRefresh time.Duration
	// ChangeInterval is how often stored data is checked for changes when
	// there are WebhookURLs to tell, signed with WebhookSecret.
	ChangeInterval time.Duration
	WebhookURLs    []*url.URL
	WebhookSecret  string
	// ChangeFeed is auto, poll or binlog; BinlogDSN (nil: the database
	// settings) and BinlogServerID (0: random) configure the binlog feed.
	ChangeFeed     string
	BinlogDSN      *mysql.Config
	BinlogServerID int
	// ServeFromFeed answers GETs from memory while the binlog feed is
	// current within MaxStaleness (docs/api.md §5). serve-from-feed auto
	// (serveFromFeedAuto) makes it true whenever a binlog feed may run.
	ServeFromFeed     bool
	serveFromFeedAuto bool
	MaxStaleness      time.Duration
	// ExactReads: a GET answered from memory (serve-from-feed, the REST
	// cache) first waits until the feed has applied what the server had
	// committed when it came (changes.Feed.Sync); false: it is answered
	// as the feed stood, current within MaxStaleness.
	ExactReads bool
	// CacheREST are the REST namespaces whose PHP answers to anonymous
	// reads are kept while the binlog feed vouches for them
	// (--cache-rest; none: off), in at most CacheRESTMiB MiB.
	CacheREST    []string
	CacheRESTMiB int
	// History is what the history of field groups and theme options
	// keeps (docs/api.md §12).
	History History

	// command: loaded for a command that serves nothing (LoadCommand);
	// offline: for one that reaches no database either.
	command, offline bool
	// Purge names the caches to purge after a change.
	Purge Purge
	// ObjectCache is "redis" or "none" once loaded ("auto" is resolved).
	ObjectCache string
	Redis       Redis

	DB DB

	TablePrefix     string
	Keys            map[string]string // only the keys and salts that were set
	EnvironmentType string
	Multisite       bool
	// Network is how wp-config.php declares a multisite network.
	Network Network
	HomeURL string // WP_HOME, overrides the home option when set
	SiteURL string // WP_SITEURL, overrides the siteurl option when set

	// BasicAuthPasswords accepts HTTP Basic with account passwords.
	BasicAuthPasswords bool

	// AuthFailLimitIP and AuthFailLimitAccount throttle failed Basic
	// authentication per client address and per account.
	AuthFailLimitIP, AuthFailLimitAccount Rate
	// PublicRoutes is the public routes file ("": none).
	PublicRoutes string
	// Compress codes the sidecar's own answers with br, zstd or gzip as
	// the client accepts (--compress).
	Compress bool
	// CompanionSecret signs failure reports to the companion plugin.
	CompanionSecret string
	// Pprof serves /debug/pprof/ on the admin listener.
	Pprof bool
	// MaxProcs is the sidecar's GOMAXPROCS; 0 means half the default.
	MaxProcs int

	LogLevel  string
	LogFormat string
	// AccessLogSample is the share of requests that get an access line:
	// 1 all, a rate in between, or AccessLogErrors, or AccessLogOff.
	AccessLogSample float64

	// Warnings are problems worth logging that do not stop the sidecar.
	Warnings []string

	sources map[string]resolved // setting name -> its value and where it came from
}

type resolved struct{ value, source string }

// Redis is the object cache's server, with the drop-in's key salt.
type Redis struct {
	Scheme, Host string
	Port         int
	Path         string
	Username     string
	Password     string
	Database     int
	Timeout      time.Duration
	Prefix       string // WP_REDIS_PREFIX
	PrefixSet    bool
	CacheKeySalt string // WP_CACHE_KEY_SALT
}

// Salt is what the drop-in puts before every key: WP_REDIS_PREFIX, else
// WP_CACHE_KEY_SALT.
func (r Redis) Salt() string {
	if r.PrefixSet {
		return r.Prefix
	}
	return r.CacheKeySalt
}

// DB is where WordPress's database is and how to reach it.
type DB struct {
	Host     string // DB_HOST as WordPress reads it
	User     string
	Password string
	Name     string
	Charset  string
	Collate  string
	Socket   string // the local socket "localhost" means
	MaxOpen  int
	MaxWait  time.Duration
	Timeout  time.Duration
	// Replicas are read replicas (user, password and database default to
	// the primary's); one that lags more than MaxReplicaLag is not read.
	Replicas      []*mysql.Config
	MaxReplicaLag time.Duration
	// TLS is how every connection to the database is encrypted (the
	// primary, the replicas, the binlog feed's); ClientFlags is
	// MYSQL_CLIENT_FLAGS, what PHP's connection is told, from which the
	// mode comes when none is given (see deriveTLS).
	TLS         DBTLS
	ClientFlags int
}

// DBTLS is a TLS mode (store.TLSModes: disabled, preferred, required,
// verify-ca, verify-identity), the CA file to verify the server with, and
// a client certificate and key; the same fields as store.TLS.
type DBTLS struct {
	Mode, CA, Cert, Key string
}

// Access log settings other than a rate (Config.AccessLogSample).
const (
	AccessLogErrors = -1 // only answers of status 500 and above
	AccessLogOff    = -2
)

// ThemeoptsSite is a site's own theme options configuration file. Site
// is a blog id, a domain, or a domain and path ("example.com/blog/"), in
// lower case.
type ThemeoptsSite struct{ Site, File string }

// Network is a multisite network's wp-config.php constants: SUBDOMAIN_INSTALL,
// and DOMAIN_CURRENT_SITE, PATH_CURRENT_SITE and SITE_ID_CURRENT_SITE
// (declared when the first two are set).
type Network struct {
	Subdomain    bool
	Domain, Path string
	ID           int
}

// Address turns DB_HOST into a go-sql-driver network and address the way
// PHP's mysqli would connect: a socket path wins, "localhost" without a port
// is the local socket, a missing port is 3306.
func (d DB) Address() (network, addr string) {
	h := wpconfig.ParseDBHost(d.Host)
	switch {
	case h.Socket != "":
		return "unix", h.Socket
	case (h.Host == "localhost" || h.Host == "") && h.Port == 0:
		return "unix", d.Socket
	}
	port := h.Port
	if port == 0 {
		port = 3306
	}
	return "tcp", net.JoinHostPort(h.Host, strconv.Itoa(port))
}

// Purge are the caches the sidecar purges after a change.
type Purge struct {
	Varnish                         []*url.URL
	VarnishSoft                     bool
	Nginx                           []*url.URL
	CloudflareZone, CloudflareToken string
	CloudflareAPI                   *url.URL
	FastlyService, FastlyToken      string
	FastlyAPI                       *url.URL
	FastlySoft                      bool
}

// Any tells whether a cache is to be purged.
func (p Purge) Any() bool {
	return len(p.Varnish) > 0 || len(p.Nginx) > 0 || p.CloudflareZone != "" || p.FastlyService != ""
}

// History bounds the history of field groups and theme options: entries
// older than MaxAge, and beyond the newest MaxCount, are pruned (zero: no
// bound of that kind). Off: none is kept.
type History struct {
	Off      bool
	MaxAge   time.Duration
	MaxCount int
}

// parse reads "off", or "AGE,COUNT" (either may be 0), AGE in days ("90d")
// or as a Go duration.
func (h *History) parse(v string) error {
	if strings.TrimSpace(v) == "off" {
		*h = History{Off: true}
		return nil
	}
	age, count, ok := strings.Cut(v, ",")
	if !ok {
		return fmt.Errorf("not off or AGE,COUNT (e.g. 90d,10000)")
	}
	age, count = strings.TrimSpace(age), strings.TrimSpace(count)
	var d time.Duration
	if days, ok := strings.CutSuffix(age, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 36500 {
			return fmt.Errorf("age %q: not a number of days", age)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else if age != "0" {
		var err error
		if d, err = time.ParseDuration(age); err != nil || d < 0 {
			return fmt.Errorf("age %q: not 90d or a duration such as 2160h", age)
		}
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 {
		return fmt.Errorf("count %q: not a whole number", count)
	}
	*h = History{MaxAge: d, MaxCount: n}
	return nil
}

package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// SiteSettings is a snapshot of the options the sidecar consults on every
// request. It is re-read every few seconds, not per request.
type SiteSettings struct {
	SiteURL            string
	Home               string
	PermalinkStructure string
	TimezoneString     string
	GMTOffset          string
	DBVersion          int64
	// UserRoles is {prefix}user_roles, serialized as stored.
	UserRoles string
	// UsingAppPasswords is the using_application_passwords flag WordPress
	// sets when the first application password is made.
	UsingAppPasswords bool
	// Companion is the wpsidecar_companion option as stored: what the
	// companion plugin publishes of PHP's authentication decisions (JSON),
	// or "" without the plugin.
	Companion string
	// SaltOptions are the keys and salts stored as options ("logged_in_key",
	// …), WordPress's fallback for unusable wp-config.php constants (network
	// options on a multisite).
	SaltOptions map[string]string
	// Multisite only: the network's siteurl as stored (COOKIEHASH is made
	// from it, trailing slash and all) and its site_admins option.
	Multisite      bool
	NetworkSiteURL string
	SiteAdmins     string
	HasSiteAdmins  bool
	// ReadAt is when these settings were first read: a refresh that
	// finds the same keeps the snapshot (and its time).
	ReadAt time.Time
}

// LocalTime is WordPress's current_time('mysql'): now in the site's time
// zone (timezone_string, else the gmt_offset in hours, else UTC), as
// "YYYY-MM-DD HH:MM:SS".
func (s SiteSettings) LocalTime(now time.Time) string {
	if s.TimezoneString != "" {
		if loc, err := time.LoadLocation(s.TimezoneString); err == nil {
			return now.In(loc).Format(time.DateTime)
		}
	}
	if h, err := strconv.ParseFloat(strings.TrimSpace(s.GMTOffset), 64); err == nil && h != 0 {
		return now.In(time.FixedZone("", int(h*3600))).Format(time.DateTime)
	}
	return now.UTC().Format(time.DateTime)
}

// PlainPermalinks tells whether the site uses plain permalinks, under which
// /wp-json/ is not the REST API.
func (s SiteSettings) PlainPermalinks() bool { return s.PermalinkStructure == "" }

// CompanionOption is the option the companion plugin
// (wordpress/wpsidecar-companion.php) publishes its decisions in.
const CompanionOption = "wpsidecar_companion"

// saltOptionNames are the options WordPress keeps keys and salts in.
var saltOptionNames = []string{
	"auth_key", "auth_salt", "secure_auth_key", "secure_auth_salt",
	"logged_in_key", "logged_in_salt", "nonce_key", "nonce_salt",
}

// siteOptionNames are read in one query per refresh.
func (db *DB) siteOptionNames() []string {
	return append([]string{"siteurl", "home", "permalink_structure", "timezone_string", "gmt_offset",
		"db_version", db.Table("user_roles"), "using_application_passwords", CompanionOption}, saltOptionNames...)
}

// ReadSiteSettings reads the snapshot's options in one query. overrides
// replace home and siteurl when set, as the WP_HOME and WP_SITEURL constants
// do in WordPress.
func (db *DB) ReadSiteSettings(ctx context.Context, overrides SiteURLs) (SiteSettings, error) {
	m, err := db.Options(ctx, db.siteOptionNames()...)
	if err != nil {
		return SiteSettings{}, err
	}
	if _, ok := m["siteurl"]; !ok {
		return SiteSettings{}, fmt.Errorf("store: %s has no siteurl option: is WordPress installed with this table prefix?", db.Table("options"))
	}
	s := SiteSettings{
		SiteURL:            m["siteurl"],
		Home:               m["home"],
		PermalinkStructure: m["permalink_structure"],
		TimezoneString:     m["timezone_string"],
		GMTOffset:          m["gmt_offset"],
		UserRoles:          m[db.Table("user_roles")],
		UsingAppPasswords:  truthyOption(m["using_application_passwords"]),
		Companion:          m[CompanionOption],
		SaltOptions:        map[string]string{},
		ReadAt:             time.Now(),
	}
	s.DBVersion, _ = strconv.ParseInt(m["db_version"], 10, 64)
	if db.multisite {
		// Network options: site options of the main network.
		if m, err = db.networkOptions(ctx, append([]string{"siteurl", "site_admins", "using_application_passwords"}, saltOptionNames...)...); err != nil {
			return SiteSettings{}, err
		}
		s.Multisite = true
		s.NetworkSiteURL = m["siteurl"]
		s.SiteAdmins, s.HasSiteAdmins = m["site_admins"]
		s.UsingAppPasswords = truthyOption(m["using_application_passwords"])
	}
	for _, n := range saltOptionNames {
		if v := m[n]; v != "" {
			s.SaltOptions[n] = v
		}
	}
	if overrides.Home != "" {
		s.Home = optionFilter("home", overrides.Home)
	}
	if overrides.SiteURL != "" {
		s.SiteURL = optionFilter("siteurl", overrides.SiteURL)
	}
	return s, nil
}

// UsingApplicationPasswords reads the using_application_passwords flag as
// it is now (a network option on a multisite network).
func (db *DB) UsingApplicationPasswords(ctx context.Context) (bool, error) {
	const name = "using_application_passwords"
	read := db.Options
	if db.multisite {
		read = db.networkOptions
	}
	m, err := read(ctx, name)
	if err != nil {
		return false, err
	}
	return truthyOption(m[name]), nil
}

// networkOptions reads network options of network 1 from sitemeta; the
// first row of a key wins, as get_network_option reads it.
func (db *DB) networkOptions(ctx context.Context, names ...string) (map[string]string, error) {
	args := []any{}
	for _, n := range names {
		args = append(args, n)
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT meta_key, meta_value FROM "+db.Table("sitemeta")+
		" WHERE site_id = 1 AND meta_key IN (?"+strings.Repeat(",?", len(names)-1)+") ORDER BY meta_id", args...)
	if err != nil {
		return nil, fmt.Errorf("store: network options: %w", classify(err))
	}
	return pairs(rows, "network options")
}

// truthyOption is PHP's truthiness of an option as stored: "", "0" and a
// serialized false or empty value are false.
func truthyOption(v string) bool {
	switch v {
	case "", "0", "b:0;", "s:0:\"\";", "a:0:{}", "N;":
		return false
	}
	return true
}

// SiteURLs are the WP_HOME and WP_SITEURL constants, when defined.
type SiteURLs struct{ Home, SiteURL string }

// Settings gives the current site settings snapshot: what the namespaces
// and authentication are given (a SettingsWatcher, or a test's stand-in).
type Settings interface {
	Current() (SiteSettings, error)
}

// Home and DBVersion read one field of s's current settings each, as a
// route's registration asks for them (wpjson.RouteInfo).
func Home(s Settings) func() (string, error) {
	return func() (string, error) { st, err := s.Current(); return st.Home, err }
}

// DBVersion: see Home.
func DBVersion(s Settings) func() (int64, error) {
	return func() (int64, error) { st, err := s.Current(); return st.DBVersion, err }
}

// SettingsWatcher keeps the current SiteSettings and whether the database
// answered at the last refresh.
type SettingsWatcher struct {
	db        *DB
	overrides SiteURLs
	every     time.Duration
	names     []string // db.siteOptionNames()
	current   atomic.Pointer[SiteSettings]
	lastErr   atomic.Pointer[error]
	// While the database is marked down, a request may try it itself:
	// one try in flight (trying), at most one every requestTryEvery
	// (lastTry, unix nanoseconds).
	trying  atomic.Bool
	lastTry atomic.Int64
	// network is the number of sites found in {prefix}blogs when the
	// configuration says single site (0: none, or not looked yet).
	network atomic.Int64
}

// requestTryEvery spaces the tries requests make while the database is
// down; requestTryTimeout bounds the one request that makes a try.
const (
	requestTryEvery   = 250 * time.Millisecond
	requestTryTimeout = time.Second
)

// NewSettingsWatcher returns a watcher that has read nothing yet: until its
// first successful read, Current answers ErrUnavailable.
func NewSettingsWatcher(db *DB, every time.Duration, overrides SiteURLs) *SettingsWatcher {
	w := &SettingsWatcher{db: db, overrides: overrides, every: every, names: db.siteOptionNames()}
	err := fmt.Errorf("%w: site settings not read yet", ErrUnavailable)
	w.lastErr.Store(&err)
	return w
}

// Options are the options the snapshot is read from: a change feed reads
// it again when one of them is written.
func (w *SettingsWatcher) Options() []string { return w.names }

// Current returns the latest snapshot, or ErrUnavailable while the database
// did not answer the last refresh (the sidecar's own routes then answer 503
// at once instead of each waiting for the database to time out). Meanwhile
// one request at a time, at most every 250 ms, reads the settings itself:
// its success clears the state for everyone, so that the routes recover
// the moment the database does, not at Run's next backoff.
func (w *SettingsWatcher) Current() (SiteSettings, error) {
	if e := w.lastErr.Load(); e != nil {
		if !w.tryNow() {
			return SiteSettings{}, *e
		}
	}
	return *w.current.Load(), nil
}

// tryNow is a request's try of the database while it is marked down:
// false when another try is in flight or one was made less than
// requestTryEvery ago, or when this one failed.
func (w *SettingsWatcher) tryNow() bool {
	now := time.Now().UnixNano()
	last := w.lastTry.Load()
	if now-last < int64(requestTryEvery) || !w.lastTry.CompareAndSwap(last, now) {
		return false
	}
	if !w.trying.CompareAndSwap(false, true) {
		return false
	}
	defer w.trying.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), requestTryTimeout)
	defer cancel()
	if w.Refresh(ctx) != nil {
		return false
	}
	w.db.log.Info().Msg("database ready again (a request's try); site settings read")
	return true
}

// Refresh reads the settings once.
func (w *SettingsWatcher) Refresh(ctx context.Context) error {
	s, err := w.db.ReadSiteSettings(ctx, w.overrides)
	if err != nil {
		if !errors.Is(err, ErrUnavailable) {
			err = fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		w.lastErr.Store(&err)
		return err
	}
	switch old := w.current.Load(); {
	case old == nil:
		w.current.Store(&s)
	case !sameSettings(*old, s):
		// What was built from the old snapshot (prepared answers) goes:
		// not every setting is an option the change feed follows (a
		// network's are site meta).
		w.current.Store(&s)
		w.db.memo.Forget(Changed{})
	}
	w.lastErr.Store(nil)
	return nil
}

// sameSettings tells whether two snapshots hold the same settings, when
// they were read aside: an unchanged snapshot stays in force, read at the
// time it was first read.
func sameSettings(a, b SiteSettings) bool {
	a.ReadAt, b.ReadAt = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

// Run refreshes until ctx ends: with backoff (250ms doubling to 5s, each
// try logged) while the database does not answer, then every interval.
// Changes of availability are logged once.
func (w *SettingsWatcher) Run(ctx context.Context) {
	log := w.db.log
	delay := 250 * time.Millisecond
	healthy := false
	for try := 1; ; try++ {
		err := w.Refresh(ctx)
		if ctx.Err() != nil {
			return
		}
		next := w.every
		switch {
		case err == nil && !healthy:
			s, _ := w.Current()
			log.Info().Int("try", try).Str("siteurl", s.SiteURL).Bool("plain_permalinks", s.PlainPermalinks()).Msg("database ready; site settings read")
			w.checkNetwork(ctx)
			healthy, delay = true, 250*time.Millisecond
		case err != nil:
			log.Warn().Int("try", try).Dur("retry_in", delay).Err(err).Msg("database not available; sidecar routes answer 503")
			healthy, next = false, delay
			delay = min(delay*2, 5*time.Second)
		default:
			try = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(next):
		}
	}
}

// checkNetwork looks, on a sidecar configured for a single site, whether
// the database holds a network: then every site but the main one goes to
// PHP, which is safe but offloads nothing, and the person starting the
// sidecar should know.
func (w *SettingsWatcher) checkNetwork(ctx context.Context) {
	if w.db.multisite {
		return
	}
	n, err := w.db.NetworkSites(ctx)
	if err != nil {
		w.db.log.Warn().Err(err).Msg("could not look whether the database holds a network")
		return
	}
	w.network.Store(n)
	if n > 1 {
		w.db.log.Warn().Int64("sites", n).Str("table", w.db.base+"blogs").
			Msg("the database holds a multisite network but the configuration read says single site: only the main site is served, every other site's requests go to PHP; pass --multisite (and --subdomain-install for a subdomain network), or point --wp-config at the file that defines MULTISITE")
	}
}

// UndeclaredNetwork is the number of sites of a network the database
// holds while the configuration says single site; 0 when that is not so.
func (w *SettingsWatcher) UndeclaredNetwork() int64 {
	if n := w.network.Load(); n > 1 {
		return n
	}
	return 0
}

package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/changes"
	"github.com/wpsidecar/wpsidecar/changes/delivery"
	"github.com/wpsidecar/wpsidecar/cmd/command"
	"github.com/wpsidecar/wpsidecar/cmd/namespaces"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/internal/limits"
	"github.com/wpsidecar/wpsidecar/internal/logging"
	"github.com/wpsidecar/wpsidecar/internal/redact"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/store/objcache"
	"github.com/wpsidecar/wpsidecar/web/module"
	"github.com/wpsidecar/wpsidecar/web/openapi"
	"github.com/wpsidecar/wpsidecar/web/proxy"
	"github.com/wpsidecar/wpsidecar/web/rest"
	"github.com/wpsidecar/wpsidecar/web/restcache"
	"github.com/wpsidecar/wpsidecar/web/site"
	"github.com/wpsidecar/wpsidecar/web/themeopts"
)

// run reads the configuration, builds everything, serves until ctx ends and
// then drains in-flight requests. listening, when not nil, is told the
// bound addresses (tests listen on port 0).
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer, listening func(public, admin net.Addr)) error {
	if len(args) > 0 && command.Is(args[0]) {
		return command.Run(ctx, args[0], args[1:], commandSettings(environ), command.Env{Stdout: stdout, Stderr: stderr})
	}
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version") {
		fmt.Fprintln(stdout, versionLine())
		return nil
	}
	cfg, checkConfig, err := config.Load(args, environ, stderr)
	if errors.Is(err, config.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if checkConfig {
		cfg.Print(stdout)
		checkRESTCache(cfg, stdout)
		if cfg.ChangeFeed != changes.ModePoll {
			return checkFeed(ctx, cfg, stdout)
		}
		return nil
	}
	logOut := logging.NewBuffer(stdout, logging.FlushEvery)
	defer logOut.Close()
	logger, collapse := logging.New(cfg.LogLevel, cfg.LogFormat, logOut)
	defer collapse.Close() // before logOut's

	for _, w := range cfg.Warnings {
		logger.Warn().Msg(w)
	}
	procs := limits.SetMaxProcs(cfg.MaxProcs, environ)
	gc := limits.SetGCPercent(environ)
	logger.Info().Int("gomaxprocs", procs).Int("cpus", runtime.NumCPU()).Int("gogc", gc).Int64("memory_limit", debug.SetMemoryLimit(-1)).Msg("CPU and memory limits")

	s := &sidecar{cfg: cfg, logger: logger}
	defer s.close()
	if err := s.open(ctx); err != nil {
		return err
	}
	if err := s.buildSites(ctx); err != nil {
		return err
	}
	s.detectChanges(ctx)
	// Registered before serving, so that no SIGHUP can end the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	s.background(func(ctx context.Context) { reloadOnHangup(ctx, hup, s.reloads, logger) })
	public, admin, stopping, err := s.servers()
	if err != nil {
		return err
	}
	return serve(ctx, cfg, logger, public, admin, stopping, listening)
}

// sidecar is what run builds, phase by phase, and closes in the reverse
// order.
type sidecar struct {
	cfg     *config.Config
	logger  zerolog.Logger
	closers []func() // run last first

	cache   store.CacheInvalidator
	db      *store.DB
	work    context.Context // background work's: ends after the servers drained
	workers errgroup.Group
	drains  []interface{ Drain(context.Context) } // webhooks, reports, purges
	// reloads are run on SIGHUP.
	reloads []func() error

	authObserve    func(event, scope string)
	authCollectors []prometheus.Collector
	deps           *site.Deps
	topts          *themeopts.Files
	mods           []module.Module // the namespaces
	main           *site.Site
	sites          site.Index
	siteMap        *store.NetworkWatcher // on a network

	feedMode   atomic.Value       // how changes are noticed, for /readyz and metrics
	feedWhy    atomic.Value       // why not by the binlog feed ("": it is, or not asked for)
	feed       *changes.Feed      // the binlog feed, when it runs (or, with change-feed auto, may)
	refresh    *changes.Refresher // reads again what a change made stale
	memo       *store.Memo        // with serve-from-feed and a feed
	restCache  *restcache.Cache   // with --cache-rest
	leadership *store.Leadership  // with changes to send or a history to prune
	leading    atomic.Bool
	lead       []func(bool, time.Time) // told when leadership changes
	purgers    []*delivery.Purger
}

func (s *sidecar) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

func (s *sidecar) onClose(f func()) { s.closers = append(s.closers, f) }

// background runs f until the servers have drained; run waits for it.
func (s *sidecar) background(f func(context.Context)) {
	s.workers.Go(func() error { f(s.work); return nil })
}

// open connects the object cache and the database, and starts the
// background work's group. Background work runs until the servers have
// drained (it outlives the signal: in-flight requests still need fresh
// settings), and is waited for before the database and the cache close.
// Notifiers then deliver what is queued, within the shutdown timeout.
func (s *sidecar) open(ctx context.Context) error {
	cfg, logger := s.cfg, s.logger
	if cfg.ObjectCache == "redis" {
		oc, err := objcache.Open(ctx, objcacheOptions(cfg, logger), cfg.Source("object-cache"))
		if err != nil {
			return err
		}
		s.onClose(func() { oc.Close() })
		s.cache = oc
	}
	// The store's history units, of the namespaces under no configuration
	// (made before the configuration files are opened: what the history
	// keeps of a namespace does not depend on its configuration).
	o := dbOptions(cfg, namespaces.Modules(cfg, nil))
	o.MaxOpen, o.MaxWait, o.Cache, o.Replicas, o.MaxReplicaLag = cfg.DB.MaxOpen, cfg.DB.MaxWait, s.cache, cfg.DB.Replicas, cfg.DB.MaxReplicaLag
	o.Logger = logger.With().Str("component", "store").Logger()
	db, err := store.Open(o)
	if err != nil {
		return err
	}
	s.db = db
	s.onClose(func() { db.Close() })
	logger.Info().Str("db_net", o.Net).Str("db_addr", o.Addr).Str("db_name", cfg.DB.Name).
		Str("table_prefix", cfg.TablePrefix).Msg("database configured")

	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	s.work = work
	s.onClose(func() {
		stopWork()
		s.workers.Wait()
		dctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		for _, d := range s.drains {
			d.Drain(dctx)
		}
	})
	if len(cfg.DB.Replicas) > 0 {
		s.background(func(ctx context.Context) {
			db.WatchReplicas(ctx, max(10*time.Millisecond, min(250*time.Millisecond, cfg.DB.MaxReplicaLag/4)))
		})
	}
	return nil
}

// buildSites opens the configuration files and builds the main site's
// services (the single site, or site 1 of a network, whose tables carry
// the base prefix), and a network's map of the others.
func (s *sidecar) buildSites(ctx context.Context) error {
	cfg, logger := s.cfg, s.logger
	s.authObserve, s.authCollectors = auth.Metrics()
	report, reporter := reportFailures(cfg, logger)
	if reporter != nil {
		s.drains = append(s.drains, reporter)
		s.background(reporter.Run)
	}
	paths := themeoptsFiles(cfg)
	// The option row each site keeps its theme options in: where is the
	// site on the network (s.sites, built below; asked only once changes
	// are detected).
	paths.Where = func(id int64) (*multisite.Site, bool) { return s.sites.Place(id) }
	topts, reloads, err := themeopts.Open(paths, logger, s.background)
	if err != nil {
		return err
	}
	s.topts, s.reloads = topts, append(s.reloads, reloads...)
	// The namespaces, built once: every site, change detection and the
	// public routes take them.
	s.mods = namespaces.Modules(cfg, topts)
	off := map[wpsidecar.Namespace]string{}
	if !topts.Any() {
		off[wpsidecar.ThemeOptions] = "--themeopts-config is not set"
	}
	pubFile, err := site.OpenPublic(cfg.PublicRoutes, module.PublicSources(s.mods), off, logger)
	if err != nil {
		return err
	}
	if pubFile != nil {
		s.reloads = append(s.reloads, pubFile.Reload)
		s.background(func(ctx context.Context) { pubFile.Watch(ctx, time.Second) })
	}
	s.deps = &site.Deps{Options: siteOptions(cfg), Logger: logger, Background: s.background, Public: pubFile, Modules: s.mods, Reloaded: topts.OnReload,
		Auth: auth.Options{
			Keys: cfg.Keys, EnvironmentType: cfg.EnvironmentType,
			BasicAuthPasswords: cfg.BasicAuthPasswords, IsSecure: proxy.SecureFunc(cfg.TrustedProxies),
			ClientIP: proxy.ClientIPFunc(cfg.TrustedProxies), Observe: s.authObserve, Report: report,
			Throttle:     auth.NewThrottle(auth.Rate(cfg.AuthFailLimitIP), auth.Rate(cfg.AuthFailLimitAccount)),
			Argon2Memory: auth.NewMemoryBudget(debug.SetMemoryLimit(-1) / 2), // why half: auth.MemoryBudget
		}}
	s.onClose(s.deps.Wait) // before the database closes
	var mainID int64
	var mainSite *multisite.Site
	if cfg.Multisite {
		mainID, mainSite = 1, &multisite.Site{ID: 1, Domain: cfg.Network.Domain, Path: cfg.Network.Path}
	}
	if s.main, err = s.deps.Build(ctx, mainID, s.db, mainSite); err != nil {
		return err
	}
	s.sites = site.Index{Main: s.main}
	if cfg.Multisite {
		s.siteMap = store.NewNetworkWatcher(s.db, networkConstants(cfg), cfg.SettingsRefresh)
		s.background(s.siteMap.Run)
		s.sites.Network = site.NewNetwork(s.siteMap, s.deps, s.db, s.main, logger.With().Str("component", "multisite").Logger())
		s.background(func(ctx context.Context) { s.sites.Network.Prune(ctx, cfg.SettingsRefresh) })
	}
	return nil
}

// detectChanges notices changes — by the binlog feed, else by polling —
// when webhooks, purges, serve-from-feed or the history need them, and
// subscribes to them what each commit does (changes/commit.go). Every
// instance notices; only the one elected through the database sends.
// With change-feed auto, the feed follows whenever it can (changes.Auto).
func (s *sidecar) detectChanges(ctx context.Context) {
	cfg, logger, db := s.cfg, s.logger, s.db
	s.setFeedMode("off", nil)
	clog := logger.With().Str("component", "changes").Logger()
	s.refresh = &changes.Refresher{Settings: s.settingsOf, Network: s.siteMap, Log: clog}
	if cfg.ServeFromFeed {
		s.memo = store.NewMemo(s.current, memoLimit)
	}
	s.openRESTCache()
	s.purgers = buildPurgers(cfg.Purge, logger)
	detect := len(cfg.WebhookURLs) > 0 || len(s.purgers) > 0
	var history *changes.Recorder
	if !cfg.History.Off {
		hlog := logger.With().Str("component", "history").Logger()
		history = changes.NewRecorder(db, cfg.DB.Timeout, hlog)
		s.background(history.Run)
		s.elect(logger, nil)
		s.background(func(ctx context.Context) {
			changes.PruneHistory(ctx, db, s.siteMap, cfg.History.MaxAge, cfg.History.MaxCount, 10*time.Minute, s.leading.Load, hlog)
		})
	}
	var follow func() // the feed, once the store reads through the memo
	if detect || s.memo != nil || s.restCache != nil || (history != nil && cfg.ChangeFeed != changes.ModePoll) {
		// In order: the memo forgets (on the feed's goroutine, before the
		// feed says it heard the transaction), the settings and the site
		// map are read again (on a goroutine of their own), the history
		// records others' changes, the leader sends webhooks and purges.
		var subs changes.Subscribers
		if s.memo != nil {
			subs = append(subs, changes.Forget{Memo: s.memo, Prefix: cfg.TablePrefix})
		}
		if s.restCache != nil {
			subs = append(subs, s.restCache)
		}
		subs = append(subs, s.refresh)
		s.background(s.refresh.Run)
		if history != nil {
			subs = append(subs, history)
		}
		if detect {
			subs = append(subs, s.senders(clog))
		}
		var p *changes.Poller // nil: nothing to poll for
		if detect {
			p = changes.NewPoller(s.siteMap, db, module.Tables(s.mods), module.OptionRows(s.mods), subs, clog)
		}
		poll := func(ctx context.Context) {
			s.feedMode.Store(changes.ModePoll)
			if p != nil {
				p.Run(ctx, cfg.ChangeInterval)
			}
		}
		switch {
		case cfg.ChangeFeed == changes.ModePoll:
			s.background(poll)
		default:
			var why error
			if s.feed, why = changeFeed(ctx, cfg, db, s.mods, subs, clog); s.feed == nil {
				s.setFeedMode(changes.ModePoll, why)
				s.background(poll)
				break
			}
			s.drains = append(s.drains, closer(s.feed.Close)) // after Run has returned
			// Memory, the site map and CDNs forget what the feed did not hear
			// while stopped (Touched.Missed; site settings are read again
			// every settings-refresh anyway).
			a := changes.Auto{Feed: s.feed, Poller: p, Mode: s.setFeedMode, Interval: cfg.ChangeInterval, Timeout: cfg.DB.Timeout, Log: clog}
			if cfg.ChangeFeed != changes.ModeBinlog {
				a.Recheck = changes.RecheckEvery(cfg.ChangeInterval) // binlog: polling for good after a fall-back
			}
			s.setFeedMode(s.feed.Mode(), why)
			follow = func() { s.background(func(ctx context.Context) { a.Run(ctx, why) }) }
		}
		clog.Info().Str("change_feed", cfg.ChangeFeed).Int("webhooks", len(cfg.WebhookURLs)).Int("purgers", len(s.purgers)).Str("feed", s.feedMode.Load().(string)).
			Str("reason", s.feedWhy.Load().(string)).Dur("interval", cfg.ChangeInterval).Msg("change detection on")
	}
	if s.leadership != nil {
		lead := s.lead
		s.background(func(ctx context.Context) {
			s.leadership.Run(ctx, func(leading bool, held time.Time) {
				s.leading.Store(leading)
				for _, f := range lead {
					f(leading, held)
				}
			})
		})
	}
	if s.memo != nil {
		if s.feed == nil { // with change-feed auto, a feed that may follow later
			s.memo = nil
			logger.Warn().Msg("serve-from-feed off: there is no binlog feed to keep answers current; every GET reads the database")
		} else {
			db.UseMemo(s.memo)
			logger.Info().Dur("max_staleness", cfg.MaxStaleness).Msg("serve-from-feed on: GETs answered from memory while the feed is current")
		}
	}
	if follow != nil {
		follow()
	}
}

// openRESTCache makes --cache-rest's cache of PHP's answers. Only what
// the feed vouches for is given or kept; until it follows, every request
// goes to PHP.
func (s *sidecar) openRESTCache() {
	cfg := s.cfg
	if len(cfg.CacheREST) == 0 {
		return
	}
	c, err := restcache.New(restcache.Options{Namespaces: cfg.CacheREST, MaxBytes: int64(cfg.CacheRESTMiB) << 20,
		TablePrefix: cfg.TablePrefix, Current: func(ctx context.Context) bool { return s.feed != nil && s.current(ctx) }})
	if err != nil {
		s.logger.Error().Err(err).Msg("cache-rest off")
		return
	}
	s.restCache = c
	s.logger.Info().Strs("namespaces", cfg.CacheREST).Int("mib", cfg.CacheRESTMiB).Msg("cache-rest on: PHP's answers to anonymous reads kept while the binlog feed is current")
}

// current: the feed vouches for ctx's request (changes.Feed.Vouches) and
// what it asked to be read again has been; vouches: /readyz's word.
func (s *sidecar) current(ctx context.Context) bool {
	return s.feed.Vouches(ctx, s.cfg.ExactReads, s.cfg.MaxStaleness) && s.refresh.Idle() // after: the wait may ask for reads
}

func (s *sidecar) vouches() bool { return s.feed.Current(s.cfg.MaxStaleness) && s.refresh.Idle() }

// settingsOf is site id's settings snapshot, when its services are built.
func (s *sidecar) settingsOf(id int64) *store.SettingsWatcher {
	if b := s.sites.Built(id); b != nil {
		return b.Settings()
	}
	return nil
}

// senders start the webhooks and purges, and the election of the one
// instance that sends them; the commits noticed go to what they return.
func (s *sidecar) senders(clog zerolog.Logger) changes.Subscriber {
	var tell changes.Subscribers
	if len(s.cfg.WebhookURLs) > 0 {
		notifier := delivery.NewNotifier(delivery.NotifierOptions{URLs: s.cfg.WebhookURLs, Secret: s.cfg.WebhookSecret, Units: module.Units(s.mods), Log: clog})
		s.drains = append(s.drains, notifier)
		s.background(notifier.Run)
		tell = append(tell, notifier)
	}
	for _, p := range s.purgers {
		s.drains = append(s.drains, p)
		s.background(p.Run)
	}
	if len(s.purgers) > 0 {
		tell = append(tell, delivery.Purges{Purgers: s.purgers, Units: module.Units(s.mods), URLs: s.sites.PublicURLs})
		if s.restCache != nil {
			tell = append(tell, delivery.TagPurges{Tags: s.restCache.Tags, Purgers: s.purgers})
		}
	}
	sender := changes.NewSender(tell, leaderKeep, s.cfg.ChangeInterval+time.Second)
	s.elect(clog, sender.Lead)
	return sender
}

// elect has this instance take part in the election of the one that
// sends changes and prunes the history; lead, when not nil, is told when
// it leads. The election starts once detectChanges has said who listens.
func (s *sidecar) elect(log zerolog.Logger, lead func(bool, time.Time)) {
	if lead != nil {
		s.lead = append(s.lead, lead)
	}
	if s.leadership == nil {
		s.leadership = s.db.Leadership(time.Second, log)
	}
}

// servers are the public listener's server (the router, with every site's
// routes) and the admin listener's, and the flag of the lame-duck phase.
func (s *sidecar) servers() (public, admin *http.Server, stopping *atomic.Bool, err error) {
	cfg, logger := s.cfg, s.logger
	metrics := proxy.NewMetrics(collectors.NewDBStatsCollector(s.db.SQL(), "wordpress"))
	metrics.Register(s.authCollectors...)
	metrics.Register(delivery.PurgeMetrics(s.purgers)...)
	metrics.Register(changes.FeedMetrics(func() string { return s.feedMode.Load().(string) }, s.feed, s.memo)...)
	metrics.Register(s.db.ReplicaMetrics()...)
	if s.leadership != nil {
		metrics.Register(s.leadership.Metric())
	}
	if oc, ok := s.cache.(*objcache.Redis); ok {
		metrics.Register(oc.Metrics()...)
	}
	opts := proxy.Options{
		Upstream: cfg.Upstream, TrustedProxies: cfg.TrustedProxies,
		UpstreamTimeout: cfg.UpstreamTimeout, UpstreamDial: cfg.UpstreamDial, BodyTimeout: cfg.BodyTimeout,
		Log: logger, Metrics: metrics, Consistency: consistency(s.db, cfg), AccessLog: accessLogged(cfg.AccessLogSample),
		Main: s.main.Options(), Compress: cfg.Compress, RESTCache: s.restCache,
	}
	if s.memo != nil { // serving from the feed: answers kept while it vouches for them
		opts.Prepared = rest.NewPrepared(s.memo.Version)
		s.deps.OnReload(opts.Prepared.Changed)
	}
	if s.sites.Network != nil {
		// A site's routes are made on the handler: the network routes once
		// it exists, before the first request.
		opts.Sites = func(r *http.Request) (*rest.Routes, string) { return s.sites.Network.Route(r) }
	}
	handler, err := proxy.New(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if s.sites.Network != nil {
		mainRoutes, err := s.main.Routes(handler)
		if err != nil {
			return nil, nil, nil, err
		}
		s.sites.Network.Serve(handler, mainRoutes)
	}
	errorLog := proxy.StdLogger(logger)
	stopping = &atomic.Bool{}
	public = &http.Server{
		Handler:           proxy.LameDuck(stopping, handler),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    goMaxHeaderBytes(cfg.MaxHeaderBytes),
		ErrorLog:          errorLog,
	}
	admin = &http.Server{
		Handler: proxy.NewAdmin(proxy.AdminOptions{DB: s.db, Settings: s.main.REST(), Upstream: cfg.Upstream, Metrics: metrics, Pprof: cfg.Pprof,
			Stopping: stopping.Load, Status: s.status, OpenAPI: s.openapi}),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ErrorLog:          errorLog,
	}
	return public, admin, stopping, nil
}

// openapi is the running configuration's description (the main site's
// theme options and the public routes, as reloaded).
func (s *sidecar) openapi() []byte {
	var site openapi.Configured
	if s.deps.Public != nil {
		site.Public = s.deps.Public.Current()
	}
	return openapi.Document(apiUnder(s.cfg, s.topts.Current(s.main.Place())), site)
}

// status is what /readyz says besides readiness.
func (s *sidecar) status() map[string]string {
	st := map[string]string{}
	if n := s.main.Settings().UndeclaredNetwork(); n > 0 {
		st["multisite"] = fmt.Sprintf("the database holds a network of %d sites but the configuration read says single site: only the main site is served; pass --multisite", n)
	}
	if m := s.feedMode.Load().(string); m != "off" {
		st["change_feed"] = m
		if why := s.feedWhy.Load().(string); why != "" && m == changes.ModePoll {
			st["change_feed_reason"] = why
		} else if s.feed != nil && s.feed.Warning() != "" {
			st["change_feed_warning"] = s.feed.Warning()
		}
	}
	if s.leadership != nil {
		st["leader"] = "no"
		if s.leadership.Leading() {
			st["leader"] = "yes"
		}
	}
	if rs := s.db.Replicas(); len(rs) > 0 {
		n := 0
		for _, r := range rs {
			if r.Healthy {
				n++
			}
		}
		st["replicas"] = fmt.Sprintf("%d of %d read", n, len(rs))
	}
	if s.memo != nil {
		st["serve_from_feed"] = "database"
		if s.vouches() {
			st["serve_from_feed"] = "memory"
		}
	}
	if s.restCache != nil {
		st["rest_cache"] = "php: the change feed is not current"
		if s.feed != nil && s.vouches() {
			st["rest_cache"] = "on"
		}
	}
	return st
}

// accessLogged is --access-log's choice of the answers that get an access
// line: all (nil), none, server errors only, or a random share of all
// (errors too: in an outage every answer is one, and a sample must stay
// a sample).
func accessLogged(rate float64) func(status int) bool {
	switch {
	case rate >= 1:
		return nil
	case rate == config.AccessLogOff:
		return func(int) bool { return false }
	case rate == config.AccessLogErrors:
		return func(status int) bool { return status >= 500 }
	default:
		return func(int) bool { return rand.Float64() < rate }
	}
}

// serve listens, serves until ctx ends or a server fails, then stops: on a
// signal, first a lame-duck phase of --shutdown-delay (stopping set:
// /readyz fails, every answer closes its connection, new connections are
// still accepted), so that no request sent on a kept-alive connection is
// lost; then it stops accepting and drains in-flight requests for up to
// the shutdown timeout.
func serve(ctx context.Context, cfg *config.Config, logger zerolog.Logger, public, admin *http.Server, stopping *atomic.Bool, listening func(public, admin net.Addr)) error {
	publicLn, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	adminLn, err := net.Listen("tcp", cfg.AdminListen)
	if err != nil {
		publicLn.Close()
		return fmt.Errorf("admin-listen: %w", err)
	}
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			publicLn.Close()
			adminLn.Close()
			return fmt.Errorf("tls: %w", err)
		}
		publicLn = tls.NewListener(publicLn, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}})
	}
	logger.Info().Str("listen", publicLn.Addr().String()).Str("admin_listen", adminLn.Addr().String()).
		Str("upstream", redact.URL(cfg.Upstream)).Bool("tls", cfg.TLSCert != "").Msg("wpsidecar serving")
	if listening != nil {
		listening(publicLn.Addr(), adminLn.Addr())
	}
	notifySystemd(logger, daemon.SdNotifyReady, "STATUS=serving")

	servers, sctx := errgroup.WithContext(ctx)
	servers.Go(func() error { return served(public.Serve(publicLn)) })
	servers.Go(func() error { return served(admin.Serve(adminLn)) })
	<-sctx.Done() // the signal, or a server that failed

	stopping.Store(true)
	notifySystemd(logger, daemon.SdNotifyStopping, "STATUS=draining")
	if ctx.Err() != nil && cfg.ShutdownDelay > 0 {
		logger.Info().Dur("delay", cfg.ShutdownDelay).Msg("shutting down: /readyz fails and every answer closes its connection; still accepting until the delay ends")
		time.Sleep(cfg.ShutdownDelay)
	}
	logger.Info().Dur("timeout", cfg.ShutdownTimeout).Msg("shutting down: no new connections; draining in-flight requests")
	dctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	for name, srv := range map[string]*http.Server{"public": public, "admin": admin} {
		if err := srv.Shutdown(dctx); err != nil {
			logger.Warn().Err(err).Str("listener", name).Msg("shutdown timed out; closing remaining connections")
			srv.Close()
		}
	}
	if err := servers.Wait(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info().Msg("stopped")
	return nil
}

// served is a server's end: closed by Shutdown is no error.
func served(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// reportFailures sends each failed Basic authentication to the companion
// plugin through PHP (signed, queued, a few tries), when a companion secret
// is set; otherwise it reports nothing.
func reportFailures(cfg *config.Config, logger zerolog.Logger) (func(auth.FailedAttempt), *delivery.Notifier) {
	if cfg.CompanionSecret == "" {
		return nil, nil
	}
	u := cfg.Upstream.JoinPath("/")
	u.RawQuery = "rest_route=/wpsidecar-companion/v1/failed-auth"
	n := delivery.NewNotifier(delivery.NotifierOptions{URLs: []*url.URL{u}, Secret: cfg.CompanionSecret, QueueSize: 1024, Attempts: 3,
		Timeout: 5 * time.Second, Log: logger.With().Str("component", "companion").Logger()})
	return func(a auth.FailedAttempt) {
		b, _ := json.Marshal(a)
		n.Send(b)
	}, n
}

// goMaxHeaderBytes is what http.Server.MaxHeaderBytes must be for a header
// block of limit bytes to be the most accepted: Go reads 4 KiB more than
// that setting before it answers 431.
func goMaxHeaderBytes(limit int) int { return max(limit-4096, 1) }

// reloadOnHangup reloads the theme options configuration on SIGHUP (which
// would otherwise end the process) until ctx ends.
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, reloads []func() error, logger zerolog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if len(reloads) == 0 {
				logger.Info().Msg("SIGHUP: nothing to reload (no theme options configuration, no public routes)")
				continue
			}
			logger.Info().Msg("SIGHUP: reloading the configuration files")
			for _, reload := range reloads {
				_ = reload() // a failed reload is logged by it, and the previous configuration stays
			}
		}
	}
}

// commandSettings reads a subcommand's settings as the server does its own.
func commandSettings(environ []string) command.Settings {
	return func(args []string, flags func(*flag.FlagSet), reads command.Reads) (command.Options, []string, error) {
		if reads == command.ReadsFlags {
			pos, err := config.ParseCommandFlags(args, flags)
			return command.Options{}, pos, err
		}
		cfg, pos, err := config.LoadCommand(args, environ, flags, reads == command.ReadsDatabase)
		if err != nil {
			return command.Options{}, nil, err
		}
		nop := zerolog.Nop()
		// The namespaces under no configuration; what needs one opens it
		// (API, Parts).
		mods := namespaces.Modules(cfg, nil)
		o := command.Options{DB: dbOptions(cfg, mods), Network: networkConstants(cfg),
			PublicRoutes: cfg.PublicRoutes, PublicSources: module.PublicSources(mods), API: api(cfg), Units: module.Units(mods), Parts: parts(cfg)}
		if cfg.ObjectCache == "redis" {
			o.ObjectCache = func(ctx context.Context) (*objcache.Redis, error) {
				return objcache.Open(ctx, objcacheOptions(cfg, nop), cfg.Source("object-cache"))
			}
		}
		return o, pos, nil
	}
}

// dbOptions reach the database, for the server and the commands alike,
// the history kept of mods.
func dbOptions(cfg *config.Config, mods []module.Module) store.Options {
	network, addr := cfg.DB.Address()
	return store.Options{Net: network, Addr: addr, User: cfg.DB.User, Password: cfg.DB.Password, DBName: cfg.DB.Name, Charset: cfg.DB.Charset,
		Collation: cfg.DB.Collate, TLS: store.TLS(cfg.DB.TLS), TablePrefix: cfg.TablePrefix, Multisite: cfg.Multisite, Timeout: cfg.DB.Timeout, History: !cfg.History.Off,
		HistoryUnits: module.HistoryUnits(mods)}
}

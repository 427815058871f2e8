// Package command holds the commands that work on a site's stored data
// without serving it: wpsidecar export, import, history and revert
// (docs/api.md §12–13). They take the server's configuration (flags,
// WPSIDECAR_* variables, wp-config.php) but need no upstream.
package command

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/exportdir"
	"github.com/wpsidecar/wpsidecar/multisite"
	"github.com/wpsidecar/wpsidecar/proxy/history"
	"github.com/wpsidecar/wpsidecar/proxy/themeopts"
	"github.com/wpsidecar/wpsidecar/site"
	"github.com/wpsidecar/wpsidecar/store"
)

// Names are the commands this package runs.
var Names = []string{"export", "import", "history", "revert"}

// Env is what a command is given to run with.
type Env struct {
	Environ        []string
	Stdout, Stderr io.Writer
}

// flags are every command's own flags.
type flags struct {
	site                  int64
	dryRun, prune, force  bool
	namespace, key, since string
	page, perPage         int
	json                  bool
}

// stopGrace is how long a command told to stop (its context ended: a
// SIGTERM or SIGINT) is given to end what it does before Run returns
// without it: a transaction under way is rolled back when the process
// ends, and a read that does not notice the context is left behind.
const stopGrace = 2 * time.Second

// Run runs command name with args, until ctx ends or a SIGTERM or SIGINT
// comes: then it returns at once with an error saying so (within
// stopGrace), whatever the command was doing.
func Run(ctx context.Context, name string, args []string, env Env) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// What the command prints after Run returned is dropped.
	out, errOut := &gated{w: env.Stdout}, &gated{w: env.Stderr}
	defer out.close()
	defer errOut.close()
	done := make(chan error, 1)
	go func() { done <- run(ctx, name, args, Env{Environ: env.Environ, Stdout: out, Stderr: errOut}) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case err := <-done:
		if err == nil {
			return nil // it had finished
		}
	case <-timer.C:
	}
	return fmt.Errorf("%s interrupted: %w", name, context.Cause(ctx))
}

// gated is a writer that drops what is written once closed.
type gated struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (g *gated) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || g.w == nil {
		return len(p), nil
	}
	return g.w.Write(p)
}

func (g *gated) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

func run(ctx context.Context, name string, args []string, env Env) error {
	var f flags
	cfg, pos, err := config.LoadCommand(args, env.Environ, env.Stderr, func(fs *flag.FlagSet) {
		fs.Int64Var(&f.site, "site", 0, "on a multisite network, only this site (blog id)")
		switch name {
		case "import":
			fs.BoolVar(&f.dryRun, "dry-run", false, "print what would change and write nothing")
			fs.BoolVar(&f.prune, "prune", false, "delete the field groups that have no file")
			fs.BoolVar(&f.force, "force", false, "overwrite what changed in the database since the export")
		case "history":
			fs.StringVar(&f.namespace, "namespace", "", "fieldmgr or themeopts")
			fs.StringVar(&f.key, "key", "", "a group key or option id")
			fs.StringVar(&f.since, "since", "", "entries from this date (RFC 3339)")
			fs.IntVar(&f.page, "page", 1, "page")
			fs.IntVar(&f.perPage, "per-page", 20, "entries a page (1-100)")
			fs.BoolVar(&f.json, "json", false, "print the entries as the REST route answers them")
		case "revert":
			fs.BoolVar(&f.force, "force", false, "revert even when the value changed since the entry")
		}
	})
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	want := map[string]int{"export": 1, "import": 1, "history": 0, "revert": 1}[name]
	if len(pos) != want {
		return &config.Error{Problems: []string{fmt.Sprintf("wpsidecar %s: %s", name, map[string]string{
			"export": "give one directory: wpsidecar export DIR", "import": "give one directory: wpsidecar import DIR",
			"history": "takes no arguments", "revert": "give one history entry id: wpsidecar revert ID"}[name])}}
	}
	// Writes evict what WordPress's persistent object cache holds.
	var cache store.CacheInvalidator
	if cfg.ObjectCache == "redis" {
		oc, err := openObjectCache(ctx, cfg)
		if err != nil {
			return err
		}
		defer oc.Close()
		cache = oc
	}
	network, addr := cfg.DB.Address()
	db, err := store.Open(store.Options{
		Net: network, Addr: addr, User: cfg.DB.User, Password: cfg.DB.Password, DBName: cfg.DB.Name,
		Charset: cfg.DB.Charset, Collation: cfg.DB.Collate, TLS: store.TLS(cfg.DB.TLS), TablePrefix: cfg.TablePrefix, Multisite: cfg.Multisite,
		MaxOpen: 2, Timeout: cfg.DB.Timeout, Cache: cache, History: !cfg.History.Off,
	})
	if err != nil {
		return err
	}
	defer db.Close()
	sites, err := storedSites(ctx, cfg, db, f.site)
	if err != nil {
		return err
	}
	c := &cmd{cfg: cfg, f: f, out: env.Stdout, network: cfg.Multisite && f.site == 0}
	switch name {
	case "export", "import":
		if c.themeopts, err = themeoptsOf(ctx, cfg, db, sites); err != nil {
			return err
		}
		if name == "export" {
			return c.export(ctx, sites, pos[0])
		}
		return c.importDir(ctx, sites, pos[0])
	}
	if cfg.History.Off {
		return errors.New("the history is off (history-retention off)")
	}
	if name == "history" {
		return c.history(ctx, sites)
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || id <= 0 {
		return &config.Error{Problems: []string{fmt.Sprintf("wpsidecar revert: %q is not a history entry id", pos[0])}}
	}
	if len(sites) > 1 {
		return &config.Error{Problems: []string{"wpsidecar revert: on a network, say which site's entry: --site ID"}}
	}
	return c.revert(ctx, sites[0], id)
}

type cmd struct {
	cfg     *config.Config
	f       flags
	out     io.Writer
	network bool // every site of a network: each in a directory of its own
	// themeopts are the sites' theme options configurations by blog id (0
	// on a single site; nil: none).
	themeopts map[int64]*themeopts.Config
}

// themeoptsOf are the theme options configurations of sites, as the
// server would serve them (storedSites knows only their rows' names):
// an import checks values against them.
func themeoptsOf(ctx context.Context, cfg *config.Config, db *store.DB, sites []site.Stored) (map[int64]*themeopts.Config, error) {
	t, _, err := site.OpenThemeopts(themeoptsFiles(cfg), zerolog.Nop(), func(func(context.Context)) {})
	if err != nil {
		return nil, err
	}
	of := func(ms *multisite.Site) *themeopts.Config {
		if f := t.Of(ms); f != nil {
			return f.Current()
		}
		return nil
	}
	out := map[int64]*themeopts.Config{}
	if !cfg.Multisite {
		out[0] = of(nil)
		return out, nil
	}
	m, err := multisite.Load(ctx, db.SQL(), cfg.TablePrefix, networkConstants(cfg))
	if err != nil {
		return nil, err
	}
	for _, s := range sites {
		for i := range m.Sites {
			if m.Sites[i].ID == s.ID {
				out[s.ID] = of(&m.Sites[i])
			}
		}
	}
	return out, nil
}

// siteOf is what exportdir reaches of s.
func (c *cmd) siteOf(s site.Stored) exportdir.Site {
	return exportdir.Site{DB: s.DB, Groups: s.Groups, Themeopts: c.themeopts[s.ID]}
}

// dir is where a site's files are: DIR, or DIR/sites/<id> for every site
// of a network, made (for an export) a directory at a time: neither sites/
// nor sites/<id> may be a link (it could lead out of DIR).
func (c *cmd) dir(dir string, s site.Stored, create bool) (string, error) {
	if !c.network {
		return dir, nil
	}
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
	}
	full := filepath.Join(dir, "sites", strconv.FormatInt(s.ID, 10))
	p := dir
	for _, part := range []string{"sites", strconv.FormatInt(s.ID, 10)} {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist) && create:
			if err := os.Mkdir(p, 0o755); err != nil {
				return "", err
			}
		case errors.Is(err, fs.ErrNotExist):
			return full, nil // Read says it holds no export
		case err != nil:
			return "", err
		case st.Mode()&fs.ModeSymlink != 0:
			return "", fmt.Errorf("%s is a symbolic link: not followed (it may lead out of %s)", p, dir)
		case !st.IsDir():
			return "", fmt.Errorf("%s is not a directory", p)
		}
	}
	return full, nil
}

// prefix names the site in what is printed, on a network.
func (c *cmd) prefix(s site.Stored) string {
	if s.ID > 0 {
		return "site " + strconv.FormatInt(s.ID, 10) + ": "
	}
	return ""
}

func (c *cmd) export(ctx context.Context, sites []site.Stored, dir string) error {
	for _, s := range sites {
		d, err := c.dir(dir, s, true)
		if err != nil {
			return err
		}
		groups, options, err := exportdir.Export(ctx, c.siteOf(s), d)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.out, "%sexported %d field groups and %d theme options sets to %s\n", c.prefix(s), groups, options, d)
	}
	return nil
}

// importDir plans every site before it writes any: a conflict anywhere,
// without --force, writes nothing.
func (c *cmd) importDir(ctx context.Context, sites []site.Stored, dir string) error {
	plans := make([]exportdir.Plan, len(sites))
	var conflicts []string
	for i, s := range sites {
		d, err := c.dir(dir, s, false)
		if err != nil {
			return err
		}
		files, err := exportdir.Read(ctx, d)
		if err != nil {
			return err
		}
		if plans[i], err = exportdir.PlanImport(ctx, c.siteOf(s), files, c.f.prune); err != nil {
			return err
		}
		for _, l := range plans[i].Lines() {
			fmt.Fprintln(c.out, c.prefix(s)+l)
		}
		if plans[i].Empty() {
			fmt.Fprintln(c.out, c.prefix(s)+"nothing to change")
		}
		for _, k := range plans[i].Conflicts() {
			conflicts = append(conflicts, c.prefix(s)+k)
		}
	}
	if c.f.dryRun {
		fmt.Fprintln(c.out, "dry run: nothing written")
		return nil
	}
	if len(conflicts) > 0 && !c.f.force {
		return fmt.Errorf("%s: %w; nothing written", strings.Join(conflicts, ", "), exportdir.ErrConflict)
	}
	for i, s := range sites {
		if plans[i].Empty() {
			continue
		}
		st, err := s.DB.ReadSiteSettings(ctx, store.SiteURLs{})
		if err != nil {
			return err
		}
		err = exportdir.Apply(ctx, c.siteOf(s), plans[i], c.f.force, author(),
			st.LocalTime(time.Now()), st.DBVersion)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.out, "%simported: %d field groups, %d theme options sets written\n", c.prefix(s), len(plans[i].Groups), len(plans[i].Options))
	}
	return nil
}

// author is who the command's writes are by in the history: the system
// user running it, as "cli:<name>".
func author() wpsidecar.Author {
	login := "cli"
	if u, err := user.Current(); err == nil && u.Username != "" {
		login += ":" + u.Username
	}
	return wpsidecar.Author{Login: login}
}

func (c *cmd) history(ctx context.Context, sites []site.Stored) error {
	q := map[string][]string{"page": {strconv.Itoa(c.f.page)}, "per_page": {strconv.Itoa(c.f.perPage)}}
	for k, v := range map[string]string{"namespace": c.f.namespace, "key": c.f.key, "since": c.f.since} {
		if v != "" {
			q[k] = []string{v}
		}
	}
	filter, err := history.Filter(q)
	if err != nil {
		return &config.Error{Problems: []string{"wpsidecar history: " + err.Error()}}
	}
	for _, s := range sites {
		list, total, err := s.DB.History().List(ctx, filter)
		if err != nil {
			return err
		}
		if c.f.json {
			var b bytes.Buffer
			for _, e := range list {
				history.WriteEntry(&b, e)
				b.WriteByte('\n')
			}
			c.out.Write(b.Bytes())
			continue
		}
		fmt.Fprintf(c.out, "%s%d entries\n", c.prefix(s), total)
		for _, e := range list {
			who := e.Login
			if e.UserID > 0 {
				who += " (" + strconv.FormatInt(e.UserID, 10) + ")"
			}
			fmt.Fprintf(c.out, "%s%d  %s  %s %s %s  %s by %s\n", c.prefix(s), e.ID, e.DateGMT, e.Namespace, e.Object, e.Key, change(e), who)
		}
	}
	return nil
}

// change says what an entry did.
func change(e store.HistoryEntry) string {
	switch {
	case e.Before == nil:
		return "created"
	case e.After == nil:
		return "removed"
	}
	return "changed"
}

func (c *cmd) revert(ctx context.Context, s site.Stored, id int64) error {
	st, err := s.DB.ReadSiteSettings(ctx, store.SiteURLs{})
	if err != nil {
		return err
	}
	rv := store.Revert{By: author(), Now: st.LocalTime(time.Now()), DBVersion: st.DBVersion, Force: c.f.force}
	switch err := s.DB.History().Revert(ctx, id, rv); {
	case errors.Is(err, wpsidecar.ErrNotFound):
		return fmt.Errorf("history entry %d: not found", id)
	case errors.Is(err, wpsidecar.ErrChanged):
		return fmt.Errorf("history entry %d: the value has changed since; --force reverts it anyway", id)
	case err != nil:
		return err
	}
	fmt.Fprintf(c.out, "%sreverted history entry %d\n", c.prefix(s), id)
	return nil
}

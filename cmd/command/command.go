// Package command holds wpsidecar's subcommands, one table of them: the
// commands that work on a site's stored data without serving it (export,
// import, history, revert: docs/api.md §12–13), the OpenAPI description
// (openapi) and the container health check (probe). Each takes the
// server's settings (flags, WPSIDECAR_* variables, wp-config.php), read by
// cmd and handed over as Options, and flags of its own; none needs an
// upstream.
package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/store/objcache"
	"github.com/wpsidecar/wpsidecar/web/openapi"
)

// Options are what the commands take of the server's settings.
type Options struct {
	// DB reaches WordPress's database (the commands choose the pool's
	// size and give it the object cache); DB.History: the history is kept.
	DB store.Options
	// Network is how wp-config.php declares a multisite network
	// (DB.Multisite: there is one).
	Network multisite.Constants
	// PublicRoutes is the file whose routes openapi describes ("": none),
	// which may show the namespaces of PublicSources.
	PublicRoutes  string
	PublicSources []publicroute.Source
	// API are the namespaces openapi describes, with their routes (the
	// handlers' route tables, which this package does not import), under
	// the configuration files the settings name, which cmd reads (with
	// ReadConfig) as it hands them to the namespaces' modules.
	API func() ([]openapi.NamespaceDoc, error)
	// Units are the namespaces, as the history's list shows them.
	Units wpsidecar.Units
	// Parts opens, once per command, what export and import work on: the
	// function it returns gives a site's namespaces as files over view,
	// the site's view of the database (ms: its place on a network; nil on
	// a single site). Nil: none.
	Parts func() (PartsOf, error)
	// ObjectCache connects to WordPress's persistent object cache, which
	// writes evict; nil when the site has none.
	ObjectCache func(context.Context) (*objcache.Redis, error)
}

// PartsOf is a site's namespaces as export and import handle them.
type PartsOf func(view *store.DB, ms *multisite.Site) ([]exportdir.Part, error)

// Settings reads a command's settings as the server reads its own: the
// same flags, variables and wp-config.php, with the command's own flags
// added to the flag set, as far as reads says. It returns the arguments
// that are not flags, in order, and flag.ErrHelp when the flags asked for
// help (with nothing written: the command writes its own usage).
type Settings func(args []string, flags func(*flag.FlagSet), reads Reads) (Options, []string, error)

// Reads is how much of the settings a command reads.
type Reads int

const (
	// ReadsFlags: the server's flags are accepted and checked as flags,
	// and nothing else is read (no variables, no files; Options stay
	// empty). For the health check, which judges the server that runs,
	// not the configuration on disk now: a wp-config.php edited since the
	// server started must not make a serving container unhealthy.
	ReadsFlags Reads = iota
	// ReadsSettings: everything the server reads, but no database needs
	// naming.
	ReadsSettings
	// ReadsDatabase: everything, and the settings must name the database.
	ReadsDatabase
)

// Env is what a command writes to.
type Env struct {
	Stdout, Stderr io.Writer
}

// A command is one of wpsidecar's subcommands.
type command struct {
	name string
	// synopsis and about are its --help: how it is called, what it does.
	synopsis, about string
	// args is how many arguments that are not flags it takes (at least,
	// at most), and usage what it says when given others.
	args  [2]int
	usage string
	// check, when set, refuses arguments of the right number but not of
	// the right kind, before the settings are read.
	check func(args []string) error
	// reads: how much of the settings it reads; ReadsDatabase: it
	// reaches the site's database, which is opened (and its sites found,
	// --site chosen) before run.
	reads Reads
	flags func(*flag.FlagSet, *flags)
	run   func(c *cmd, ctx context.Context, args []string) error
}

// commands are wpsidecar's subcommands; without one, it serves.
var commands = []command{
	{name: "export", synopsis: "DIR", about: "Writes what each namespace holds to DIR, one file each (docs/api.md).",
		args: [2]int{1, 1}, usage: "give one directory: wpsidecar export DIR",
		reads: ReadsDatabase, flags: siteFlag, run: (*cmd).export},
	{name: "import", synopsis: "DIR", about: "Applies the files of DIR (as export writes them) to the database, each change\nrecorded in the history, and prints what changed.",
		args: [2]int{1, 1}, usage: "give one directory: wpsidecar import DIR",
		reads: ReadsDatabase, flags: importFlags, run: (*cmd).importDir},
	{name: "history", about: "Prints the history of changes to what the namespaces hold, newest first.",
		usage: "takes no arguments", reads: ReadsDatabase, flags: historyFlags, run: (*cmd).history},
	{name: "revert", synopsis: "ID", about: "Writes the value of history entry ID back, as a new change.",
		args: [2]int{1, 1}, usage: "give one history entry id: wpsidecar revert ID",
		check: func(args []string) error { _, err := revertID(args); return err },
		reads: ReadsDatabase, flags: revertFlags, run: (*cmd).revert},
	{name: "openapi", about: "Prints the OpenAPI description of the routes the sidecar serves, with the\nconfiguration the settings name.",
		usage: "takes no arguments", reads: ReadsSettings, run: (*cmd).openAPI},
	{name: "probe", synopsis: "[URL]", about: "Exits 0 when URL (default " + DefaultProbeURL + ") answers 200, else 1 with\nwhat it got: the container's health check.",
		args: [2]int{0, 1}, usage: "give at most one URL: wpsidecar probe [URL] (default " + DefaultProbeURL + ")", reads: ReadsFlags, run: (*cmd).probe},
}

// Is tells whether name is a subcommand.
func Is(name string) bool {
	return slices.ContainsFunc(commands, func(c command) bool { return c.name == name })
}

// flags are every command's own flags.
type flags struct {
	site                  int64
	dryRun, prune, force  bool
	namespace, key, since string
	page, perPage         int
	json                  bool
}

func siteFlag(fs *flag.FlagSet, f *flags) {
	fs.Int64Var(&f.site, "site", 0, "on a multisite network, only this site (blog id)")
}

func importFlags(fs *flag.FlagSet, f *flags) {
	siteFlag(fs, f)
	fs.BoolVar(&f.dryRun, "dry-run", false, "print what would change and write nothing")
	fs.BoolVar(&f.prune, "prune", false, "delete the field groups that have no file")
	fs.BoolVar(&f.force, "force", false, "overwrite what changed in the database since the export")
}

func historyFlags(fs *flag.FlagSet, f *flags) {
	siteFlag(fs, f)
	fs.StringVar(&f.namespace, "namespace", "", "only the entries of this namespace (as an entry names it)")
	fs.StringVar(&f.key, "key", "", "only the entries of this item (its key, as an entry names it)")
	fs.StringVar(&f.since, "since", "", "entries from this date (RFC 3339)")
	fs.IntVar(&f.page, "page", 1, "page")
	fs.IntVar(&f.perPage, "per-page", 20, "entries a page (1-100)")
	fs.BoolVar(&f.json, "json", false, "print the entries as the REST route answers them")
}

func revertFlags(fs *flag.FlagSet, f *flags) {
	siteFlag(fs, f)
	fs.BoolVar(&f.force, "force", false, "revert even when the value changed since the entry")
}

// help writes the command's --help: how it is called, what it does, its
// own flags, and what it reads of the server's settings.
func (c command) help(w io.Writer) {
	fmt.Fprintf(w, "Usage: wpsidecar %s\n\n%s\n", strings.TrimSpace(c.name+" [flags] "+c.synopsis), c.about)
	if c.flags != nil {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.flags(fs, &flags{})
		fmt.Fprint(w, "\nIts flags:\n")
		fs.VisitAll(func(f *flag.Flag) {
			arg := " VALUE"
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				arg = ""
			}
			def := ""
			if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
				def = " (default " + f.DefValue + ")"
			}
			fmt.Fprintf(w, "  --%s%s\n    \t%s%s\n", f.Name, arg, f.Usage, def)
		})
	}
	if c.reads == ReadsFlags {
		fmt.Fprint(w, "\nIt accepts the server's flags (wpsidecar --help lists them), so that the server's\ncommand line may follow it, but uses none of them (give URL for another\naddress) and reads nothing else: no variables, no wp-config.php.\n")
		return
	}
	fmt.Fprint(w, "\nIt reads the server's settings as the server does: its flags (wpsidecar --help\nlists them), WPSIDECAR_* variables and wp-config.php")
	if c.reads == ReadsDatabase {
		fmt.Fprint(w, ", which say where the\ndatabase is")
	}
	fmt.Fprint(w, ".\n")
}

// UsageError is a command given arguments it does not take: like a
// configuration problem, the process exits 2 for it. Problem begins with
// the command's name ("import: give one directory: …"); it is no problem
// of the configuration, and says so by not being called one.
type UsageError struct{ Problem string }

func (e *UsageError) Error() string { return e.Problem }

// IsUsageError tells a command's usage problem from other failures.
func IsUsageError(err error) bool {
	var e *UsageError
	return errors.As(err, &e)
}

// stopGrace is how long a command told to stop (its context ended: a
// SIGTERM or SIGINT) is given to end what it does before Run returns
// without it: a transaction under way is rolled back when the process
// ends, and a read that does not notice the context is left behind.
const stopGrace = 2 * time.Second

// Run runs command name with args, its settings read by settings, until
// ctx ends or a SIGTERM or SIGINT comes: then it returns at once with an
// error saying so (within stopGrace), whatever the command was doing.
func Run(ctx context.Context, name string, args []string, settings Settings, env Env) error {
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
	if i < 0 {
		return &UsageError{Problem: fmt.Sprintf("%s: no such command", name)}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// What the command prints after Run returned is dropped.
	out, errOut := &gated{w: env.Stdout}, &gated{w: env.Stderr}
	defer out.close()
	defer errOut.close()
	done := make(chan error, 1)
	go func() { done <- run(ctx, commands[i], args, settings, Env{Stdout: out, Stderr: errOut}) }()
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

// cmd is one command's run: its options and flags, where it writes, and
// for a command that reaches the database, the sites it works on.
type cmd struct {
	o     Options
	f     flags
	out   io.Writer
	sites []stored
	// network: every site of a network, each in a directory of its own.
	network bool
}

func run(ctx context.Context, c command, args []string, settings Settings, env Env) error {
	x := &cmd{out: env.Stdout}
	flags := func(fs *flag.FlagSet) {
		if c.flags != nil {
			c.flags(fs, &x.f)
		}
	}
	// The flags and arguments first, then the settings: a command given
	// the wrong arguments says so before it asks where the database is.
	_, pos, err := settings(args, flags, ReadsFlags)
	if errors.Is(err, flag.ErrHelp) {
		c.help(env.Stderr)
		return nil
	}
	if err != nil {
		return err
	}
	if len(pos) < c.args[0] || len(pos) > c.args[1] {
		return &UsageError{Problem: fmt.Sprintf("%s: %s", c.name, c.usage)}
	}
	if c.check != nil {
		if err := c.check(pos); err != nil {
			return err
		}
	}
	if c.reads != ReadsFlags {
		if x.o, pos, err = settings(args, flags, c.reads); err != nil {
			return err
		}
	}
	if c.reads != ReadsDatabase {
		return c.run(x, ctx, pos)
	}
	// Writes evict what WordPress's persistent object cache holds.
	db := x.o.DB
	db.MaxOpen = 2
	if x.o.ObjectCache != nil {
		oc, err := x.o.ObjectCache(ctx)
		if err != nil {
			return err
		}
		defer oc.Close()
		db.Cache = oc
	}
	sdb, err := store.Open(db)
	if err != nil {
		return err
	}
	defer sdb.Close()
	if x.sites, err = x.storedSites(ctx, sdb); err != nil {
		return err
	}
	x.network = x.o.DB.Multisite && x.f.site == 0
	return c.run(x, ctx, pos)
}

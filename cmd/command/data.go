package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/history"
	"github.com/wpsidecar/wpsidecar/store"
)

// The commands on a site's stored data: export, import, history, revert.

// tally counts each part's items ("2 field groups"): n[i] of parts[i].
func tally(parts []exportdir.Part, n []int) []string {
	out := make([]string, len(parts))
	for i, k := range parts {
		out[i] = fmt.Sprintf("%d %s", n[i], k.Noun())
	}
	return out
}

// and joins counts as a sentence lists them: "a, b and c".
func and(counts []string) string {
	if len(counts) < 2 {
		return strings.Join(counts, "")
	}
	return strings.Join(counts[:len(counts)-1], ", ") + " and " + counts[len(counts)-1]
}

// dir is where a site's files are: DIR, or DIR/sites/<id> for every site
// of a network, made (for an export) a directory at a time: neither sites/
// nor sites/<id> may be a link (it could lead out of DIR).
func (c *cmd) dir(dir string, s stored, create bool) (string, error) {
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
func (c *cmd) prefix(s stored) string {
	if s.ID > 0 {
		return "site " + strconv.FormatInt(s.ID, 10) + ": "
	}
	return ""
}

func (c *cmd) export(ctx context.Context, args []string) error {
	dir := args[0]
	for _, s := range c.sites {
		d, err := c.dir(dir, s, true)
		if err != nil {
			return err
		}
		parts := s.Parts
		n, err := exportdir.Export(ctx, parts, d)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.out, "%sexported %s to %s\n", c.prefix(s), and(tally(parts, n)), d)
	}
	return nil
}

// importDir plans every site before it writes any: a conflict anywhere,
// without --force, writes nothing.
func (c *cmd) importDir(ctx context.Context, args []string) error {
	dir, sites := args[0], c.sites
	plans := make([]exportdir.Plan, len(sites))
	var conflicts []string
	for i, s := range sites {
		d, err := c.dir(dir, s, false)
		if err != nil {
			return err
		}
		files, err := exportdir.Read(ctx, s.Parts, d)
		if err != nil {
			return err
		}
		if plans[i], err = exportdir.PlanImport(ctx, files, c.f.prune); err != nil {
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
		err = exportdir.Apply(ctx, plans[i], c.f.force, author(),
			st.LocalTime(time.Now()), st.DBVersion)
		if err != nil {
			return err
		}
		var parts []exportdir.Part
		var n []int
		for _, k := range plans[i].Parts {
			parts, n = append(parts, k.Part), append(n, len(k.Steps))
		}
		fmt.Fprintf(c.out, "%simported: %s written\n", c.prefix(s), strings.Join(tally(parts, n), ", "))
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

// errHistoryOff: history and revert have nothing to work on.
var errHistoryOff = errors.New("the history is off (history-retention off)")

func (c *cmd) history(ctx context.Context, _ []string) error {
	if !c.o.DB.History {
		return errHistoryOff
	}
	q := map[string][]string{"page": {strconv.Itoa(c.f.page)}, "per_page": {strconv.Itoa(c.f.perPage)}}
	for k, v := range map[string]string{"namespace": c.f.namespace, "key": c.f.key, "since": c.f.since} {
		if v != "" {
			q[k] = []string{v}
		}
	}
	filter, err := history.ParseFilter(q, c.o.Units)
	if bad := (*history.InvalidParam)(nil); errors.As(err, &bad) {
		// Named as the flag it came from, with the route's own message.
		flag := strings.ReplaceAll(bad.Name, "_", "-")
		return &UsageError{Problem: fmt.Sprintf("history --%s %s: %s", flag, strings.Join(q[bad.Name], ","), bad.Message)}
	}
	if err != nil {
		return err
	}
	for _, s := range c.sites {
		list, total, err := s.DB.History().List(ctx, filter)
		if err != nil {
			return err
		}
		if c.f.json {
			var b bytes.Buffer
			for _, e := range list {
				history.WriteEntry(&b, e, c.o.Units)
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
func change(e history.Entry) string {
	switch {
	case e.Before == nil:
		return "created"
	case e.After == nil:
		return "removed"
	}
	return "changed"
}

// revertID is revert's argument, a history entry's id.
func revertID(args []string) (int64, error) {
	id, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || id <= 0 {
		return 0, &UsageError{Problem: fmt.Sprintf("revert: %q is not a history entry id", args[0])}
	}
	return id, nil
}

func (c *cmd) revert(ctx context.Context, args []string) error {
	if !c.o.DB.History {
		return errHistoryOff
	}
	id, err := revertID(args)
	if err != nil {
		return err
	}
	if len(c.sites) > 1 {
		return &UsageError{Problem: "revert: on a network, say which site's entry: --site ID"}
	}
	s := c.sites[0]
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

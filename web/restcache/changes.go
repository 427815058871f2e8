package restcache

import (
	"slices"
	"strings"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/changes"
)

// Why answers were dropped (the metrics' reasons).
const (
	DropWritten = "written" // a site's rows were written
	DropSchema  = "schema"  // DDL, or rows the feed could not read
	DropNetwork = "network" // a network's table of sites
	DropGlobal  = "global"  // a table all sites share (users, a network's)
	DropFeed    = "feed"    // the feed stopped: what it did not hear
)

// globalTables are the tables, after the base prefix, that every site of
// a network reads (wpdb's global tables): a write drops every answer.
var globalTables = []string{"users", "usermeta", "blogs", "blogmeta", "site", "sitemeta", "signups", "registration_log"}

// Touched drops what a committed transaction may have changed (it is a
// changes.Subscriber's half, with the feed's FeedOptions.EveryTable on):
// every answer of each site whose tables it wrote, unless all it wrote
// are option rows no answer is made from (answersMayRead); every answer
// after DDL, a change to a network's sites, or a write to a table all
// sites share (users: a network's sites all show them). Sites are numbered as the
// feed numbers them: 0 on a single site, 1 for the base prefix's tables
// on a network; tables are named with Options.TablePrefix.
func (c *Cache) Touched(t changes.Touched) {
	prefix := c.o.TablePrefix
	switch {
	case t.DDL:
		c.DropAll(DropSchema)
		return
	case t.Network:
		c.DropAll(DropNetwork)
		return
	}
	options := prefix + "options"
	for site, tables := range t.Written {
		if site <= 1 && slices.ContainsFunc(tables, func(name string) bool {
			g, ok := strings.CutPrefix(name, prefix)
			return ok && slices.Contains(globalTables, g)
		}) {
			c.DropAll(DropGlobal)
			return
		}
	}
	for site, tables := range t.Written {
		if len(tables) == 1 && tables[0] == options && len(t.Options[site]) > 0 && !slices.ContainsFunc(t.Options[site], answersMayRead) {
			continue
		}
		c.DropSite(site, DropWritten)
	}
}

// Commit: a namespace's change drops what Touched dropped already (the
// cache is a changes.Subscriber; the sidecar's own namespaces are never
// kept).
func (c *Cache) Commit(wpsidecar.Commit) {}

// answersMayRead tells whether a REST answer may be made from the option
// row name: all but those WordPress writes for its own bookkeeping, which
// no route shows and no answer depends on — the cron schedule (written on
// every scheduled run), transients' expiry times, and wp-cron's lock.
// A site writing its cron row every second keeps its answers.
func answersMayRead(name string) bool {
	switch {
	case name == "cron", name == "_transient_doing_cron":
		return false
	case strings.HasPrefix(name, "_transient_timeout_"), strings.HasPrefix(name, "_site_transient_timeout_"):
		return false
	}
	return true
}

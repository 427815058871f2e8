package restcache

import (
	"slices"
	"strconv"
	"strings"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/cachetag"
)

// Why answers were dropped (the metrics' reasons).
const (
	DropWritten = "written" // a site's rows were written
	DropSchema  = "schema"  // DDL, or rows the feed could not read
	DropNetwork = "network" // a network's table of sites
	DropGlobal  = "global"  // a table all sites share (users, a network's)
	DropFeed    = "feed"    // the feed stopped: what it did not hear
	DropRows    = "rows"    // posts, terms, comments or users: what shows them
)

// globalTables are the tables, after the base prefix, that every site of
// a network reads (wpdb's global tables): a write drops every answer.
var globalTables = []string{"users", "usermeta", "blogs", "blogmeta", "site", "sitemeta", "signups", "registration_log"}

// Touched drops what a committed transaction may have changed (the cache
// is a changes.Subscriber, with the feed's FeedOptions.EveryTable and
// RowValues on). Sites are numbered as the feed numbers them: 0 on a
// single site, 1 for the base prefix's tables on a network; tables are
// named with Options.TablePrefix.
//
//   - DDL, rows the feed could not read, a network's sites or another
//     table all sites share: every answer.
//   - A site's posts, terms, comments, their meta and relationships, and
//     users (every site's): the answers that show those entities (by the
//     ids the rows name), and the lists of the site (of every site, for
//     a user). Meta rows WordPress writes for its own bookkeeping drop
//     nothing (ignoredMeta).
//   - Option rows: every answer of the site, but for those no answer is
//     made from (answersMayRead): a site writing its cron row every
//     second keeps its answers.
//   - Any other table of a site (a plugin's own): every answer of the
//     site.
func (c *Cache) Touched(t wpsidecar.Touched) {
	for _, d := range c.plan(t) {
		switch {
		case d.all:
			c.DropAll(d.reason)
		case d.keys == nil:
			c.DropSite(d.site, d.reason)
		default:
			c.dropKeys(d.site, d.keys, d.reason)
		}
	}
}

// drop is one of what a transaction drops: every answer (all), every
// answer of site (no keys), or those of site showing keys.
type drop struct {
	all    bool
	site   int64
	keys   []string
	reason string
}

// plan is what t drops (see Touched).
func (c *Cache) plan(t wpsidecar.Touched) []drop {
	switch {
	case t.Missed:
		return []drop{{all: true, reason: DropFeed}}
	case t.DDL:
		return []drop{{all: true, reason: DropSchema}}
	case t.Network:
		return []drop{{all: true, reason: DropNetwork}}
	}
	prefix := c.o.TablePrefix
	for site, tables := range t.Written {
		if site <= 1 && slices.ContainsFunc(tables, func(name string) bool {
			g, ok := strings.CutPrefix(name, prefix)
			if !ok || !slices.Contains(globalTables, g) {
				return false
			}
			_, reported := t.RowValues[site][name+".ID"]
			_, metaReported := t.RowValues[site][name+".user_id"]
			return rowKinds[g] == nil || !reported && !metaReported // users whose ids are not known: every site's
		}) {
			return []drop{{all: true, reason: DropGlobal}}
		}
	}
	var out []drop
	for site, tables := range t.Written {
		values := t.RowValues[site]
		byRows := !slices.ContainsFunc(tables, func(name string) bool {
			if name == prefix+"options" {
				return slices.ContainsFunc(t.Options[site], answersMayRead)
			}
			g, ok := strings.CutPrefix(name, prefix)
			if !ok || rowKinds[g] == nil {
				return true
			}
			for col := range rowKinds[g] {
				if _, ok := values[name+"."+col]; ok {
					return false
				}
			}
			return true // its rows' ids were not reported
		})
		switch keys := rowKeys(prefix, values); {
		case !byRows, slices.ContainsFunc(values[prefix+"posts.post_type"], func(t string) bool { return slices.Contains(siteWideTypes, t) }):
			out = append(out, drop{site: site, reason: DropWritten})
		case len(keys) > 0:
			out = append(out, drop{site: site, keys: keys, reason: DropRows})
		}
	}
	return out
}

// Tags are what a CDN must purge after t: the tags of the answers t
// drops, as kept answers name them (tagsOf).
func (c *Cache) Tags(t wpsidecar.Touched) []string {
	var tags []string
	for _, d := range c.plan(t) {
		switch {
		case d.all:
			tags = append(tags, tagAll)
		case d.keys == nil:
			tags = append(tags, cachetag.SitePrefix(d.site)+tagAll)
		default:
			// The answers showing the keys, and the site's lists, or every
			// site's when a user is among them (as dropKeys drops them).
			tags = append(tags, keyTags(d.site, d.keys)...)
			tags = append(tags, cachetag.SitePrefix(d.site)+tagAll+":"+keyLists)
			if slices.ContainsFunc(d.keys, isUser) {
				tags = append(tags, tagAll+":"+keyLists)
			}
		}
	}
	slices.Sort(tags)
	return slices.Compact(tags)
}

// rowKeys are the keys the rows named by values (the feed's RowValues of
// one site) show, qualified: "post:14" as "<site>/post:14" is by
// dropKeys' caller, users as "*/user:1".
func rowKeys(prefix string, values map[string][]string) []string {
	var keys []string
	for col, ids := range values {
		name, column, _ := strings.Cut(col, ".")
		table, _ := strings.CutPrefix(name, prefix)
		kind := rowKinds[table][column]
		if kind == "" {
			continue
		}
		if metaKeys, ok := values[name+".meta_key"]; ok && len(metaKeys) > 0 &&
			!slices.ContainsFunc(metaKeys, func(k string) bool { return !ignoredMeta(table, k) }) {
			continue // only bookkeeping rows
		}
		for _, id := range ids {
			if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > 0 {
				keys = append(keys, kind+":"+id)
			}
		}
	}
	return keys
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

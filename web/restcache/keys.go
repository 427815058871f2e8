package restcache

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/wpsidecar/wpsidecar/domain/cachetag"
)

// What a kept answer shows, as keys a change drops it by.
//
// An answer of one entity (a route ending in its id: /wp/v2/posts/14,
// /wp/v2/categories/3, /wp/v2/users/1, /wp/v2/comments/5) is keyed by
// every entity it shows: the entity itself and those it names or embeds
// (a post's author, featured media, parent and terms; a comment's post).
// Every other answer (a collection, a search, the index, settings) is a
// list: any write of the site's posts, terms, comments or users may
// change what it holds, so any drops it. An answer that shows an object
// this package does not know is a list too.

// Key kinds.
const (
	kindPost    = "post"
	kindTerm    = "term"
	kindComment = "comment"
	kindUser    = "user"
	keyLists    = "lists"
)

// keysOf are the keys of an answer to route with body: nil for a list.
func keysOf(route string, body []byte) []string {
	last := route[strings.LastIndexByte(route, '/')+1:]
	id, err := strconv.ParseInt(last, 10, 64)
	if err != nil || id <= 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	top, ok := v.(map[string]any)
	if !ok || numberOf(top["id"]) != id {
		return nil
	}
	var keys []string
	add := func(kind string, id int64) {
		if id > 0 {
			k := kind + ":" + strconv.FormatInt(id, 10)
			for _, have := range keys {
				if have == k {
					return
				}
			}
			keys = append(keys, k)
		}
	}
	if !walkEntities(top, add) || isUser(keys[0]) {
		// A user is shown only while they have published posts: any
		// post's write may change that, as for a list.
		return nil
	}
	return keys
}

// walkEntities adds the keys of the entities v shows, and reports false
// when it shows an object with an id of a kind it does not know.
func walkEntities(v any, add func(kind string, id int64)) bool {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if !walkEntities(e, add) {
				return false
			}
		}
	case map[string]any:
		if _, ok := x["id"]; ok {
			kind := entityKind(x)
			if kind == "" {
				return false
			}
			add(kind, numberOf(x["id"]))
			switch kind {
			case kindPost:
				add(kindPost, numberOf(x["post"])) // media: the post it is attached to, whose status it follows
				add(kindUser, numberOf(x["author"]))
				add(kindPost, numberOf(x["featured_media"]))
				add(kindPost, numberOf(x["parent"]))
				for _, tax := range []string{"categories", "tags"} {
					if ids, ok := x[tax].([]any); ok {
						for _, t := range ids {
							add(kindTerm, numberOf(t))
						}
					}
				}
			case kindTerm:
				add(kindTerm, numberOf(x["parent"]))
			case kindComment:
				add(kindPost, numberOf(x["post"]))
				add(kindUser, numberOf(x["author"]))
				add(kindComment, numberOf(x["parent"]))
			}
		}
		for k, e := range x {
			if k == "_links" {
				continue // addresses, no entities
			}
			if !walkEntities(e, add) {
				return false
			}
		}
	}
	return true
}

// entityKind is the kind of a REST object with an id, by the fields
// WordPress's controllers give each: "" when it is none of them.
func entityKind(o map[string]any) string {
	_, taxonomy := o["taxonomy"].(string)
	_, authorName := o["author_name"]
	_, avatars := o["avatar_urls"]
	_, typ := o["type"].(string)
	_, slug := o["slug"]
	switch {
	case taxonomy:
		return kindTerm
	case authorName:
		return kindComment
	case typ && slug:
		return kindPost // posts, pages, media, a custom type
	case avatars && slug:
		return kindUser
	}
	return ""
}

func numberOf(v any) int64 {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	i, err := n.Int64()
	if err != nil {
		return 0
	}
	return i
}

// rowKinds are the kinds of entity the columns of WordPress's tables the
// feed reports name (RowValues), by table (after the prefix) and column.
// wp_terms is not among them: a term's name or slug is in the links of
// its descendants, which name only their parent, so a write of it drops
// every answer of its site.
var rowKinds = map[string]map[string]string{
	"posts":              {"ID": kindPost, "post_parent": kindPost}, // a revision's parent shows its count and latest
	"postmeta":           {"post_id": kindPost},
	"comments":           {"comment_ID": kindComment, "comment_post_ID": kindPost},
	"commentmeta":        {"comment_id": kindComment},
	"term_taxonomy":      {"term_id": kindTerm},
	"termmeta":           {"term_id": kindTerm},
	"term_relationships": {"object_id": kindPost},
	"users":              {"ID": kindUser},
	"usermeta":           {"user_id": kindUser},
}

// FeedNeeds is what the change feed must report for the cache's drops
// (cmd sets it on changes.FeedOptions), besides every table written
// (EveryTable): the ids of the rows of WordPress's tables (RowValues)
// but for writes of columns no answer shows (QuietColumns), each
// reported once the primary shows it (Keys, each table's primary key):
// an answer fetched after a drop must read the new rows.
type FeedNeeds struct {
	RowValues, QuietColumns map[string][]string
	Keys                    map[string]string
}

// Needs is what the feed must report, the tables named with prefix.
func Needs(prefix string) FeedNeeds {
	n := FeedNeeds{RowValues: rowValues(prefix), QuietColumns: quietColumns(prefix), Keys: map[string]string{}}
	for table, pk := range primaryKeys {
		n.Keys[prefix+table] = pk
	}
	return n
}

// primaryKeys are the primary keys of WordPress's tables (after the
// prefix) whose rows answers show; wp_term_relationships has two.
var primaryKeys = map[string]string{
	"posts": "ID", "postmeta": "meta_id", "comments": "comment_ID", "commentmeta": "meta_id",
	"terms": "term_id", "term_taxonomy": "term_taxonomy_id", "termmeta": "meta_id", "users": "ID", "usermeta": "umeta_id",
}

// rowValues are the columns the change feed must report for the drops by
// id (changes.FeedOptions.RowValues), the tables named with prefix.
func rowValues(prefix string) map[string][]string {
	out := map[string][]string{prefix + "postmeta": {"meta_key"}, prefix + "usermeta": {"meta_key"}, prefix + "posts": {"post_type"}}
	for table, cols := range rowKinds {
		for c := range cols {
			out[prefix+table] = append(out[prefix+table], c)
		}
	}
	return out
}

// quietColumns are the columns of the tables (named with prefix) no REST
// answer shows, whose change alone drops nothing
// (changes.FeedOptions.QuietColumns): a user's password reset key,
// written by any anonymous lost-password request, and password hash.
func quietColumns(prefix string) map[string][]string {
	return map[string][]string{prefix + "users": {"user_activation_key", "user_pass"}}
}

// siteWideTypes are the post types a write of which drops every answer of
// its site: those rendered into other posts' content and the site's
// templates (synced patterns, navigation menus, templates and their
// parts, global styles), and pages, whose slugs are in the links of
// their descendants, which name only their parent.
var siteWideTypes = []string{"wp_block", "wp_navigation", "wp_template", "wp_template_part", "wp_global_styles", "page", "nav_menu_item"}

// ignoredMeta tells whether a meta row of table (postmeta, usermeta) is
// one WordPress writes for its own bookkeeping and no REST answer shows:
// the editor's lock on a post and its last editor; a user's sessions and
// wp-admin's screen preferences.
func ignoredMeta(table, key string) bool {
	switch table {
	case "postmeta":
		return key == "_edit_lock" || key == "_edit_last"
	case "usermeta":
		if key == "session_tokens" || key == "community-events-location" {
			return true
		}
		for _, suffix := range []string{"user-settings", "user-settings-time", "dashboard_quick_press_last_post_id", "persisted_preferences"} {
			if strings.HasSuffix(key, suffix) {
				return true
			}
		}
		for _, prefix := range []string{"closedpostboxes_", "metaboxhidden_", "meta-box-order_", "screen_layout_"} {
			if strings.HasPrefix(key, prefix) {
				return true
			}
		}
	}
	return false
}

// tagAll is the tag every kept answer names, first (a CDN cuts a list too
// long back to it): with a site's prefix, its answers; without, every
// site's. Its keys' tags follow it ("rest:post:14"), a user's never
// prefixed (every site's answers show users), and a list's "rest:lists".
const tagAll = "rest"

// tagsOf are the cache tags of an answer of site showing keys (nil: a
// list): the site's tagAll and, on a network, every site's; then its
// keys'. A list names its site's lists and, on a network, every site's
// (a user's change is on every site's lists).
func tagsOf(site int64, keys []string) []string {
	p := cachetag.SitePrefix(site)
	tags := []string{p + tagAll}
	if p != "" {
		tags = append(tags, tagAll)
	}
	if keys != nil {
		return append(tags, keyTags(site, keys)...)
	}
	tags = append(tags, p+tagAll+":"+keyLists)
	if p != "" {
		tags = append(tags, tagAll+":"+keyLists)
	}
	return tags
}

// keyTags are the tags of keys of site, as answers name them: a user's
// with no site's prefix.
func keyTags(site int64, keys []string) []string {
	p := cachetag.SitePrefix(site)
	tags := make([]string, 0, len(keys))
	for _, k := range keys {
		if isUser(k) {
			tags = append(tags, tagAll+":"+k)
		} else {
			tags = append(tags, p+tagAll+":"+k)
		}
	}
	return tags
}

// isUser tells whether key is a user's: every site's answers show users.
func isUser(key string) bool { return strings.HasPrefix(key, kindUser+":") }

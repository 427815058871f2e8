// Package wpsidecar holds the words every part of the sidecar shares, and
// nothing that does work: the namespaces it serves, a change to one of
// them and who made it, and the errors that say what went wrong in terms
// a caller can act on. It imports no project package, so everyone may
// import it; the rules of each namespace live in their own package
// (fieldgroup, themeoption), HTTP and SQL around them.
package wpsidecar

import (
	"bytes"
	"errors"
	"slices"
	"time"
)

// Namespace is a kind of data the sidecar serves, by the first part of
// its REST namespace: "fieldmgr" for fieldmgr/v1. It is also what the
// history, webhooks and cache tags call it.
type Namespace string

// The namespaces.
const (
	FieldGroups  Namespace = "fieldmgr"
	ThemeOptions Namespace = "themeopts"
)

// Unit is a namespace as the parts that handle every namespace alike see
// it — the history and its routes, webhooks, the contract — so that none
// of them names one. Each namespace's rules package gives its own
// (fieldgroup.Unit, themeoption.Unit); cmd hands the list (Units) to the
// parts that need it.
type Unit interface {
	Namespace() Namespace
	// Summary says in a line what it holds and who may use it (the
	// contract's tag).
	Summary() string
	// ItemsField is what a webhook's body calls a commit's items: the
	// field groups' "keys", the theme options' "ids".
	ItemsField() string
	// Labels are what one of its items and several are called in a
	// sentence ("field group", "field groups"): the history screen's
	// type column, the descriptions of the routes shared by all.
	Labels() (one, many string)
	// HistoryTag is the letter its history entries' origins carry: an
	// origin names a transaction, which may change several namespaces.
	HistoryTag() string
	// Listed tells whether its answers that list items carry its list's
	// cache tag (cachetag.List), which a change of any item makes stale:
	// an item created is in no list's item tags yet. The field groups'
	// lists do; the theme options are one set, tagged by the namespace.
	Listed() bool
	// HistoryCapability is what seeing and reverting its history takes:
	// reverting writes one of its values back, so it is for those who may
	// read and write it through its own routes.
	HistoryCapability() string
	// WriteValue writes a value its history keeps as the history route
	// shows it (JSON; null for one it cannot read).
	WriteValue(b *bytes.Buffer, value string)
}

// Units are the namespaces served, in the order they are listed.
type Units []Unit

// Find is ns's unit; nil for a namespace not served.
func (us Units) Find(ns Namespace) Unit {
	for _, u := range us {
		if u.Namespace() == ns {
			return u
		}
	}
	return nil
}

// Names are the units' namespaces, in order.
func (us Units) Names() []Namespace {
	out := make([]Namespace, len(us))
	for i, u := range us {
		out[i] = u.Namespace()
	}
	return out
}

// How a change was made (Author.Via).
const (
	ViaREST   = "rest"
	ViaImport = "import"
	ViaRevert = "revert"
	// ViaBinlog: seen in the binary log, made by someone else (PHP,
	// wp-admin, SQL); ViaPoll: seen by polling.
	ViaBinlog = "binlog"
	ViaPoll   = "poll"
)

// LoginPHP is the login recorded for changes the sidecar did not make.
const LoginPHP = "php"

// Author is who made a change, as the history records it.
type Author struct {
	UserID    int64
	Login     string
	Via       string
	RequestID string
}

// Item is one item's before and after: a field group by its key, a
// theme option by its id. Before or After is nil where the item did not
// exist. A field group's value is its fieldgroup.Value JSON, a theme
// option's its value as PHP serializes it.
type Item struct {
	Key           string
	Before, After *string
}

// Commit is what one committed transaction changed of one namespace of
// one site: the one event change detection produces, whoever made the
// change and however it was seen.
type Commit struct {
	// BlogID is the site's blog id on a multisite network (the logs' blog_id;
	// a webhook's "site"); 0 on a single site.
	BlogID    int64
	Namespace Namespace
	// Object is what the items belong to, as the history names it: the
	// theme options row, the field groups' table (with the site's
	// prefix).
	Object string
	Items  []Item
	// Origin names the transaction: its GTID where the server has them,
	// else its place in the log (file:position); empty when polled.
	Origin string
	Author Author
	// When is the commit's time as the log dates it (to the second), or
	// when the poll saw it.
	When time.Time
}

// Keys are the items' keys, in order.
func (c Commit) Keys() []string {
	keys := make([]string, len(c.Items))
	for i, it := range c.Items {
		keys[i] = it.Key
	}
	return keys
}

// Touched is what one committed transaction wrote to the tables the
// binlog feed follows, whatever it changed of the namespaces: what copies
// of the database kept in memory (and CDNs) must forget. The feed reports
// it (changes.Subscriber); the memo, the cache of PHP's REST answers and
// the purges read it.
type Touched struct {
	UserIDs []int64 // users and usermeta rows, by their user's id
	// Options are the option rows written, by name, for each site (0 on a
	// single site).
	Options map[int64][]string
	// Tables are the keys of the rows written of the namespaces' own
	// tables (changes.FeedOptions.Tables), by table as the database names it (a
	// site's prefix included).
	Tables map[string][]string
	// DDL: a statement that is not row-based (ALTER, TRUNCATE, DROP, …)
	// ran in the schema, or rows could not be read: what it did to the
	// rows is not known.
	DDL bool
	// Network: the network's tables of sites were written.
	Network bool
	// Missed: the feed may have missed writes — it stopped, and follows
	// the log again from where it ends now — so whatever keeps copies of
	// the database forgets them all, CDNs' included.
	Missed bool
	// Written are the tables whose rows were written, by the site-1 name
	// (wp_posts for wp_2_posts too), for each site (0 on a single site):
	// every table of the schema, with changes.FeedOptions.EveryTable.
	Written map[int64][]string
	// RowValues are the values of changes.FeedOptions.RowValues' columns in the
	// rows written, for each site, by "table.column" (the site-1 table
	// name: "wp_posts.ID"), each once, as text.
	RowValues map[int64]map[string][]string
}

// DistinctKeys are the items' keys each once, sorted: as webhooks,
// purges and logs name what a commit changed, whichever detector saw it.
func (c Commit) DistinctKeys() []string {
	k := c.Keys()
	slices.Sort(k)
	return slices.Compact(k)
}

// Errors that say what happened to a read or a write, whatever layer
// finds them; the REST layer answers each with its own status.
var (
	// ErrNotFound: no such item.
	ErrNotFound = errors.New("not found")
	// ErrDuplicate: an item with that key exists already.
	ErrDuplicate = errors.New("duplicate key")
	// ErrChanged: the item changed since the state the write was based on.
	ErrChanged = errors.New("changed since")
	// ErrUnrevertable: a history entry that cannot be reverted.
	ErrUnrevertable = errors.New("cannot be reverted")
)

// Invalid is a value a namespace's rules refuse: Message says what is
// wrong, in the words WordPress or the namespace's contract use.
type Invalid struct {
	Message string
}

func (e *Invalid) Error() string { return e.Message }

package archtest

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

// layout is the one table of the house's rules: every package of the
// project, what it holds, and the project packages it may import. Imports
// point down the table: a package may import only packages listed below
// it, so there is no cycle and no layer reaches up. Pure packages (a
// namespace's rules, the wire-free leaves) import no net/http, even
// indirectly. docs/architecture.md's layout table is generated from it
// (go test ./internal/archtest -update); TestLayout checks the code
// against it and TestLayoutDoc the document.
var layout = []struct {
	pkg     string
	holds   string
	imports []string // direct project imports allowed; "*": anything below
	pure    bool     // no net/http, even indirectly
}{
	{"cmd/wpsidecar", "`main` and `run`: the wiring. The only reader of the settings: builds each package's options from them, subscribes what a change does, starts and waits for every goroutine, serves, shuts down in order", []string{"*"}, false},
	{"cmd/namespaces", "the one list of the namespaces served, one line each, provided by their handler packages: cmd and the tests' harness derive every other list from it", []string{"config", "web/fieldmgr", "web/module", "web/themeopts"}, false},
	{"cmd/command", "the subcommands, one table of them (`export`, `import`, `history`, `revert`, `openapi`, `probe`), each taking the server's settings as an options struct", []string{"", "domain/exportdir", "domain/history", "internal/regularfile", "domain/multisite", "store/objcache", "web/openapi", "domain/publicroute", "internal/reload", "store"}, false},
	{"web/site", "one site's services (settings, authenticator, each namespace's handlers, built by ranging over the modules cmd hands it, public routes) and a network of them: a request's site, services built on a site's first request and let go when it leaves; it names no namespace", []string{"", "auth", "domain/cachetag", "changes", "domain/multisite", "web/proxy", "web/historyapi", "web/module", "web/public", "domain/publicroute", "internal/reload", "web/rest", "store"}, false},
	{"web/fieldmgr", "`fieldmgr/v1`'s handlers: routes, authentication, bodies, answers; a rule's refusal rendered as the contract's error; its export and import (`Part`); its `Module`", []string{"", "auth", "domain/cachetag", "changes", "domain/exportdir", "domain/fieldgroup", "domain/multisite", "web/module", "web/openapi", "internal/phpserial", "wire/httpcond", "domain/publicroute", "store", "store/fieldgrouptable", "wire/routetable", "wire/wpjson"}, false},
	{"web/themeopts", "`themeopts/v1`'s handlers, likewise, and its configuration files (opened, watched, reloaded; a site's own found by blog id, domain, or domain and path)", []string{"", "auth", "domain/cachetag", "changes", "domain/exportdir", "domain/multisite", "domain/publicroute", "web/module", "web/openapi", "internal/phpserial", "wire/httpcond", "internal/reload", "store", "domain/themeoption", "wire/routetable", "wire/wpjson"}, false},
	{"web/module", "a namespace as the layers that handle all of them alike are handed it: one `Module` per namespace (its unit, history reverter, OpenAPI namespace, table or option row, export part, how public routes show it, and its handlers built for a site, `Site`: what the site serves of it, `Served`), provided by its handler package, listed once (`cmd/namespaces`), and the lists derived from them; it names no namespace", []string{"", "auth", "changes", "domain/exportdir", "domain/multisite", "domain/publicroute", "web/openapi", "web/public", "web/rest", "store"}, false},
	{"web/proxy", "the reverse proxy: a request's site, pass-through to PHP, request ids, access log, metrics, admin listener", []string{"", "web/rest", "web/restcache", "wire/wpjson"}, false},
	{"web/restcache", "PHP's answers to anonymous reads of WordPress's own REST routes (`--cache-rest`), kept in a byte-bounded cache while nothing changed: what is never kept, the key, drops by generation (a `changes.Subscriber`: the feed's Touched), one fetch per key; kept answers keyed by the entities they show (read from PHP's answer) and named by cache tags, purged by the leader (`changes/delivery`)", []string{"", "domain/cachetag", "internal/phpquery"}, false},
	{"web/openapi", "the OpenAPI 3.1 description, from what its caller hands it of each namespace (route table, unit, schemas) and the parts they share (errors, the history, public routes); it links no router", []string{"", "domain/publicroute", "wire/routetable"}, false},
	{"web/historyapi", "`wpsidecar/v1`'s handlers: the history list and reverting an entry, over the namespaces' units", []string{"", "auth", "domain/history", "store", "wire/routetable", "wire/wpjson"}, false},
	{"web/public", "the site owner's public routes, answered without credentials", []string{"", "domain/cachetag", "wire/httpcond", "domain/publicroute", "wire/wpjson"}, false},
	{"web/rest", "WordPress's REST server in front of a site's namespaces: REST routing (`rest_route`, case, `_method`), the checks before a route, the global parameters (`_fields`, `_envelope`, `_jsonp`, `_pretty`), read-your-writes, a network site's cache tags; the answer's one writer chain", []string{"", "domain/cachetag", "internal/contentcoding", "internal/phpquery", "wire/wpjson"}, false},
	{"changes/delivery", "what the leader hands each change on to: webhooks (signed, retried) and CDN purges (pending tags merged, split by size, made broader past a bound, retried until sent; Varnish, nginx, Cloudflare, Fastly), and their metrics", []string{"", "domain/cachetag", "internal/phpserial", "internal/redact"}, false},
	{"changes", "change detection (the binlog feed, the poller) over the tables and option rows cmd describes (`Table`: a namespace kept in a table of its own; `OptionRow`: one kept in an option row, with its diff), naming no namespace: each change one `wpsidecar.Commit` handed to one `Subscriber`; the subscribers (memo, settings and site-map refresh off the feed's goroutine, history); the leader, which alone hands changes on to `changes/delivery`", []string{"", "domain/cachetag", "internal/phpserial", "internal/redact", "store"}, false},
	{"auth", "WordPress's authentication: cookies, nonces, passwords, application passwords, capabilities, throttling, the companion plugin's policy", []string{"", "internal/phpserial", "store", "wire/wpjson", "domain/wplogin"}, false},
	{"store/fieldgrouptable", "the field groups' SQL, owned by their namespace: the table, its reads (ride-along and remembered) and writes, each recorded in the history, and an entry written back", []string{"", "domain/fieldgroup", "domain/history", "store"}, false},
	{"store", "all SQL but a table namespace's own (which lives in a package of its own under store, writing through this one): the pool, replicas, options (an option row's write recorded in the history by the caller's namespace and diff: `Recorded`, `OptionArrayReverter`), users, a namespace table's transaction and memo (`ChangeTable`, `TableRead`), the history and its one recorder, the settings snapshot, a network's site map, the binlog server's position and columns; it knows no namespace's rows", []string{"", "domain/history", "domain/multisite", "internal/phpserial", "domain/wplogin"}, false},
	{"store/objcache", "WordPress's Redis object cache: opening it, deleting the keys a write makes stale", nil, false},
	{"domain/exportdir", "a site's namespaces as files: the manifest, the tree written within DIR, bounded reads (and the bounds of a PHP value, for a kind's checks), an import's plan and applying it, over each namespace's `Part`, which its handler package provides; it names no namespace", []string{"", "internal/regularfile", "internal/phpserial"}, false},
	{"domain/history", "the history's rules without HTTP: an entry and a filter, the list's parameters validated as WordPress does, an entry's JSON; what differs by namespace is its unit's", []string{"", "internal/phpserial"}, true},
	{"domain/fieldgroup", "the field groups' model and rules: a group validated, the field types and their schemas, a config as JSON, a group's diff, the selector of a public route", []string{"", "domain/publicroute", "internal/phpserial"}, true},
	{"domain/themeoption", "the theme options' model and rules: the configuration file, a value checked against its field, the value schemas, the diff of two saved sets, the ids a public route shows", []string{"", "domain/publicroute", "internal/phpserial"}, true},
	{"domain/publicroute", "the public routes file without HTTP: routes, cache lifetimes, CORS origins, validated; what a route shows read by the namespace it names (`Source`, `Selection`), which it names none of", []string{""}, true},
	{"domain/multisite", "which site of a network a request is for, as WordPress finds it", nil, true},
	{"domain/cachetag", "cache tags: spelled, escaped and given their site in one place; it names no namespace (each namespace's handlers name their tags, its unit whether it has a list's)", nil, false},
	{"domain/wplogin", "WordPress's rules for a login a client types: `sanitize_user`, `is_email`, accents removed as the tables' collation compares", nil, true},
	{"config", "the sidecar's settings: `Config`, the named defaults, `Load` (flags, variables, what `wpconfig` read), `Validate`", []string{"internal/regularfile", "internal/redact", "config/wpconfig"}, true},
	{"config/wpconfig", "a site's configuration files read as WordPress would: `wp-config.php` and its includes, Bedrock and `.env`, `DB_HOST` (a bounded PHP evaluator; fuzzed)", []string{"internal/regularfile"}, true},
	{"wire/httpcond", "ETags, `If-None-Match`, `If-Match`", []string{"internal/contentcoding", "wire/wpjson"}, false},
	{"wire/wpjson", "WordPress's REST wire format: the one error type and its renderer, REST headers, PHP's JSON-body check", []string{"", "internal/phpquery", "wire/routetable"}, false},
	{"wire/routetable", "a namespace's route table as its handler package lists it: paths, each method's handler and documentation, for `wpjson.Register` to mount and `openapi` to describe; it links no router", nil, false},
	{"internal/reload", "configuration files followed while running (reloaded on SIGHUP and on change)", []string{"internal/regularfile"}, true},
	{"internal/regularfile", "the one reader of a file an operator or a site names: a regular file only, within a size, never blocking", nil, true},
	{"internal/redact", "the masking every printed or logged URL goes through", nil, true},
	{"internal/contentcoding", "`Accept-Encoding` negotiated (RFC 9110, fuzzed), br, zstd and gzip made once per body in a bounded cache, the entity tags of the codings", nil, false},
	{"internal/limits", "the process's CPU and memory limits (GOMAXPROCS, the collector's percentage, the soft memory limit) unless Go's own variables set them", nil, true},
	{"internal/logging", "the log's buffer and the collapser of repeated errors", nil, true},
	{"internal/phpquery", "a query string's names and values as PHP fills `$_GET` from them (fuzzed, checked against PHP's own `parse_str`)", nil, true},
	{"internal/phpserial", "PHP values: serialize, unserialize, `json_decode`/`json_encode`, the one order-keeping JSON model (fuzzed)", nil, true},
	{"", "the root package `wpsidecar`: the words everyone shares — the namespaces and their `Unit`, `Item`, `Author`, `Commit`, what a transaction wrote (`Touched`), the sentinel errors, and a request's `Scope` (the one value a request's context carries)", nil, true},
}

// harness are the packages outside the table: tests, benchmarks and
// their helpers, which may import anything.
var harness = []string{"e2e", "internal/archtest", "internal/harness/", "scripts/"}

// TestLayoutBands: each folder at the root sits in one band of the
// table: its packages are rows one after the other, so the order of the
// layers reads off the folders (docs/architecture.md's folder table).
func TestLayoutBands(t *testing.T) {
	seen := map[string]bool{}
	last := ""
	for _, r := range layout {
		top, _, _ := strings.Cut(r.pkg, "/")
		if top != last && seen[top] {
			t.Errorf("%s splits the band of %s/: its rows are not together", r.pkg, top)
		}
		seen[top], last = true, top
	}
}

var update = flag.Bool("update", false, "rewrite docs/architecture.md's layout table from the rules")

// TestLayout: every package has a row, imports only what its row allows,
// each of which lies below it, and a pure package reaches no net/http.
func TestLayout(t *testing.T) {
	row := map[string]int{}
	for i, r := range layout {
		row[r.pkg] = i
	}
	for i, r := range layout {
		for _, imp := range r.imports {
			if j, ok := row[imp]; imp != "*" && (!ok || j <= i) {
				t.Errorf("%s may import %q, which is not a package below it", name(r.pkg), imp)
			}
		}
	}
	for _, path := range goList(t, "-f={{.ImportPath}}", "...") {
		pkg := rel(path)
		i, ok := row[pkg]
		if !ok {
			if !slices.ContainsFunc(harness, func(h string) bool { return strings.HasPrefix(pkg, h) }) {
				t.Errorf("%s has no row in the layout table", name(pkg))
			}
			continue
		}
		r := layout[i]
		for _, dep := range goList(t, "-f={{join .Imports \" \"}}", pkg) {
			if !ours(dep) {
				continue
			}
			d := rel(dep)
			if j, ok := row[d]; slices.Contains(r.imports, "*") && ok && j > i {
				continue
			}
			if !slices.Contains(r.imports, d) {
				t.Errorf("%s imports %s, which its row does not allow", name(pkg), name(d))
			}
		}
		if r.pure {
			for _, dep := range goList(t, "-deps", pkg) {
				if dep == "net/http" {
					t.Errorf("%s reaches net/http (its row says it knows no HTTP)", name(pkg))
				}
			}
		}
	}
}

// TestLayoutDoc: docs/architecture.md shows the table as the rules say.
func TestLayoutDoc(t *testing.T) {
	const doc = "../../docs/architecture.md"
	const begin, end = "<!-- layout: begin (generated: go test ./internal/archtest -update) -->\n", "<!-- layout: end -->\n"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no layout markers", doc)
	}
	want := s[:i+len(begin)] + layoutTable() + s[j:]
	if *update {
		if err := os.WriteFile(doc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if s != want {
		t.Errorf("%s's layout table differs from the rules in internal/archtest/layout_test.go: go test ./internal/archtest -update", doc)
	}
}

func layoutTable() string {
	var b strings.Builder
	b.WriteString("| package | holds | may import |\n|---|---|---|\n")
	for _, r := range layout {
		imports := "nothing of the project"
		if len(r.imports) > 0 {
			var names []string
			for _, imp := range r.imports {
				if imp == "*" {
					names = append(names, "any package below")
				} else {
					names = append(names, name(imp))
				}
			}
			imports = strings.Join(names, ", ")
		}
		if r.pure {
			imports += "; no `net/http`"
		}
		b.WriteString("| " + name(r.pkg) + " | " + r.holds + " | " + imports + " |\n")
	}
	return b.String()
}

// name is how the table shows a package: the root package by its name.
func name(pkg string) string {
	if pkg == "" {
		return "`wpsidecar` (root)"
	}
	return "`" + pkg + "`"
}

func ours(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }

func rel(path string) string {
	if path == module {
		return ""
	}
	return strings.TrimPrefix(path, module+"/")
}

// routerFree are the packages that link no router, even indirectly: the
// OpenAPI description reads the route tables and mounts none.
var routerFree = []string{"web/openapi", "wire/routetable"}

// TestRouterFree: no package of routerFree reaches a router.
func TestRouterFree(t *testing.T) {
	for _, pkg := range routerFree {
		for _, dep := range goList(t, "-deps", pkg) {
			if dep == "github.com/gorilla/mux" {
				t.Errorf("%s reaches %s (it links no router)", name(pkg), dep)
			}
		}
	}
}

// TestRootFolders: the root shows the layers — at most a dozen folders at
// the root hold Go packages (docs/architecture.md names each).
func TestRootFolders(t *testing.T) {
	var folders []string
	for _, path := range goList(t, "-f={{.ImportPath}}", "...") {
		if top, _, _ := strings.Cut(rel(path), "/"); top != "" && !slices.Contains(folders, top) {
			folders = append(folders, top)
		}
	}
	folders = append(folders, "deploy") // deploy/kubernetes: a module of its own
	if len(folders) > 12 {
		t.Errorf("%d folders at the root hold Go packages (at most 12): %v", len(folders), folders)
	}
}

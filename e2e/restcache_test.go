//go:build e2e

package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// restCacheSite is a WordPress behind a sidecar following its binary log
// with --cache-rest wp/v2,rctest/v1 and --exact-reads, and scripts/wp/restcache-test.php's
// routes, meta and field; the plugin's own table is wp_rc_stock.
func restCacheSite(t *testing.T) *wptest.Site {
	fs := startFeedSiteWith(t, wptest.Options{MUPlugins: []string{"scripts/wp/restcache-test.php"}}, "", "", "--cache-rest", "wp/v2,rctest/v1", "--exact-reads")
	if _, err := fs.DB(t).Exec("CREATE TABLE wp_rc_stock (post_id BIGINT UNSIGNED NOT NULL PRIMARY KEY, qty INT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "readyz saying rest_cache on", func() bool {
		return strings.Contains(ask(t, fs.AdminURL, "", http.MethodGet, "/readyz", "").body, `"rest_cache":"on"`)
	})
	return fs
}

// restCount is a --cache-rest counter of the sidecar's.
func restCount(t *testing.T, fs *wptest.Site, result string) int {
	t.Helper()
	return metric(t, fs, `wpsidecar_rest_cache_requests_total{result="`+result+`"}`)
}

// waitKept waits until an anonymous GET of target is given from memory:
// once the feed has reported the writes before, which drop an answer
// fetched meanwhile.
func waitKept(t *testing.T, fs *wptest.Site, target string) {
	t.Helper()
	testwait.For(t, target+" given from memory", func() bool {
		hits := restCount(t, fs, "hit")
		anonymous(t, fs, target)
		return restCount(t, fs, "hit") > hits
	})
}

// anonymous is the sidecar's answer to an anonymous GET of target.
func anonymous(t *testing.T, fs *wptest.Site, target string, hdr ...string) answer {
	t.Helper()
	return ask(t, fs.URL, "", http.MethodGet, target, "", hdr...)
}

// TestRESTCache: with --cache-rest, PHP's answers to anonymous reads are
// kept and given again, as PHP sent them, until a write that may alter
// them; what must reach PHP every time does.
//
// Write sources: an anonymous GET of WordPress's own routes
// is given again from memory, and after a write from each source the
// next one shows it within --max-staleness: PHP's own functions
// (wp_update_post, wp_set_object_terms, a comment approved), a REST write
// through PHP, SQL on wp_posts, wp_postmeta, wp_terms and wp_users, a
// plugin's own table read by a REST field, a scheduled post published by
// cron.
func TestRESTCache(t *testing.T) {
	fs := restCacheSite(t)
	t.Run("write sources", func(t *testing.T) { restCacheWriteSources(t, fs) })
	t.Run("by entity", func(t *testing.T) { restCacheByEntity(t, fs) })
	t.Run("never kept", func(t *testing.T) { restCacheNeverKept(t, fs) })
	t.Run("as PHP", func(t *testing.T) { restCacheAsPHP(t, fs) })
	t.Run("stampede", func(t *testing.T) { restCacheStampede(t, fs) })
	t.Run("as PHP reads the request", func(t *testing.T) { restCachePHPReading(t, fs) })
	t.Run("what no answer shows", func(t *testing.T) { restCacheQuietWrites(t, fs) })
	t.Run("revisions", func(t *testing.T) { restCacheRevisions(t, fs) })
	t.Run("read right after a write", func(t *testing.T) { restCacheExactReads(t, fs) })
}

// Read right after a write: a post's title written by SQL, then at once
// an anonymous GET of its kept answer, shows the new title, every time,
// with readers asking all along (exact reads; issue 54, item 2: 56 and 99
// of 200 such GETs got the old title).
func restCacheExactReads(t *testing.T, fs *wptest.Site) {
	var post int64
	fs.PHP(t, `return wp_insert_post(array("post_title" => "rc exact 0", "post_status" => "publish", "post_author" => 1));`, &post)
	path := fmt.Sprintf("/wp-json/wp/v2/posts/%d", post)
	waitKept(t, fs, path)
	db := fs.DB(t)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 4 {
		testwait.Meanwhile(&readers, stop, func() bool {
			req, _ := http.NewRequest(http.MethodGet, fs.URL+path, nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			return true
		})
	}
	hits := restCount(t, fs, "hit")
	stale := 0
	const writes = 100
	for i := 1; i <= writes; i++ {
		sqlExec(t, db, "UPDATE wp_posts SET post_title = ? WHERE ID = ?", fmt.Sprintf("rc exact %d", i), post)
		if !strings.Contains(anonymous(t, fs, path).body, fmt.Sprintf(`"rendered":"rc exact %d"`, i)) {
			stale++
		}
	}
	close(stop)
	readers.Wait()
	hits = restCount(t, fs, "hit") - hits
	t.Logf("%d of %d writes read back stale at once; %d answers given from memory meanwhile", stale, writes, hits)
	if stale > 0 {
		t.Errorf("%d of %d titles written by SQL were read back stale right after their commit", stale, writes)
	}
	if hits < writes {
		t.Errorf("only %d answers given from memory during %d writes: the test did not read from memory", hits, writes)
	}
}

// As PHP reads the request: a query name PHP files as rest_route or
// _method however it is spelled (a dot, a leading space, a NUL), and a
// path that is not in canonical form (nginx serves another file), are
// never kept as the wp/v2 GETs they look like to a reader that does not
// read them as PHP does.
func restCachePHPReading(t *testing.T, fs *wptest.Site) {
	for _, c := range []struct {
		reason, target, shows string
	}{
		{"route", "/wp-json/wp/v2/posts?rest.route=/", `"namespaces"`},
		{"route", "/wp-json/wp/v2/posts?%20rest_route=/", `"namespaces"`},
		{"route", "/wp-json/wp/v2/posts?rest_route%00x=/", `"namespaces"`},
		{"method", "/wp-json/wp/v2/posts?.method=OPTIONS", `"endpoints"`},
		{"method", "/wp-json/wp/v2/posts?_method%00x=OPTIONS", `"endpoints"`},
		{"nonce", "/wp-json/wp/v2/posts?_wpnonce%00x=abc", ``},
		{"target", "/wp-json/wp/v2/../../../wp-links-opml.php", `<opml`},
	} {
		before, hits := bypasses(t, fs, c.reason), restCount(t, fs, "hit")
		for range 2 {
			a := raw(t, http.MethodGet, fs.URL+c.target)
			if !strings.Contains(a.body, c.shows) {
				t.Errorf("GET %s: %d %.200s; PHP's answer shows %s", c.target, a.status, a.body, c.shows)
			}
		}
		if n := bypasses(t, fs, c.reason) - before; n != 2 || restCount(t, fs, "hit") != hits {
			t.Errorf("GET %s: %d bypasses for %s (want 2), hits %d → %d", c.target, n, c.reason, hits, restCount(t, fs, "hit"))
		}
	}
}

// What no answer shows: an anonymous lost-password request writes the
// user's reset key, which no REST answer shows: the answers that show
// the user are kept (they were all dropped, by anyone, at will).
func restCacheQuietWrites(t *testing.T, fs *wptest.Site) {
	db := fs.DB(t)
	login := fs.Users["administrator"].Login
	var user int64
	if err := db.QueryRow("SELECT ID FROM wp_users WHERE user_login = ?", login).Scan(&user); err != nil {
		t.Fatal(err)
	}
	var a, b int64
	fs.PHP(t, fmt.Sprintf(`return wp_insert_post(array("post_title" => "rc quiet A", "post_status" => "publish", "post_author" => %d));`, user), &a)
	fs.PHP(t, fmt.Sprintf(`return wp_insert_post(array("post_title" => "rc quiet B", "post_status" => "publish", "post_author" => %d));`, user), &b)
	pathA, pathB := fmt.Sprintf("/wp-json/wp/v2/posts/%d", a), fmt.Sprintf("/wp-json/wp/v2/posts/%d", b)
	waitKept(t, fs, pathA)
	waitKept(t, fs, pathB)
	var key0, key1 string
	db.QueryRow("SELECT user_activation_key FROM wp_users WHERE ID = ?", user).Scan(&key0)
	// WordPress writes the key, then fails to send the mail here: the
	// write is what counts.
	form := strings.NewReader("user_login=" + login + "&redirect_to=&wp-submit=Get+New+Password")
	req, _ := http.NewRequest(http.MethodPost, fs.URL+"/wp-login.php?action=lostpassword", form)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, body := do(t, rawClient, req)
	db.QueryRow("SELECT user_activation_key FROM wp_users WHERE ID = ?", user).Scan(&key1)
	if key1 == key0 || key1 == "" {
		t.Fatalf("the lost-password request wrote no reset key (%q before, %q after): %d %.300s", key0, key1, resp.StatusCode, body)
	}
	// Post A's write comes after, in the log: once it shows, the reset
	// key's transaction was read before it.
	sqlExec(t, db, "UPDATE wp_posts SET post_title = 'rc quiet A changed' WHERE ID = ?", a)
	testwait.For(t, "post A's change shown", func() bool {
		return strings.Contains(anonymous(t, fs, pathA).body, `"rendered":"rc quiet A changed"`)
	})
	testwait.For(t, "a GET of post B looked up", func() bool {
		hits, misses := restCount(t, fs, "hit"), restCount(t, fs, "miss")
		anonymous(t, fs, pathB)
		switch {
		case restCount(t, fs, "hit") > hits:
		case restCount(t, fs, "miss") > misses:
			t.Errorf("post B's answer, which shows its author, dropped by the author's reset key's write (drops: %s)", drops(t, fs))
		default:
			return false
		}
		return true
	})
}

// Revisions: a post's answer shows its revisions' count and latest
// (_links): a revision written or deleted by SQL, as a clean-up does,
// is shown at once.
func restCacheRevisions(t *testing.T, fs *wptest.Site) {
	var post int64
	fs.PHP(t, `return wp_insert_post(array("post_title" => "rc revised", "post_status" => "publish", "post_author" => 1));`, &post)
	path := fmt.Sprintf("/wp-json/wp/v2/posts/%d", post)
	if a := anonymous(t, fs, path); !strings.Contains(a.body, `"version-history":[{"count":0`) {
		t.Fatalf("a new post's answer: %.600s", a.body)
	}
	waitKept(t, fs, path)
	db := fs.DB(t)
	res, err := db.Exec(`INSERT INTO wp_posts (post_author, post_date, post_date_gmt, post_content, post_title, post_excerpt, post_status, post_name, to_ping, pinged, post_modified, post_modified_gmt, post_content_filtered, post_parent, post_type)
		VALUES (1, NOW(), UTC_TIMESTAMP(), '', 'rc revised', '', 'inherit', ?, '', '', NOW(), UTC_TIMESTAMP(), '', ?, 'revision')`, fmt.Sprintf("%d-revision-v1", post), post)
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := res.LastInsertId()
	shows := fmt.Sprintf(`"predecessor-version":[{"id":%d`, rev)
	if _, byThen := within(maxStaleness, func() bool { return strings.Contains(anonymous(t, fs, path).body, shows) }); !byThen {
		t.Errorf("a revision inserted: the post's answer does not show it %s after: %.600s", maxStaleness, anonymous(t, fs, path).body)
	}
	waitKept(t, fs, path)
	sqlExec(t, db, "DELETE FROM wp_posts WHERE ID = ?", rev)
	if _, byThen := within(maxStaleness, func() bool { return strings.Contains(anonymous(t, fs, path).body, `"version-history":[{"count":0`) }); !byThen {
		t.Errorf("a revision deleted: the post's answer still shows it %s after: %.600s", maxStaleness, anonymous(t, fs, path).body)
	}
}

func restCacheWriteSources(t *testing.T, fs *wptest.Site) {
	db := fs.DB(t)
	admin := fs.Users["administrator"]
	var post, term, comment int64
	fs.PHP(t, `return wp_insert_post(array("post_title" => "rc before", "post_status" => "publish", "post_author" => 1, "post_content" => "x"));`, &post)
	fs.PHP(t, `$t = wp_insert_term("rc term before", "category"); return $t["term_id"];`, &term)
	fs.PHP(t, fmt.Sprintf(`return wp_insert_comment(array("comment_post_ID" => %d, "comment_content" => "rc comment", "comment_approved" => 0, "comment_author" => "a"));`, post), &comment)
	if _, err := db.Exec("INSERT INTO wp_rc_stock (post_id, qty) VALUES (?, 5)", post); err != nil {
		t.Fatal(err)
	}
	postPath := fmt.Sprintf("/wp-json/wp/v2/posts/%d", post)
	late := 0
	for _, step := range []struct {
		name, target string
		write        func()
		shows        func(body string) bool
	}{
		{"wp_update_post", postPath, func() {
			fs.PHP(t, fmt.Sprintf(`return wp_update_post(array("ID" => %d, "post_title" => "rc by php"));`, post), nil)
		}, func(b string) bool { return strings.Contains(b, `"rendered":"rc by php"`) }},
		{"wp_set_object_terms", postPath, func() {
			fs.PHP(t, fmt.Sprintf(`return wp_set_object_terms(%d, array(%d), "category");`, post, term), nil)
		}, func(b string) bool { return strings.Contains(b, fmt.Sprintf(`"categories":[%d]`, term)) }},
		{"comment approved", fmt.Sprintf("/wp-json/wp/v2/comments?post=%d", post), func() {
			fs.PHP(t, fmt.Sprintf(`return wp_set_comment_status(%d, "approve");`, comment), nil)
		}, func(b string) bool { return strings.Contains(b, fmt.Sprintf(`"id":%d`, comment)) }},
		{"REST write through PHP", postPath, func() {
			a := ask(t, fs.URL, "", http.MethodPost, postPath, `{"title":"rc by rest"}`, append(basic(admin.Login, admin.ApplicationPassword), "Content-Type", "application/json")...)
			if a.status != 200 {
				t.Fatalf("REST write: %d %s", a.status, a.body)
			}
		}, func(b string) bool { return strings.Contains(b, `"rendered":"rc by rest"`) }},
		{"SQL on wp_posts", postPath, func() {
			sqlExec(t, db, "UPDATE wp_posts SET post_title = 'rc by sql' WHERE ID = ?", post)
		}, func(b string) bool { return strings.Contains(b, `"rendered":"rc by sql"`) }},
		{"SQL on wp_postmeta", postPath, func() {
			sqlExec(t, db, "INSERT INTO wp_postmeta (post_id, meta_key, meta_value) VALUES (?, 'rc_note', 'noted by sql')", post)
		}, func(b string) bool { return strings.Contains(b, `"rc_note":"noted by sql"`) }},
		{"SQL on wp_terms", fmt.Sprintf("/wp-json/wp/v2/categories/%d", term), func() {
			sqlExec(t, db, "UPDATE wp_terms SET name = 'rc term by sql' WHERE term_id = ?", term)
		}, func(b string) bool { return strings.Contains(b, `"name":"rc term by sql"`) }},
		{"SQL on wp_users", "/wp-json/wp/v2/users/1", func() {
			sqlExec(t, db, "UPDATE wp_users SET display_name = 'rc user by sql' WHERE ID = 1")
		}, func(b string) bool { return strings.Contains(b, `"name":"rc user by sql"`) }},
		{"a plugin's own table", postPath, func() {
			sqlExec(t, db, "UPDATE wp_rc_stock SET qty = 7 WHERE post_id = ?", post)
		}, func(b string) bool { return strings.Contains(b, `"rc_stock":7`) }},
	} {
		// Kept: a GET is given from memory.
		if a := anonymous(t, fs, step.target); a.status != 200 || step.shows(a.body) {
			t.Fatalf("%s, before: %d %.300s", step.name, a.status, a.body)
		}
		waitKept(t, fs, step.target)
		step.write()
		atOnce, byThen := within(maxStaleness, func() bool { return step.shows(anonymous(t, fs, step.target).body) })
		if !byThen {
			t.Errorf("%s: the next anonymous GET still shows the answer kept from before, %s after the write: %.300s", step.name, maxStaleness, anonymous(t, fs, step.target).body)
		} else if !atOnce {
			late++
		}
	}

	// Published by cron: the list kept before does not hold the post; once
	// wp-cron.php has run the event, the next GET does.
	// WordPress schedules only what is a minute ahead or more: the post is
	// made two minutes ahead, then moved to a few seconds ahead, its event
	// with it.
	var future int64
	at := time.Now().Add(3 * time.Second).Truncate(time.Second)
	fs.PHP(t, fmt.Sprintf(`$id = wp_insert_post(array("post_title" => "rc by cron", "post_status" => "future", "post_author" => 1, "post_date_gmt" => gmdate("Y-m-d H:i:s", time() + 120)));
		global $wpdb;
		$wpdb->update($wpdb->posts, array("post_date_gmt" => gmdate("Y-m-d H:i:s", %d), "post_date" => get_date_from_gmt(gmdate("Y-m-d H:i:s", %d))), array("ID" => $id));
		clean_post_cache($id);
		wp_clear_scheduled_hook("publish_future_post", array($id));
		wp_schedule_single_event(%d, "publish_future_post", array($id));
		return $id;`, at.Unix(), at.Unix(), at.Unix()), &future)
	var scheduled string
	db.QueryRow("SELECT post_status FROM wp_posts WHERE ID = ?", future).Scan(&scheduled)
	if scheduled != "future" {
		t.Fatalf("the post to publish by cron is %q, not future", scheduled)
	}
	list := "/wp-json/wp/v2/posts?per_page=5&_fields=id"
	anonymous(t, fs, list)
	if a := anonymous(t, fs, list); strings.Contains(a.body, fmt.Sprintf(`"id":%d`, future)) {
		t.Fatalf("the scheduled post is listed before it is published: %s", a.body)
	}
	testwait.For(t, "the post's time to come", func() bool { return time.Now().After(at.Add(time.Second)) })
	testwait.For(t, "wp-cron.php to publish the post", func() bool {
		ask(t, fs.WPURL, "", http.MethodGet, "/wp-cron.php", "")
		var status string
		db.QueryRow("SELECT post_status FROM wp_posts WHERE ID = ?", future).Scan(&status)
		return status == "publish"
	})
	if atOnce, byThen := within(maxStaleness, func() bool {
		return strings.Contains(anonymous(t, fs, list).body, fmt.Sprintf(`"id":%d`, future))
	}); !byThen {
		t.Errorf("published by cron: the next anonymous GET does not list it %s after: %s", maxStaleness, anonymous(t, fs, list).body)
	} else if !atOnce {
		late++
	}
	t.Logf("changes shown at once: %d of 10; within max-staleness: the rest (%d)", 10-late, late)
}

// sqlExec runs a statement on the site's database, as a plugin or an
// operator would, behind WordPress's back.
func sqlExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// bypasses is the count of requests --cache-rest passed to PHP for reason
// (0 before the first).
func bypasses(t *testing.T, fs *wptest.Site, reason string) int {
	t.Helper()
	return byReason(t, fs, "wpsidecar_rest_cache_bypasses_total", reason)
}

// byReason is the value of counter name's series of reason (0 before
// the first).
func byReason(t *testing.T, fs *wptest.Site, counter, reason string) int {
	t.Helper()
	name := counter + `{reason="` + reason + `"} `
	m := ask(t, fs.AdminURL, "", http.MethodGet, "/metrics", "").body
	i := strings.Index(m, name)
	if i < 0 {
		return 0
	}
	n, _ := strconv.ParseFloat(strings.Fields(m[i+len(name):])[0], 64)
	return int(n)
}

// drops are the --cache-rest drop counters, for a failure's message.
func drops(t *testing.T, fs *wptest.Site) string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(ask(t, fs.AdminURL, "", http.MethodGet, "/metrics", "").body, "\n") {
		if strings.HasPrefix(l, "wpsidecar_rest_cache_drops_total{") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}

// made is when PHP made an rctest/v1 answer.
func made(t *testing.T, a answer) string {
	t.Helper()
	var b struct{ Made string }
	if err := json.Unmarshal([]byte(a.body), &b); err != nil || a.status != 200 || b.Made == "" {
		t.Fatalf("rctest answer: %d %s", a.status, a.body)
	}
	return b.Made
}

// Never kept: requests with credentials, a cookie, a nonce, another
// method, a condition reach PHP every time, and so do answers a shared
// cache may not keep (Set-Cookie, private, no-store, no-cache, a Vary on
// what is not keyed); a keepable answer is kept.
func restCacheNeverKept(t *testing.T, fs *wptest.Site) {
	admin := fs.Users["administrator"]
	for _, c := range []struct {
		reason, method, target string
		hdr                    []string
	}{
		{"credentials", "GET", "/wp-json/rctest/v1/plain", basic(admin.Login, admin.ApplicationPassword)},
		{"cookie", "GET", "/wp-json/rctest/v1/plain", []string{"Cookie", "wordpress_logged_in_x=y"}},
		{"nonce", "GET", "/wp-json/rctest/v1/plain", []string{"X-WP-Nonce", "abc"}},
		{"nonce", "GET", "/wp-json/rctest/v1/plain?_wpnonce=abc", nil},
		{"method", "GET", "/wp-json/rctest/v1/plain?_method=POST", nil},
		{"method", "POST", "/wp-json/wp/v2/posts", nil},
		{"conditional", "GET", "/wp-json/rctest/v1/plain", []string{"If-None-Match", `"x"`}},
	} {
		before, hits := bypasses(t, fs, c.reason), restCount(t, fs, "hit")
		var answers []string
		for range 2 {
			a := ask(t, fs.URL, "", c.method, c.target, "", c.hdr...)
			if c.method == "GET" && a.status == 200 {
				answers = append(answers, made(t, a))
			}
		}
		if n := bypasses(t, fs, c.reason) - before; n != 2 || restCount(t, fs, "hit") != hits {
			t.Errorf("%s %s %v: %d bypasses for %s, hits %d → %d", c.method, c.target, c.hdr, n, c.reason, hits, restCount(t, fs, "hit"))
		}
		if len(answers) == 2 && answers[0] == answers[1] {
			t.Errorf("%s %s %v: PHP's answer given twice", c.method, c.target, c.hdr)
		}
	}
	for _, route := range []string{"cookie", "private", "nostore", "nocache", "vary"} {
		kept := metric(t, fs, "wpsidecar_rest_cache_kept_total")
		first, second := made(t, anonymous(t, fs, "/wp-json/rctest/v1/"+route)), made(t, anonymous(t, fs, "/wp-json/rctest/v1/"+route))
		if first == second || metric(t, fs, "wpsidecar_rest_cache_kept_total") != kept {
			t.Errorf("rctest/v1/%s: kept (%s, %s)", route, first, second)
		}
	}
	waitKept(t, fs, "/wp-json/rctest/v1/plain")
}

// As PHP: an answer given from memory is PHP's own, byte for byte: the
// status, the body and every header but Date (fresh) and the hop-by-hop
// ones, as WordPress answers the same request directly; HEAD too. The
// sidecar adds its cache tags (Cache-Tag, Surrogate-Key).
func restCacheAsPHP(t *testing.T, fs *wptest.Site) {
	var post int64
	fs.PHP(t, `return wp_insert_post(array("post_title" => "rc as php", "post_status" => "publish", "post_author" => 1, "post_content" => "<p>x</p>"));`, &post)
	for _, target := range []string{
		"/wp-json/wp/v2/posts?per_page=2",
		fmt.Sprintf("/wp-json/wp/v2/posts/%d", post),
		fmt.Sprintf("/wp-json/wp/v2/posts/%d?_embed=1", post),
		"/wp-json/wp/v2/categories",
		"/wp-json/wp/v2/users/1",
		"/wp-json/wp/v2/types",
		"/wp-json/wp/v2",
		"/?rest_route=/wp/v2/posts&per_page=1",
		"/wp-json/wp/v2/posts/999999",
		"/wp-json/wp/v2/nope",
	} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			same := func(given string, ours rawAnswer) {
				wp := raw(t, method, fs.WPURL+target)
				if ours.status != wp.status || ours.body != wp.body || !slices.Equal(ours.header, wp.header) {
					t.Errorf("%s %s, %s: differs from PHP's own: status %d, PHP's %d; same body: %v; header lines only ours: %q, only PHP's: %q",
						method, target, given, ours.status, wp.status, ours.body == wp.body, only(ours.header, wp.header), only(wp.header, ours.header))
				}
			}
			same("passed on", raw(t, method, fs.URL+target))
			// Once the feed has reported the writes before (which drop an
			// answer fetched meanwhile), one is given from memory.
			var kept rawAnswer
			testwait.For(t, method+" "+target+" given from memory", func() bool {
				hits := restCount(t, fs, "hit")
				kept = raw(t, method, fs.URL+target)
				return restCount(t, fs, "hit") > hits
			})
			same("from memory", kept)
		}
	}
}

// only are the lines of a not in b.
func only(a, b []string) []string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, l)
		}
	}
	return out
}

// rawAnswer is an answer as it came: its header lines but the ones that
// are not the answer's own (Date, the connection's, the sidecar's
// request id), sorted.
type rawAnswer struct {
	status int
	header []string
	body   string
}

func raw(t *testing.T, method, url string) rawAnswer {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, body := do(t, nil, req)
	var h []string
	for k, vs := range resp.Header {
		switch k {
		case "Date", "Connection", "Keep-Alive", "X-Request-Id":
			continue
		case "Cache-Tag", "Surrogate-Key":
			// The sidecar's, naming what the answer shows for CDN purges.
			if !strings.HasPrefix(resp.Header.Get(k), "rest") {
				t.Errorf("%s %s: %s %q", method, url, k, resp.Header.Get(k))
			}
			continue
		case "Age":
			// A kept answer's: the seconds it has been kept (RFC 9111 §5.1).
			if n, err := strconv.Atoi(resp.Header.Get(k)); err != nil || n < 0 || len(vs) != 1 {
				t.Errorf("%s %s: Age %q", method, url, vs)
			}
			continue
		case "Content-Length":
			// Framing, as Transfer-Encoding is: PHP's answers come chunked,
			// a kept one goes out with its length.
			if n, err := strconv.Atoi(resp.Header.Get(k)); err != nil || (method == http.MethodGet && n != len(body)) {
				t.Errorf("%s %s: Content-Length %q for %d bytes", method, url, resp.Header.Get(k), len(body))
			}
			continue
		}
		for _, v := range vs {
			h = append(h, k+": "+v)
		}
	}
	slices.Sort(h)
	return rawAnswer{resp.StatusCode, h, body}
}

// Stampede: 200 concurrent misses of one key reach PHP once, each client
// given that one answer; again after a write dropped it.
func restCacheStampede(t *testing.T, fs *wptest.Site) {
	drop := func() {
		dropped := byReason(t, fs, "wpsidecar_rest_cache_drops_total", "written")
		sqlExec(t, fs.DB(t), "INSERT INTO wp_rc_stock (post_id, qty) VALUES (424242, 1) ON DUPLICATE KEY UPDATE qty = qty + 1")
		testwait.For(t, "the write to drop the kept answers", func() bool {
			return byReason(t, fs, "wpsidecar_rest_cache_drops_total", "written") > dropped
		})
	}
	for round := range 2 {
		if round == 1 {
			drop()
		}
		testwait.For(t, fmt.Sprintf("round %d: a burst the feed vouched for throughout", round), func() bool {
			misses, behind := restCount(t, fs, "miss"), bypasses(t, fs, "feed")
			bodies := burst(t, fs, "/wp-json/rctest/v1/plain?stampede=1", 200)
			if bypasses(t, fs, "feed") > behind {
				// On a loaded machine the feed fell behind during the
				// burst and some requests passed to PHP: again, from a
				// miss.
				t.Logf("round %d: the feed fell behind during the burst; again", round)
				drop()
				return false
			}
			if n := restCount(t, fs, "miss") - misses; n != 1 || len(bodies) != 1 {
				t.Errorf("round %d: 200 concurrent misses reached PHP %d times, %d distinct answers", round, n, len(bodies))
			}
			return true
		})
	}
}

// burst sends n anonymous GETs of target at once, and counts the bodies
// they were answered with.
func burst(t *testing.T, fs *wptest.Site, target string, n int) map[string]int {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		bodies = map[string]int{}
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := anonymous(t, fs, target)
			mu.Lock()
			bodies[a.body]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return bodies
}

// By entity: a change of post A drops the answers that show A and the
// lists, and keeps post B's.
func restCacheByEntity(t *testing.T, fs *wptest.Site) {
	var a, b int64
	fs.PHP(t, `return wp_insert_post(array("post_title" => "rc A", "post_status" => "publish", "post_author" => 1));`, &a)
	fs.PHP(t, `return wp_insert_post(array("post_title" => "rc B", "post_status" => "publish", "post_author" => 1));`, &b)
	pathA, pathB, list := fmt.Sprintf("/wp-json/wp/v2/posts/%d", a), fmt.Sprintf("/wp-json/wp/v2/posts/%d", b), "/wp-json/wp/v2/posts?per_page=3"
	for _, p := range []string{pathA, pathB, list} {
		waitKept(t, fs, p)
	}
	fs.PHP(t, fmt.Sprintf(`return wp_update_post(array("ID" => %d, "post_title" => "rc A changed"));`, a), nil)
	for _, p := range []string{pathA, list} {
		if _, byThen := within(maxStaleness, func() bool { return strings.Contains(anonymous(t, fs, p).body, `"rendered":"rc A changed"`) }); !byThen {
			t.Errorf("%s: the change of A not shown %s after", p, maxStaleness)
		}
	}
	// B's answer is still kept: the next GET the feed vouches for is a
	// hit, not a miss (while the feed is behind, a GET passes to PHP).
	testwait.For(t, "a GET of post B looked up", func() bool {
		hits, misses := restCount(t, fs, "hit"), restCount(t, fs, "miss")
		body := anonymous(t, fs, pathB).body
		switch {
		case restCount(t, fs, "hit") > hits:
			if !strings.Contains(body, `"rendered":"rc B"`) {
				t.Errorf("post B's kept answer: %s", body)
			}
		case restCount(t, fs, "miss") > misses:
			t.Errorf("post B's answer not kept through a change of A (drops: %s)", drops(t, fs))
		default:
			return false
		}
		return true
	})
}

// TestRESTCache_Varnish: through a real Varnish in front of the sidecar
// (deploy/varnish/wpsidecar.vcl), PHP's answers kept by --cache-rest carry
// their tags; an edit of post A purges A's answer and the posts list, and
// Varnish keeps post B's.
func TestRESTCache_Varnish(t *testing.T) {
	fs := startFeedSiteWith(t, wptest.Options{Varnish: true}, "", "", "--cache-rest", "wp/v2")
	via := func(path string) (string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, fs.VarnishURL+path, nil)
		resp, body := do(t, nil, req)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s through Varnish: %d %s", path, resp.StatusCode, body)
		}
		return body, resp.Header
	}
	var a, b int64
	fs.PHP(t, `return wp_insert_post(array("post_title" => "rc A", "post_status" => "publish", "post_author" => 1));`, &a)
	fs.PHP(t, `return wp_insert_post(array("post_title" => "rc B", "post_status" => "publish", "post_author" => 1));`, &b)
	pathA, pathB, list := fmt.Sprintf("/wp-json/wp/v2/posts/%d", a), fmt.Sprintf("/wp-json/wp/v2/posts/%d", b), "/wp-json/wp/v2/posts?per_page=3"
	// The feed's purges of the two inserts first: an answer fetched while
	// the feed was behind goes out tagged and Varnish keeps it, and the
	// insert's purge, coming after, would then drop post B's answer.
	testwait.For(t, "the purges of posts A's and B's inserts", func() bool {
		log := fs.SidecarLog()
		return strings.Contains(log, fmt.Sprintf(`"rest:post:%d"`, a)) && strings.Contains(log, fmt.Sprintf(`"rest:post:%d"`, b))
	})
	for _, p := range []string{pathA, pathB, list} {
		// Cached once the sidecar's own answer names its tags.
		testwait.For(t, p+" cached by Varnish with its tags", func() bool {
			_, h := via(p)
			return h.Get("X-Cache") == "HIT" && strings.HasPrefix(h.Get("Surrogate-Key"), "rest ")
		})
	}
	if _, h := via(pathB); h.Get("Surrogate-Key") != fmt.Sprintf("rest rest:post:%d rest:user:1 rest:term:1", b) {
		t.Errorf("post B's tags: %q", h.Get("Surrogate-Key"))
	}
	fs.PHP(t, fmt.Sprintf(`return wp_update_post(array("ID" => %d, "post_title" => "rc A changed"));`, a), nil)
	for _, p := range []string{pathA, list} {
		testwait.For(t, p+" purged, showing the change", func() bool {
			body, _ := via(p)
			return strings.Contains(body, `"rendered":"rc A changed"`)
		})
	}
	if body, h := via(pathB); h.Get("X-Cache") != "HIT" || !strings.Contains(body, `"rendered":"rc B"`) {
		t.Errorf("post B's answer not kept by Varnish through a change of A: %s", h.Get("X-Cache"))
	}
	t.Run("a bulk write", func(t *testing.T) { varnishBulkWrite(t, fs, via) })
	t.Run("an answer of many entities", func(t *testing.T) { varnishManyTags(t, fs, via) })
	t.Run("a new leader", func(t *testing.T) { varnishNewLeader(t, fs, via) })
}

// A new leader: with the leading instance killed, a post written before
// the other instance leads is purged by that one once it does (issue 55,
// item 5: a follower let what it noticed go, and Varnish kept the old
// answer). The killed instance, Varnish's backend, comes back following.
func varnishNewLeader(t *testing.T, fs *wptest.Site, via func(string) (string, http.Header)) {
	second, err := fs.StartInstance()
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the site's own instance to lead", fs.Sidecar.Leads)
	var post int64
	fs.PHP(t, `return wp_insert_post(array("post_title" => "leader A", "post_status" => "publish", "post_author" => 1));`, &post)
	path := fmt.Sprintf("/wp-json/wp/v2/posts/%d", post)
	testwait.For(t, "the post's purge", func() bool { return strings.Contains(fs.SidecarLog(), fmt.Sprintf(`"rest:post:%d"`, post)) })
	testwait.For(t, path+" cached by Varnish", func() bool {
		_, h := via(path)
		return h.Get("X-Cache") == "HIT"
	})
	fs.Sidecar.Kill()
	// At once: the second instance notices it before it leads (it waits
	// on the lock for a second at a time).
	sqlExec(t, fs.DB(t), fmt.Sprintf("UPDATE wp_posts SET post_title = 'leader A changed' WHERE ID = %d", post))
	testwait.For(t, "the second instance to lead", second.Leads)
	if err := fs.Sidecar.Restart(); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, path+" purged by the new leader", func() bool {
		body, _ := via(path)
		return strings.Contains(body, `"rendered":"leader A changed"`)
	})
	if fs.Sidecar.Leads() {
		t.Error("the killed instance, back, leads: the second should")
	}
}

// A bulk write: one SQL UPDATE of a thousand posts (as wp search-replace
// makes) purges every one of them and the lists through Varnish (issue
// 55, item 1: its one xkey-purge header was refused with 400, the purge
// given up, and Varnish kept the old answers).
func varnishBulkWrite(t *testing.T, fs *wptest.Site, via func(string) (string, http.Header)) {
	db := fs.DB(t)
	var values []string
	for i := range 1000 {
		values = append(values, fmt.Sprintf("(1, NOW(), UTC_TIMESTAMP(), '', 'bulk %d', '', 'publish', 'bulk-%d', '', '', NOW(), UTC_TIMESTAMP(), '', 'post')", i, i))
	}
	sqlExec(t, db, `INSERT INTO wp_posts (post_author, post_date, post_date_gmt, post_content, post_title, post_excerpt, post_status, post_name, to_ping, pinged, post_modified, post_modified_gmt, post_content_filtered, post_type) VALUES `+strings.Join(values, ", "))
	var last int64
	db.QueryRow("SELECT MAX(ID) FROM wp_posts WHERE post_title LIKE 'bulk %'").Scan(&last)
	path, list := fmt.Sprintf("/wp-json/wp/v2/posts/%d", last), "/wp-json/wp/v2/posts?per_page=2&orderby=id&order=desc"
	testwait.For(t, "the bulk insert's purge", func() bool { return strings.Contains(fs.SidecarLog(), fmt.Sprintf(`"rest:post:%d"`, last)) })
	for _, p := range []string{path, list} {
		testwait.For(t, p+" cached by Varnish", func() bool {
			body, h := via(p)
			return h.Get("X-Cache") == "HIT" && strings.Contains(body, `"rendered":"bulk 999"`)
		})
	}
	sqlExec(t, db, "UPDATE wp_posts SET post_title = REPLACE(post_title, 'bulk', 'replaced') WHERE post_title LIKE 'bulk %'")
	for _, p := range []string{path, list} {
		testwait.For(t, p+" purged after the bulk write", func() bool {
			body, _ := via(p)
			return strings.Contains(body, `"rendered":"replaced 999"`)
		})
	}
}

// An answer of many entities: a post with 400 tags names more than the
// tag headers hold; it is tagged as a list, and an edit of the post
// purges it through Varnish (issue 55, item 3: cut back to "rest", it
// stayed stale after its title changed).
func varnishManyTags(t *testing.T, fs *wptest.Site, via func(string) (string, http.Header)) {
	var post int64
	fs.PHP(t, `$ids = array();
		for ($i = 0; $i < 400; $i++) { $t = wp_insert_term("many " . $i, "post_tag"); $ids[] = $t["term_id"]; }
		return wp_insert_post(array("post_title" => "many tags", "post_status" => "publish", "post_author" => 1, "tags_input" => $ids));`, &post)
	path := fmt.Sprintf("/wp-json/wp/v2/posts/%d", post)
	testwait.For(t, "the post's purge", func() bool { return strings.Contains(fs.SidecarLog(), fmt.Sprintf(`"rest:post:%d"`, post)) })
	testwait.For(t, path+" cached by Varnish", func() bool {
		_, h := via(path)
		return h.Get("X-Cache") == "HIT"
	})
	if _, h := via(path); h.Get("Surrogate-Key") != "rest rest:lists" {
		t.Errorf("the tags of an answer of 400 terms: %q, want the list's", h.Get("Surrogate-Key"))
	}
	fs.PHP(t, fmt.Sprintf(`return wp_update_post(array("ID" => %d, "post_title" => "many tags changed"));`, post), nil)
	testwait.For(t, path+" purged, showing the change", func() bool {
		body, _ := via(path)
		return strings.Contains(body, `"rendered":"many tags changed"`)
	})
}

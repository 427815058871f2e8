//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/changes/delivery"
	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

// maxStaleness is the sidecar's --max-staleness in these tests (the
// default).
const maxStaleness = 250 * time.Millisecond

// startFeedSite stands up a WordPress of its own on a MariaDB with a
// binary log, the sidecar in front with --serve-from-feed (and webhooks to
// hook, when given), and waits until the sidecar answers from memory.
// The theme options configuration is themeopts, or the test's own when
// ""; extra are more of the sidecar's arguments.
func startFeedSite(t *testing.T, hook, themeopts string, extra ...string) *wptest.Site {
	return startFeedSiteWith(t, wptest.Options{}, hook, themeopts, extra...)
}

// startFeedSiteWith is startFeedSite with more of the site's options (e.g.
// Companion); its database, must-use plugins and sidecar arguments are
// startFeedSite's.
func startFeedSiteWith(t *testing.T, o wptest.Options, hook, themeopts string, extra ...string) *wptest.Site {
	srv := testdb.StartBinlogServer(t)
	if themeopts == "" {
		themeopts = "../web/themeopts/testdata/config.json"
	}
	themeoptsConfig, err := filepath.Abs(themeopts)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--themeopts-config", themeoptsConfig, "--change-feed", "binlog",
		"--binlog-dsn", "root@tcp(127.0.0.1:" + strconv.Itoa(srv.Port) + ")/", "--serve-from-feed", "--change-interval", "1h",
		// The revocation measurement fails hundreds of times a second on purpose.
		"--auth-fail-limit-ip", "0", "--auth-fail-limit-account", "0"}
	if hook != "" {
		args = append(args, "--webhook-urls", hook, "--webhook-secret", webhookSecret)
	}
	args = append(args, extra...)
	o.DB, o.MUPlugins, o.SidecarArgs = srv.Config(), append(o.MUPlugins, "scripts/wp/fieldmgr-twin.php"), args
	fs, err := wptest.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sidecar log:\n%s", tail(fs.SidecarLog(), 30))
		}
		fs.Stop()
	})
	testwait.For(t, "readyz saying memory", func() bool {
		return strings.Contains(ask(t, fs.AdminURL, "", http.MethodGet, "/readyz", "").body, `"serve_from_feed":"memory"`)
	})
	return fs
}

func basic(login, password string) []string {
	return []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(login+":"+password))}
}

// memoryReads is the sidecar's count of answers from memory: reads
// answered from the memo, and answers given again from those kept.
func memoryReads(t *testing.T, fs *wptest.Site) int {
	t.Helper()
	return metric(t, fs, `wpsidecar_serve_from_feed_reads_total{source="memory"}`) + metric(t, fs, `wpsidecar_prepared_answers_total{result="given"}`)
}

// metric is the value of a counter of the sidecar's (its name and labels).
func metric(t *testing.T, fs *wptest.Site, name string) int {
	t.Helper()
	// The sample's own line: a counter without labels is named in its
	// "# HELP" line too, followed by words.
	for _, l := range strings.Split(ask(t, fs.AdminURL, "", http.MethodGet, "/metrics", "").body, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			n, err := strconv.ParseFloat(strings.Fields(v)[0], 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return int(n)
		}
	}
	t.Fatal("no " + name)
	return 0
}

// TestServeFromFeed: with --serve-from-feed, GETs are answered from memory
// and every change PHP makes through WordPress's own API is answered as
// WordPress answers it (the twin of the routes, scripts/wp/fieldmgr-twin.php,
// on the same request) no later than --max-staleness after PHP returned:
// a user created (a miss is not remembered), a role changed, an
// application password revoked, a session destroyed, a user deleted, a
// field group inserted and renamed, the theme options row deleted and
// created again; the sidecar's own writes are read back at once. Then the
// revocation window, measured.
func TestServeFromFeed(t *testing.T) {
	received := make(chan time.Time, 256)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(r.Body)
		if err := delivery.Verify(webhookSecret, r.Header.Get(delivery.HeaderTimestamp), r.Header.Get(delivery.HeaderSignature), body, at, time.Minute); err == nil &&
			string(body) == `{"namespace":"themeopts","ids":["accent_color"]}` {
			received <- at
		}
	}))
	defer hook.Close()
	fs := startFeedSite(t, hook.URL, "")
	admin := fs.Users["administrator"]

	// asWordPress asks the sidecar and WordPress the same; the sidecar
	// must agree at once or, at the latest, max-staleness later: the same
	// status, and the same body, or for a failed Basic authentication the
	// contract's error (docs/api.md §1: WordPress's twin route says only
	// rest_forbidden there).
	late := 0
	asWordPress := func(step string, wantStatus int, wantError string, hdr ...string) {
		t.Helper()
		var ours, wp answer
		atOnce, byThen := within(maxStaleness, func() bool {
			ours = ask(t, fs.URL, "fieldmgr/v1", http.MethodGet, "/wp-json/{ns}/field-groups", "", hdr...)
			wp = ask(t, fs.WPURL, "twin/v1", http.MethodGet, "/wp-json/{ns}/field-groups", "", hdr...)
			same := sameBody(ours.body, wp.body)
			if wantError != "" {
				same = strings.HasPrefix(ours.body, `{"code":"`+wantError+`"`)
			}
			return ours.status == wp.status && same && ours.status == wantStatus
		})
		if !atOnce {
			late++
		}
		if !byThen {
			t.Errorf("%s: max-staleness after the change,\n sidecar   %d %s\n WordPress %d %s (want %d)", step, ours.status, ours.body, wp.status, wp.body, wantStatus)
		}
	}
	php := func(code string, out any) { t.Helper(); fs.PHP(t, code, out) }

	// A miss, then the user created: seen.
	asWordPress("before the user exists", 401, "invalid_username", basic("feed_user", "abcd abcd abcd abcd abcd abcd")...)
	var made struct {
		ID       int64  `json:"id"`
		Password string `json:"password"`
		UUID     string `json:"uuid"`
	}
	php(`$id = wp_insert_user(array("user_login" => "feed_user", "user_pass" => "pw-feed-user", "user_email" => "feed_user@example.test", "role" => "administrator"));
		$c = WP_Application_Passwords::create_new_application_password($id, array("name" => "feed"));
		return array("id" => $id, "password" => WP_Application_Passwords::chunk_password($c[0]), "uuid" => $c[1]["uuid"]);`, &made)
	creds := basic("feed_user", made.Password)
	asWordPress("user created", 200, "", creds...)
	// Answered from memory (on a loaded machine the feed may miss its
	// max-staleness for a while: those GETs read the database).
	before := memoryReads(t, fs)
	testwait.For(t, "a repeated GET answered from memory", func() bool {
		asWordPress("again", 200, "", creds...)
		return memoryReads(t, fs) > before
	})

	php(fmt.Sprintf(`(new WP_User(%d))->set_role("editor"); return true;`, made.ID), nil)
	asWordPress("role changed to editor", 403, "", creds...)
	php(fmt.Sprintf(`(new WP_User(%d))->set_role("administrator"); return true;`, made.ID), nil)
	asWordPress("role changed back", 200, "", creds...)

	php(fmt.Sprintf(`return WP_Application_Passwords::delete_application_password(%d, %q);`, made.ID, made.UUID), nil)
	asWordPress("application password revoked", 401, "incorrect_password", creds...)

	cookie := fs.Login(t, wptest.User{Login: "feed_user", Password: "pw-feed-user"})
	nonce := fs.RESTNonce(t, cookie)
	var jar []string
	for _, ck := range cookie.Jar.Cookies(mustURL(fs.URL + "/")) {
		jar = append(jar, ck.Name+"="+ck.Value)
	}
	session := []string{"Cookie", strings.Join(jar, "; "), "X-WP-Nonce", nonce}
	asWordPress("logged in", 200, "", session...)
	php(fmt.Sprintf(`WP_Session_Tokens::get_instance(%d)->destroy_all(); return true;`, made.ID), nil)
	asWordPress("sessions destroyed", 403, "", session...)

	var again []string
	php(fmt.Sprintf(`$c = WP_Application_Passwords::create_new_application_password(%d, array("name" => "feed2")); return array(WP_Application_Passwords::chunk_password($c[0]));`, made.ID), &again)
	creds = basic("feed_user", again[0])
	asWordPress("a new application password", 200, "", creds...)
	php(fmt.Sprintf(`require_once ABSPATH . "wp-admin/includes/user.php"; return wp_delete_user(%d);`, made.ID), nil)
	asWordPress("user deleted", 401, "invalid_username", creds...)

	// Field groups written by PHP, then by the sidecar itself (which
	// forgets what it wrote at once: no wait at all).
	adminCreds := basic(admin.Login, admin.ApplicationPassword)
	php(`global $wpdb; return $wpdb->insert($wpdb->prefix . "fieldmgr_groups", array("group_key" => "feed_g", "title" => "T1",
		"config" => '{"type":"post","fields":{"a":{"type":"text","label":"A"}}}', "status" => "active",
		"created_at" => "2026-01-01 00:00:00", "updated_at" => "2026-01-01 00:00:00"));`, nil)
	asWordPress("group inserted by PHP", 200, "", adminCreds...)
	php(`global $wpdb; return $wpdb->update($wpdb->prefix . "fieldmgr_groups", array("title" => "T2"), array("group_key" => "feed_g"));`, nil)
	asWordPress("group renamed by PHP", 200, "", adminCreds...)
	if a := ask(t, fs.URL, "", http.MethodPost, "/wp-json/fieldmgr/v1/field-groups/feed_g/toggle", "", adminCreds...); a.status != 200 {
		t.Fatalf("toggle: %d %s", a.status, a.body)
	}
	if a := ask(t, fs.URL, "", http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", "", adminCreds...); !strings.Contains(a.body, `"status":"inactive"`) {
		t.Errorf("the sidecar's own write, read at once: %s", a.body)
	}
	asWordPress("group toggled by the sidecar", 200, "", adminCreds...)

	// The theme options row, deleted and created again.
	options := func(step, want string) {
		t.Helper()
		var a answer
		atOnce, byThen := within(maxStaleness, func() bool {
			a = ask(t, fs.URL, "", http.MethodGet, "/wp-json/themeopts/v1/options", "", adminCreds...)
			return a.status == 200 && a.body == want
		})
		if !atOnce {
			late++
		}
		if !byThen {
			t.Errorf("%s: max-staleness after the change: %d %s, want %s", step, a.status, a.body, want)
		}
	}
	php(`return update_option("themeopts_options", array("accent_color" => "#111111"));`, nil)
	options("option saved", `{"accent_color":"#111111"}`)
	options("option read again", `{"accent_color":"#111111"}`)
	php(`return delete_option("themeopts_options");`, nil)
	options("option deleted", `{}`)
	php(`return add_option("themeopts_options", array("accent_color" => "#222222"));`, nil)
	options("option created again", `{"accent_color":"#222222"}`)
	t.Logf("%d of the answers right after PHP returned were not yet the new ones; each was by max-staleness", late)

	measureRevocation(t, fs, admin.ID, 30)
	measureWebhooks(t, fs, received, 100)
}

// measureWebhooks has PHP save the theme options n times, 20 ms apart,
// and reports how long after each update_option returned (its commit) the
// signed webhook reached a loopback receiver: the change interval is an
// hour, so only the binlog feed can send them.
func measureWebhooks(t *testing.T, fs *wptest.Site, received <-chan time.Time, n int) {
	for len(received) > 0 { // the traps' own changes
		<-received
	}
	var committed []float64
	fs.PHP(t, fmt.Sprintf(`$at = array(); for ($i = 0; $i < %d; $i++) { update_option("themeopts_options", array("accent_color" => sprintf("#%%06x", $i))); $at[] = microtime(true); usleep(20000); } return $at;`, n), &committed)
	var took []time.Duration
	for i, c := range committed {
		select {
		case at := <-received:
			took = append(took, at.Sub(time.Unix(0, int64(c*1e9))))
		case <-time.After(10 * time.Second):
			t.Fatalf("change %d: no webhook", i)
		}
	}
	slices.Sort(took)
	t.Logf("PHP's update_option committed to the signed webhook received, %d changes: p50 %s, p99 %s, max %s", n,
		took[n/2].Round(10*time.Microsecond), took[n*99/100].Round(10*time.Microsecond), took[n-1].Round(10*time.Microsecond))
}

// within asks right at once and, if it does not hold yet, once more when
// bound has passed: what a bound promises is an answer right by then.
func within(bound time.Duration, right func() bool) (atOnce, byThen bool) {
	if right() {
		return true, true
	}
	// Not a wait for a condition: letting the bound pass is the point.
	time.Sleep(bound)
	return false, right()
}

// measureRevocation revokes an application password n times while four
// clients keep asking with it, and reports the revocation window: how long
// after PHP's delete_application_password returned (its commit) a request
// sent could still be let in, and when the first refusal came.
func measureRevocation(t *testing.T, fs *wptest.Site, userID int64, n int) {
	login := fs.Users["administrator"].Login
	var windows, firsts []time.Duration
	client := &http.Client{Timeout: 10 * time.Second}
	for i := 0; i < n; i++ {
		var made []string
		fs.PHP(t, fmt.Sprintf(`$c = WP_Application_Passwords::create_new_application_password(%d, array("name" => "window")); return array(WP_Application_Passwords::chunk_password($c[0]), $c[1]["uuid"]);`, userID), &made)
		auth := basic(login, made[0])[1]
		var (
			mu       sync.Mutex
			accepted []time.Time // when each request that got 200 was sent
			refused  []time.Time // when each 401 arrived
			answered time.Time   // when the latest request answered was sent
			failed   []string
			stop     = make(chan struct{})
			wg       sync.WaitGroup
		)
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					req, _ := http.NewRequest(http.MethodGet, fs.URL+"/wp-json/fieldmgr/v1/field-groups", nil)
					req.Header.Set("Authorization", auth)
					sent := time.Now()
					resp, err := client.Do(req)
					if err != nil {
						mu.Lock()
						failed = append(failed, err.Error())
						mu.Unlock()
						continue
					}
					resp.Body.Close()
					mu.Lock()
					if sent.After(answered) {
						answered = sent
					}
					switch resp.StatusCode {
					case 200:
						accepted = append(accepted, sent)
					case 401:
						refused = append(refused, time.Now())
					default:
						failed = append(failed, resp.Status)
					}
					mu.Unlock()
				}
			}()
		}
		testwait.For(t, "the password let in, so in memory", func() bool { mu.Lock(); defer mu.Unlock(); return len(accepted) > 0 })
		var committed float64
		fs.PHP(t, fmt.Sprintf(`WP_Application_Passwords::delete_application_password(%d, %q); return microtime(true);`, userID, made[1]), &committed)
		at := time.Unix(0, int64(committed*1e9))
		testwait.For(t, "an answer to a request sent max-staleness after the commit", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return answered.After(at.Add(maxStaleness))
		})
		close(stop)
		wg.Wait()
		if len(refused) == 0 || len(failed) > 0 {
			t.Fatalf("revocation %d: %d let in, %d refused, %d failures (first: %q)", i, len(accepted), len(refused), len(failed), failed[:min(1, len(failed))])
		}
		window := time.Duration(0)
		for _, s := range accepted {
			window = max(window, s.Sub(at))
		}
		windows = append(windows, window)
		firsts = append(firsts, max(0, slices.MinFunc(refused, time.Time.Compare).Sub(at)))
		if window > maxStaleness {
			t.Errorf("revocation %d: a request sent %s after the commit was let in (max-staleness %s)", i, window, maxStaleness)
		}
	}
	slices.Sort(windows)
	slices.Sort(firsts)
	p := func(d []time.Duration, q float64) time.Duration {
		return d[min(len(d)-1, int(q*float64(len(d))))].Round(10 * time.Microsecond)
	}
	t.Logf("revocation window over %d revocations in PHP (last request let in, sent after the commit): p50 %s, p99 %s, max %s; first refusal after the commit: p50 %s, p99 %s",
		n, p(windows, 0.5), p(windows, 0.99), windows[len(windows)-1].Round(10*time.Microsecond), p(firsts, 0.5), p(firsts, 0.99))
}

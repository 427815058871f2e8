//go:build soak

package soak

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

var (
	duration   = flag.Duration("duration", 10*time.Minute, "how long the load runs")
	faultEvery = flag.Duration("fault-every", 25*time.Second, "time between faults")
	downFor    = flag.Duration("down-for", 5*time.Second, "how long a stopped dependency stays down")
	workers    = flag.Int("workers", 12, "load workers")
	readme     = flag.String("readme", "", "the page (docs/operations.md) to write the results table into, between its soak markers")
)

// Request kinds.
const (
	kindSidecarWrite = "sidecar write"
	kindSidecarRead  = "sidecar read"
	kindPage         = "PHP page"
	kindStatic       = "static file"
)

// answer is one request as the client saw it.
type answer struct {
	kind   string
	sent   time.Time
	took   time.Duration
	status int    // 0: no answer (lost)
	wrong  string // why the answer is wrong, when it is
	detail string // the start of an answer that is not a success, or why none came
}

// fault is one injected fault and, for a dependency, when it was down.
type fault struct {
	name    string
	start   time.Time
	back    time.Time // when the dependency answered again; zero for faults without one
	affects []string  // the request kinds whose recovery is measured
}

// TestSoak runs the load and the faults, then reports and judges.
func TestSoak(t *testing.T) {
	dir := t.TempDir()
	db := testdb.StartServer(t)
	rds := startRedis(t)
	os.Setenv("WPSIDECAR_TEST_REDIS", rds.addr) // the object cache wptest installs
	site, err := wptest.Start(wptest.Options{DB: db.Config(), RedisObjectCache: true, NoSidecar: true})
	if err != nil {
		t.Fatal(err)
	}
	defer site.Stop()

	optsPath := filepath.Join(dir, "themeopts.json")
	writeConfig := func(generation int) {
		var fields []string
		for w := range *workers {
			fields = append(fields, fmt.Sprintf(`{"id":"w%d","type":"text","title":"Worker %d"}`, w, w))
		}
		fields = append(fields, fmt.Sprintf(`{"id":"extra%d","type":"text","title":"Generation %d"}`, generation, generation))
		cfg := `{"opt_name":"soak_options","capability":"edit_theme_options","sections":[{"id":"all","title":"All","fields":[` + strings.Join(fields, ",") + `]}]}`
		tmp := optsPath + ".tmp"
		if err := os.WriteFile(tmp, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, optsPath); err != nil { // never half-written
			t.Fatal(err)
		}
	}
	writeConfig(0)
	args := []string{"--upstream", site.WPURL, "--wp-config", site.WPConfig, "--themeopts-config", optsPath,
		"--shutdown-delay", "2s", "--settings-refresh", "1s"}
	a := newInstance(t, "a", site.Bin, dir, args...)
	b := newInstance(t, "b", site.Bin, dir, args...)
	startBalancer(t, strings.TrimPrefix(site.URL, "http://"), a, b)

	admin := site.Users["administrator"]
	auth := wptest.BasicAuth(admin.Login, admin.ApplicationPassword)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	// send asks through the balancer; a request that got no whole answer
	// has status 0 and the error as its body.
	send := func(method, path, body string) (int, []byte, time.Duration) {
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, site.URL+path, r)
		req.Header.Set("Authorization", auth)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, []byte(err.Error()), time.Since(start)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, []byte(fmt.Sprintf("%d, then %v", resp.StatusCode, err)), time.Since(start)
		}
		return resp.StatusCode, b, time.Since(start)
	}
	for w := range *workers { // each worker's own field group
		code, body, _ := send(http.MethodPost, "/wp-json/fieldmgr/v1/field-groups", fmt.Sprintf(`{"group_key":"soak_w%d","title":"t-0"}`, w))
		if code != 201 && !bytes.Contains(body, []byte("already exists")) {
			t.Fatalf("creating worker %d's group: %d %s", w, code, body)
		}
	}

	// The load: each worker writes its own theme option and field group and
	// reads them back, lists the groups, and asks for a PHP page and a
	// static file, in turn, until stop.
	stop := make(chan struct{})
	results := make([][]answer, *workers)
	var wg sync.WaitGroup
	for w := range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opt, group := fmt.Sprintf("w%d", w), fmt.Sprintf("soak_w%d", w)
			record := func(kind string, sent time.Time, code int, body []byte, took time.Duration, wrong string) {
				a := answer{kind: kind, sent: sent, took: took, status: code, wrong: wrong}
				if code != 200 && code != 201 {
					a.detail = string(body[:min(len(body), 160)])
				}
				results[w] = append(results[w], a)
			}
			// writeRead writes v and reads it back. known is what a read may
			// find: v alone after a write answered 200, else v or what was
			// possible before (a write without its answer may have happened).
			writeRead := func(known *[]string, v, method, path, body, readPath string, found func([]byte) (string, error)) {
				sent := time.Now()
				code, b, took := send(method, path, body)
				record(kindSidecarWrite, sent, code, b, took, "")
				if code == 200 {
					*known = []string{v}
				} else {
					*known = append(*known, v)
				}
				sent = time.Now()
				code, b, took = send(http.MethodGet, readPath, "")
				wrong := ""
				if code == 200 {
					switch got, err := found(b); {
					case err != nil:
						wrong = "unreadable answer: " + err.Error()
					case !slices.Contains(*known, got):
						wrong = fmt.Sprintf("read %q after writing %q", got, *known)
					default:
						*known = []string{got}
					}
				}
				record(kindSidecarRead, sent, code, b, took, wrong)
			}
			optionOf := func(b []byte) (string, error) {
				var got map[string]any
				err := json.Unmarshal(b, &got)
				v, _ := got[opt].(string)
				return v, err
			}
			titleOf := func(b []byte) (string, error) {
				var g struct{ Title string }
				err := json.Unmarshal(b, &g)
				return g.Title, err
			}
			var knownOption, knownTitle []string
			for seq := 1; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				val, title := fmt.Sprintf("v-%d-%d", w, seq), fmt.Sprintf("t-%d", seq)
				writeRead(&knownOption, val, http.MethodPost, "/wp-json/themeopts/v1/options", fmt.Sprintf(`{%q:%q}`, opt, val), "/wp-json/themeopts/v1/options", optionOf)
				writeRead(&knownTitle, title, http.MethodPut, "/wp-json/fieldmgr/v1/field-groups/"+group, fmt.Sprintf(`{"title":%q}`, title), "/wp-json/fieldmgr/v1/field-groups/"+group, titleOf)

				sent := time.Now()
				code, body, took := send(http.MethodGet, "/wp-json/fieldmgr/v1/field-groups", "")
				wrong := ""
				if code == 200 && !bytes.Contains(body, []byte(`"id":"`+group+`"`)) {
					wrong = "the list lacks the worker's group"
				}
				record(kindSidecarRead, sent, code, body, took, wrong)

				sent = time.Now()
				code, body, took = send(http.MethodGet, "/", "")
				record(kindPage, sent, code, body, took, "")
				sent = time.Now()
				code, body, took = send(http.MethodGet, "/static.txt", "")
				wrong = ""
				if code == 200 && string(body) != "hello from nginx\n" {
					wrong = fmt.Sprintf("static file %q", body)
				}
				record(kindStatic, sent, code, body, took, wrong)
			}
		}()
	}

	// Memory, goroutines and descriptors of both instances, every 5 s.
	var samples []sample
	var samplesMu sync.Mutex
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			for _, in := range []*instance{a, b} {
				if rss, g, fds, err := in.metrics(); err == nil {
					samplesMu.Lock()
					samples = append(samples, sample{time.Now(), in.name, rss, g, fds})
					samplesMu.Unlock()
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Second):
			}
		}
	}()

	// The faults, in turn, on the test's goroutine.
	began := time.Now()
	end := began.Add(*duration)
	var faults []fault
	generation := 0
	wordpress := func(command string) func() {
		return func() {
			if err := site.WordPress(command); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k := 0; ; k++ {
		at := began.Add(*faultEvery * time.Duration(k+1))
		last := at.Add(*faultEvery).After(end)
		if last {
			at = end
		}
		// Not a wait for a condition: the run's faults are paced by the
		// clock, and the run lasts -duration.
		time.Sleep(time.Until(at))
		if last {
			break
		}
		f := fault{start: time.Now()}
		var down, up func() // an outage of -down-for
		switch k % 6 {
		case 0:
			// Recovery is the sidecar's routes': pages come back when
			// WordPress reconnects, which is PHP's doing.
			f.name, f.affects = "MariaDB stopped, started", []string{kindSidecarRead, kindSidecarWrite}
			down, up = db.Stop, db.Start
		case 1:
			f.name, f.affects = "PHP-FPM stopped (gracefully), started", []string{kindPage}
			down, up = wordpress("php-stop"), wordpress("php-start")
		case 2:
			f.name = "Redis stopped, started"
			down, up = rds.stop, func() { rds.start(t) }
		case 3:
			f.name = "SIGHUP to both instances"
			a.signal(syscall.SIGHUP)
			b.signal(syscall.SIGHUP)
		case 4:
			f.name = "configuration rewritten"
			generation++
			writeConfig(generation)
		case 5:
			f.name = "SIGTERM of one of two instances, restarted"
			b.term() // a (never stopped) keeps the whole run's memory curve
			b.start(t)
		}
		if down != nil {
			down()
			// Not a wait for a condition: the outage's length is the point.
			time.Sleep(*downFor)
			up()
			f.back = time.Now()
		}
		faults = append(faults, f)
		t.Logf("%s: %s", time.Since(began).Round(time.Second), f.name)
	}
	close(stop)
	wg.Wait()
	<-sampled

	var all []answer
	for _, r := range results {
		all = append(all, r...)
	}
	rep := judge(all, faults)
	rep.duration, rep.workers, rep.began = *duration, *workers, began
	rep.memory = memoryLine(samples, "a", began, end)
	table := rep.markdown()
	t.Log("\n" + table)
	if *readme != "" {
		if err := writeReadme(*readme, table); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range rep.examples {
		t.Log(e)
	}
	for _, problem := range rep.problems {
		t.Error(problem)
	}
}

// row is what one kind of fault did, over its occurrences: from its
// start to the next fault's.
type row struct {
	name                string
	times               int
	statuses            map[string]int
	longest, longestPHP time.Duration // the sidecar's routes; pages and files through to PHP and nginx
	recovery            time.Duration
	lost, wrong, own500 int
	hasRecovery         bool
}

type report struct {
	rows     []*row
	requests int
	problems []string
	memory   string
	duration time.Duration
	workers  int
	began    time.Time
	examples []string // the first few wrong or lost answers
}

// judge sorts every answer into the fault window it was sent in and tells
// what was allowed: a sidecar route may answer 503 only while the
// database is down or not yet back; a PHP page may carry PHP's 500
// (WordPress without its database) or 502 (PHP down) in those windows;
// the static file always 200; no answer is ever lost; no read finds
// other than what was written.
func judge(all []answer, faults []fault) *report {
	rep := &report{requests: len(all)}
	byName := map[string]*row{}
	rowOf := func(name string) *row {
		if byName[name] == nil {
			byName[name] = &row{name: name, statuses: map[string]int{}}
			rep.rows = append(rep.rows, byName[name])
		}
		return byName[name]
	}
	quiet := rowOf("none (between faults' effects)")
	for _, f := range faults {
		r := rowOf(f.name)
		r.times++
		r.hasRecovery = len(f.affects) > 0
	}
	slices.SortFunc(all, func(x, y answer) int { return x.sent.Compare(y.sent) })
	for _, a := range all {
		// The window of the last fault that began before the answer
		// ended: a request sent just before a fault may meet it.
		var f *fault
		for i := range faults {
			if a.sent.Add(a.took).After(faults[i].start) {
				f = &faults[i]
			}
		}
		r := quiet
		if f != nil {
			r = rowOf(f.name)
		}
		label := fmt.Sprint(a.status)
		if a.status == 0 {
			label = "no answer"
		}
		r.statuses[label]++
		if a.kind == kindSidecarRead || a.kind == kindSidecarWrite {
			r.longest = max(r.longest, a.took)
		} else {
			r.longestPHP = max(r.longestPHP, a.took)
		}
		ok := a.status == 200 || a.status == 201
		allowed := ok
		dbWindow := f != nil && strings.HasPrefix(f.name, "MariaDB")
		phpWindow := f != nil && strings.HasPrefix(f.name, "PHP")
		// WordPress's Redis object cache fails its pages without Redis.
		redisWindow := f != nil && strings.HasPrefix(f.name, "Redis")
		switch a.kind {
		case kindSidecarRead, kindSidecarWrite:
			allowed = ok || a.status == 503 && dbWindow
			if a.status == 500 {
				r.own500++
			}
		case kindPage:
			allowed = ok || (dbWindow || redisWindow) && (a.status == 500 || a.status == 503) || phpWindow && (a.status == 502 || a.status == 504)
		}
		if a.status == 0 {
			r.lost++
			allowed = true // counted as lost, not wrong
		}
		if a.wrong != "" || !allowed {
			r.wrong++
		}
		if (a.status == 0 || a.wrong != "" || !allowed) && len(rep.examples) < 20 {
			rep.examples = append(rep.examples, fmt.Sprintf("%s %s at %s: %d %s %q", a.kind, f.nameOr(), a.sent.Format("15:04:05.000"), a.status, a.wrong, a.detail))
		}
		// Recovery: the end of the last failed answer to a request sent
		// after the dependency was back, of the kinds it serves.
		if f != nil && !ok && a.status != 0 && slices.Contains(f.affects, a.kind) && !a.sent.Before(f.back) {
			r.recovery = max(r.recovery, a.sent.Add(a.took).Sub(f.back))
		}
	}
	for _, r := range rep.rows {
		if r.lost > 0 {
			rep.problems = append(rep.problems, fmt.Sprintf("%s: %d requests without an answer", r.name, r.lost))
		}
		if r.wrong > 0 {
			rep.problems = append(rep.problems, fmt.Sprintf("%s: %d wrong answers", r.name, r.wrong))
		}
		if r.own500 > 0 {
			rep.problems = append(rep.problems, fmt.Sprintf("%s: %d answers 500 from the sidecar's routes", r.name, r.own500))
		}
		if r.recovery > time.Second {
			rep.problems = append(rep.problems, fmt.Sprintf("%s: recovered %s after the dependency returned (bar: 1 s)", r.name, r.recovery.Round(time.Millisecond)))
		}
	}
	return rep
}

func (f *fault) nameOr() string {
	if f == nil {
		return "(no fault)"
	}
	return "during " + f.name
}

// sample is an instance's /metrics at one moment.
type sample struct {
	at                   time.Time
	instance             string
	rss, goroutines, fds float64
}

// memoryLine says how instance name's memory, goroutines and descriptors
// went: the median of the first and of the last two minutes (a fifth of a
// shorter run), and the highest.
func memoryLine(samples []sample, name string, began, end time.Time) string {
	window := min(2*time.Minute, end.Sub(began)/5)
	var first, last [3][]float64
	var peak [3]float64
	for _, s := range samples {
		if s.instance != name {
			continue
		}
		for i, v := range [3]float64{s.rss, s.goroutines, s.fds} {
			peak[i] = max(peak[i], v)
			if s.at.Before(began.Add(window)) {
				first[i] = append(first[i], v)
			} else if s.at.After(end.Add(-window)) {
				last[i] = append(last[i], v)
			}
		}
	}
	med := func(v []float64) float64 {
		if len(v) == 0 {
			return math.NaN()
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return fmt.Sprintf("medians of the first and the last %s: memory (RSS) %.1f → %.1f MB (highest %.1f), goroutines %.0f → %.0f (highest %.0f), descriptors %.0f → %.0f (highest %.0f)",
		window, med(first[0])/1e6, med(last[0])/1e6, peak[0]/1e6, med(first[1]), med(last[1]), peak[1], med(first[2]), med(last[2]), peak[2])
}

func (rep *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run of %s on a %d-core %s/%s machine: %s, %d workers through a loopback balancer over two instances, one fault every %s (dependencies down %s); %d requests.\n\n",
		rep.began.UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, rep.duration, rep.workers, *faultEvery, *downFor, rep.requests)
	b.WriteString("| fault | times | statuses seen | longest answer: sidecar routes / pass-through | recovery after the dependency returned | lost | wrong | sidecar 500s |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.rows {
		var st []string
		for _, k := range slices.Sorted(maps.Keys(r.statuses)) {
			st = append(st, fmt.Sprintf("%s: %d", k, r.statuses[k]))
		}
		rec := "—"
		if r.hasRecovery {
			rec = r.recovery.Round(time.Millisecond).String()
		}
		times := fmt.Sprint(r.times)
		if r.times == 0 {
			times = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s / %s | %s | %d | %d | %d |\n", r.name, times, strings.Join(st, ", "), r.longest.Round(time.Millisecond), r.longestPHP.Round(time.Millisecond), rec, r.lost, r.wrong, r.own500)
	}
	fmt.Fprintf(&b, "\nInstance a (never stopped), %s.\n", rep.memory)
	verdict := "every bar met"
	if len(rep.problems) > 0 {
		verdict = "bars missed: " + strings.Join(rep.problems, "; ")
	}
	fmt.Fprintf(&b, "Verdict: %s.\n", verdict)
	return b.String()
}

// writeReadme puts table between the page's soak markers.
func writeReadme(path, table string) error {
	const begin, end = "<!-- soak:begin -->\n", "<!-- soak:end -->"
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q … %q section", path, begin, end)
	}
	return os.WriteFile(path, []byte(s[:i+len(begin)]+table+s[j:]), 0o644)
}

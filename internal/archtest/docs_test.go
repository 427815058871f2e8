package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLink    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#+ (.*)$`)
)

// slug is a heading's anchor as GitHub makes it.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`).ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

// TestDocLinks: every relative link of the README and docs/ names a file
// of the repository, and an anchor a heading of it.
func TestDocLinks(t *testing.T) {
	var pages []string
	filepath.WalkDir("../../docs", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return err
	})
	pages = append(pages, "../../README.md")
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), path)
			}
			body, err := os.ReadFile(file)
			if err != nil {
				if fi, serr := os.Stat(file); serr == nil && fi.IsDir() {
					continue
				}
				t.Errorf("%s: link to %s: no such file", page, target)
				continue
			}
			if anchor == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			found := false
			for _, h := range mdHeading.FindAllStringSubmatch(string(body), -1) {
				if slug(h[1]) == anchor {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: link to %s: no such heading", page, target)
			}
		}
	}
}

// TestDocsMatchCode: what the docs say of a setting kept elsewhere is
// read from where it is kept, not remembered.
func TestDocsMatchCode(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile("../../" + p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// The history screen's page size, as the companion plugin sets it.
	m := regexp.MustCompile(`'perPage'\s*=>\s*(\d+)`).FindStringSubmatch(read("wordpress/wpsidecar-companion.php"))
	if m == nil {
		t.Fatal("the companion plugin sets no perPage")
	}
	if want := "newest first, " + m[1] + " to a page"; !strings.Contains(read("docs/site-builders.md"), want) {
		t.Errorf("docs/site-builders.md does not say %q (the companion's perPage)", want)
	}
	// A preStop sleep action needs Kubernetes 1.30; the page says so.
	if strings.Contains(read("deploy/kubernetes/wordpress.yaml"), "sleep: {seconds:") && !strings.Contains(read("docs/deploy/kubernetes.md"), "needs Kubernetes 1.30 or later") {
		t.Error("deploy/kubernetes/wordpress.yaml's preStop sleep needs Kubernetes 1.30; docs/deploy/kubernetes.md does not say so")
	}
	// docs/rest-cache.md's comparison table says what the status box says
	// is built: purges and drops by entity.
	rc := read("docs/rest-cache.md")
	for _, row := range []string{"| granularity |", "| CDN purges |"} {
		i := strings.Index(rc, row)
		if i < 0 {
			t.Errorf("docs/rest-cache.md has no %s row", row)
			continue
		}
		line, _, _ := strings.Cut(rc[i:], "\n")
		cells := strings.Split(line, "|")
		if ours := cells[len(cells)-2]; regexp.MustCompile(`not yet|being built|for now`).MatchString(ours) {
			t.Errorf("docs/rest-cache.md's %s row says of the sidecar %q", row, ours)
		}
	}
}

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

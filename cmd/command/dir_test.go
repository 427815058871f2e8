package command

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// On a network, each site's files are in DIR/sites/<id>: neither sites/
// nor sites/<id> may be a link (it could lead out of DIR); an export
// makes them, an import does not.
func TestDir_Network(t *testing.T) {
	c := &cmd{network: true}
	s := stored{ID: 2}
	for _, tc := range []struct {
		name   string
		link   string // which part is a link to another folder
		create bool
		want   string // the error, with %[1]s for DIR ("" none)
	}{
		{"export makes them", "", true, ""},
		{"import does not", "", false, ""},
		{"sites a link", "sites", true, "%[1]s/sites is a symbolic link: not followed (it may lead out of %[1]s)"},
		{"sites/2 a link", "sites/2", true, "%[1]s/sites/2 is a symbolic link: not followed (it may lead out of %[1]s)"},
		{"sites/2 a link, import", "sites/2", false, "%[1]s/sites/2 is a symbolic link: not followed (it may lead out of %[1]s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, other := t.TempDir(), t.TempDir()
			if tc.link != "" {
				os.MkdirAll(filepath.Join(dir, filepath.Dir(tc.link)), 0o755)
				os.Symlink(other, filepath.Join(dir, tc.link))
			}
			got, err := c.dir(dir, s, tc.create)
			if tc.want != "" {
				if want := fmt.Sprintf(tc.want, dir); fmt.Sprint(err) != want {
					t.Errorf("%v, want %s", err, want)
				}
				if ents, _ := os.ReadDir(other); len(ents) != 0 {
					t.Errorf("made in the link's target: %v", ents)
				}
				return
			}
			if err != nil || got != filepath.Join(dir, "sites", "2") {
				t.Fatalf("%q %v", got, err)
			}
			if _, err := os.Stat(got); (err == nil) != tc.create {
				t.Errorf("made: %v", err)
			}
		})
	}
}

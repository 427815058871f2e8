package wplogin

import "testing"

// FuzzSanitizeUserShortcut: a login the shortcut returns as it is comes
// out of the full sanitization unchanged too.
func FuzzSanitizeUserShortcut(f *testing.F) {
	for _, s := range []string{"admin", "a.b-c_d@e.test", "x+y", "a;b", "&amp", "50%", "<b>", " a ", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, login string) {
		if !unchangedBySanitize(login) {
			return
		}
		s := reTags.ReplaceAllString(login, "")
		s = RemoveAccents(s)
		s = reOctets.ReplaceAllString(s, "")
		s = reEntities.ReplaceAllString(s, "")
		if s = reSpaces.ReplaceAllString(s, " "); s != login || len(s) != len(login) {
			t.Errorf("%q sanitizes to %q", login, s)
		}
	})
}

// Package wplogin holds WordPress's rules for what a client types as a
// login: sanitize_user(), which get_user_by('login') applies, and whether
// it looks like an e-mail address (is_email()), which decides whether an
// unknown login is looked up as one. Pure rules, with no SQL: store finds
// the user they name.
package wplogin

import (
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

var (
	reTags     = regexp.MustCompile(`<[^>]*>`)
	reOctets   = regexp.MustCompile(`%[a-fA-F0-9]{2}`)
	reEntities = regexp.MustCompile(`&.+?;`)
	reSpaces   = regexp.MustCompile(`\s+`)
)

// Sanitize is WordPress's sanitize_user() in its non-strict form, as
// get_user_by('login') applies it: tags, percent-encoded octets and HTML
// entities are removed, accents stripped, whitespace collapsed and trimmed.
func Sanitize(login string) string {
	if unchangedBySanitize(login) {
		return login // spare the regexps
	}
	s := reTags.ReplaceAllString(login, "")
	s = RemoveAccents(s)
	s = reOctets.ReplaceAllString(s, "")
	s = reEntities.ReplaceAllString(s, "")
	s = strings.TrimSpace(reSpaces.ReplaceAllString(s, " "))
	return s
}

// RemoveAccents drops combining marks after canonical decomposition
// (é → e), the common part of WordPress's remove_accents().
func RemoveAccents(s string) string {
	if isASCII(s) {
		return s
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// unchangedBySanitize: ASCII with no tag, octet, entity or whitespace,
// which Sanitize returns as it is (the common login).
func unchangedBySanitize(s string) bool {
	return !strings.ContainsAny(s, "<%& \t\n\v\f\r") && isASCII(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

var reEmail = regexp.MustCompile(`^[a-zA-Z0-9.!#$%&'*+/=?^_` + "`" + `{|}~-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+$`)

// LooksLikeEmail approximates is_email() for deciding whether an unknown
// login should be looked up as an e-mail address.
func LooksLikeEmail(s string) bool { return len(s) >= 6 && reEmail.MatchString(s) }

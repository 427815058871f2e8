package wpconfig

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A .env file as vlucas/phpdotenv 5 (Bedrock's loader) reads it: NAME=value
// lines, "export " before a name, values unquoted (a # starts a comment,
// inner whitespace is an error), in single quotes (literal) or double
// quotes (\" \\ \$ \f \n \r \t \v escapes, spanning lines), and ${NAME}
// references outside single quotes, resolved as the entries are loaded.

type dotenvEntry struct {
	name, value string
	line        int
	interpolate bool  // the value holds ${…} references
	vars        []int // offsets of $ in value that may begin a reference
	hasValue    bool  // NAME alone (no =) has no value
}

var lineBreak = regexp.MustCompile(`\r\n|\n|\r`)

func parseDotenv(src []byte) ([]dotenvEntry, error) {
	lines := lineBreak.Split(string(src), -1)
	var entries []dotenvEntry
	var buf []string
	start := 0
	for i, line := range lines {
		if buf == nil && looksLikeMultilineStart(line) {
			buf, start = []string{line}, i+1
			continue
		}
		if buf != nil {
			buf = append(buf, line)
			if !looksLikeMultilineStop(line, false) {
				continue
			}
			line = strings.Join(buf, "\n")
			buf = nil
		} else {
			start = i + 1
		}
		t := strings.Trim(line, " \n\r\t\x00\x0B")
		if t == "" || t[0] == '#' {
			continue
		}
		en, err := parseDotenvEntry(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", start, err)
		}
		en.line = start
		entries = append(entries, en)
	}
	if buf != nil {
		return nil, fmt.Errorf("line %d: a missing closing quote", start)
	}
	return entries, nil
}

func looksLikeMultilineStart(line string) bool {
	return strings.Contains(line, `="`) && !looksLikeMultilineStop(line, true)
}

// looksLikeMultilineStop counts the quotes not escaped by a backslash.
func looksLikeMultilineStop(line string, started bool) bool {
	if line == `"` {
		return true
	}
	s := strings.ReplaceAll(line, `\\`, "")
	n := 0
	for i := 1; i < len(s); i++ {
		if s[i] == '"' && s[i-1] != '\\' {
			n++
		}
	}
	if started {
		return n > 1
	}
	return n >= 1
}

func parseDotenvEntry(line string) (dotenvEntry, error) {
	name, val, hasValue := strings.Cut(line, "=")
	name = strings.Trim(name, " \n\r\t\x00\x0B")
	if name == "" {
		return dotenvEntry{}, fmt.Errorf("an unexpected equals")
	}
	if len(name) > 8 && strings.HasPrefix(name, "export") && isSpace(name[6]) {
		name = strings.TrimLeft(name[6:], " \t\n\r\v\f")
	}
	if len(name) >= 3 && (name[0] == '"' && name[len(name)-1] == '"' || name[0] == '\'' && name[len(name)-1] == '\'') {
		name = name[1 : len(name)-1]
	}
	if !validDotenvName(name) {
		return dotenvEntry{}, fmt.Errorf("an invalid name")
	}
	en := dotenvEntry{name: name, hasValue: hasValue}
	if !hasValue {
		return en, nil
	}
	val = strings.Trim(val, " \n\r\t\x00\x0B")
	var err error
	en.value, en.vars, err = parseDotenvValue(val)
	en.interpolate = len(en.vars) > 0
	return en, err
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func validDotenvName(name string) bool {
	if name == "" || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r)) {
			return false
		}
	}
	return true
}

const (
	dvInitial = iota
	dvUnquoted
	dvSingle
	dvDouble
	dvEscape
	dvSpace
	dvComment
)

// parseDotenvValue runs phpdotenv's value automaton over the value's
// tokens: runs of line breaks, runs of other whitespace, \ ' " # $, and
// runs of anything else.
func parseDotenvValue(v string) (string, []int, error) {
	var out strings.Builder
	var vars []int
	state := dvInitial
	for i := 0; i < len(v); {
		j := i + 1
		switch c := v[i]; {
		case c == '\r' || c == '\n':
			for j < len(v) && (v[j] == '\r' || v[j] == '\n') {
				j++
			}
		case isSpace(c):
			for j < len(v) && isSpace(v[j]) && v[j] != '\r' && v[j] != '\n' {
				j++
			}
		case c == '\\' || c == '\'' || c == '"' || c == '#' || c == '$':
		default:
			for j < len(v) && !isSpace(v[j]) && !strings.ContainsRune(`\'"#$`, rune(v[j])) {
				j++
			}
		}
		tok := v[i:j]
		i = j
		space := isSpace(tok[0])
		switch state {
		case dvInitial, dvUnquoted:
			switch {
			case state == dvInitial && tok == "'":
				state = dvSingle
			case state == dvInitial && tok == `"`:
				state = dvDouble
			case tok == "#":
				state = dvComment
			case state == dvUnquoted && space:
				state = dvSpace
			case tok == "$":
				vars = append(vars, out.Len())
				out.WriteString(tok)
				state = dvUnquoted
			default:
				out.WriteString(tok)
				state = dvUnquoted
			}
		case dvSingle:
			if tok == "'" {
				state = dvSpace
			} else {
				out.WriteString(tok)
			}
		case dvDouble:
			switch tok {
			case `"`:
				state = dvSpace
			case `\`:
				state = dvEscape
			case "$":
				vars = append(vars, out.Len())
				out.WriteString(tok)
			default:
				out.WriteString(tok)
			}
		case dvEscape:
			switch {
			case tok == `"` || tok == `\` || tok == "$":
				out.WriteString(tok)
			case strings.ContainsRune("fnrtv", rune(tok[0])):
				out.WriteString(map[byte]string{'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v"}[tok[0]] + tok[1:])
			default:
				return "", nil, fmt.Errorf("an unexpected escape sequence")
			}
			state = dvDouble
		case dvSpace:
			if tok == "#" {
				state = dvComment
			} else if !space {
				return "", nil, fmt.Errorf("unexpected whitespace")
			}
		case dvComment:
		}
	}
	if state == dvSingle || state == dvDouble || state == dvEscape {
		return "", nil, fmt.Errorf("a missing closing quote")
	}
	return out.String(), vars, nil
}

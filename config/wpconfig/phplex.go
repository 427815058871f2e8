package wpconfig

import (
	"fmt"
	"strconv"
	"strings"
)

// The PHP lexer: enough of PHP's tokens for configuration files. Inline
// HTML, comments and whitespace are dropped; strings are decoded; a
// double-quoted string or heredoc that interpolates variables keeps its
// parts, each embedded expression lexed in turn.

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tVar
	tString
	tInterp // a string with embedded expressions: parts
	tNumber
	tPunct
)

type token struct {
	kind  tokKind
	text  string // identifier, variable name, decoded string, number, punctuation
	line  int
	parts []strPart // tInterp only
}

// strPart is a piece of an interpolated string: a literal, or the tokens
// of an embedded expression.
type strPart struct {
	lit  string
	expr []token
}

// Multi-character operators, longest first.
var phpOps = []string{"===", "!==", "<=>", "**=", "...", "<<=", ">>=", "??=",
	"==", "!=", "<>", "<=", ">=", "&&", "||", "??", "->", "::", "=>", "++", "--",
	".=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "**"}

// lexLimit bounds the tokens of one file, those of the expressions
// embedded in its strings counted: configuration files are small, and the
// evaluator's work is bounded by what it is given.
const lexLimit = 200000

// lexDepthLimit bounds strings nested in the expressions embedded in
// strings ("{$a["{$b}"]}" is two deep), which the lexer reads recursively.
const lexDepthLimit = 32

// lexer counts what lexing a file has made, and how deep in strings it is.
type lexer struct {
	tokens int
	depth  int
}

// phpTokens splits PHP source into tokens; inPHP is true for code that is
// PHP from its start (eval's), false for a file (HTML until <?php). It
// gives the tokens made, those embedded in strings counted.
func phpTokens(src string, inPHP bool) ([]token, int, error) {
	lx := &lexer{}
	toks, err := lx.lex(src, 1, inPHP)
	return toks, lx.tokens, err
}

// openTag finds the first <?php or <?= in s: the offset and its length.
func openTag(s string) (int, int) {
	for off := 0; ; {
		j := strings.Index(s[off:], "<?")
		if j < 0 {
			return -1, 0
		}
		off += j
		switch {
		case strings.HasPrefix(s[off:], "<?php"):
			return off, len("<?php")
		case strings.HasPrefix(s[off:], "<?="):
			return off, len("<?=")
		}
		off += 2
	}
}

// lex lexes src starting on line; inPHP is true for code that is already
// PHP (an embedded expression), false for a file (HTML until <?php).
func (lx *lexer) lex(src string, line int, inPHP bool) ([]token, error) {
	if lx.depth > lexDepthLimit {
		return nil, fmt.Errorf("line %d: strings nested more than %d deep", line, lexDepthLimit)
	}
	lx.depth++
	defer func() { lx.depth-- }()
	var toks []token
	defer func() { lx.tokens += len(toks) }() // the nested ones are counted on their return
	i := 0
	for i < len(src) {
		if lx.tokens+len(toks) > lexLimit {
			return nil, fmt.Errorf("line %d: more than %d tokens", line, lexLimit)
		}
		if !inPHP {
			j, n := openTag(src[i:])
			if j < 0 {
				break
			}
			line += strings.Count(src[i:i+j], "\n")
			i += j + n
			inPHP = true
			continue
		}
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case strings.HasPrefix(src[i:], "?>"):
			// A closing tag ends a statement, as PHP reads it.
			toks = append(toks, token{kind: tPunct, text: ";", line: line})
			inPHP = false
			i += 2
		case c == '#' && !strings.HasPrefix(src[i:], "#["), strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' && !strings.HasPrefix(src[i:], "?>") {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("line %d: unterminated comment", line)
			}
			line += strings.Count(src[i:i+2+j], "\n")
			i += j + 4
		case c == '\'':
			s, n, err := singleQuoted(src[i:])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			toks = append(toks, token{kind: tString, text: s, line: line})
			line += strings.Count(src[i:i+n], "\n")
			i += n
		case c == '"':
			end, err := closingQuote(src[i:])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			t, err := lx.interpolated(src[i+1:i+end], line, '"')
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			line += strings.Count(src[i:i+end+1], "\n")
			i += end + 1
		case strings.HasPrefix(src[i:], "<<<"):
			t, n, err := lx.heredoc(src[i:], line)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			line += strings.Count(src[i:i+n], "\n")
			i += n
		case c == '$' && i+1 < len(src) && isIdentStart(src[i+1]):
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			toks = append(toks, token{kind: tVar, text: src[i+1 : j], line: line})
			i = j
		case isIdentStart(c) || c == '\\':
			j := i
			for j < len(src) && (isIdentChar(src[j]) || src[j] == '\\') {
				j++
			}
			toks = append(toks, token{kind: tIdent, text: src[i:j], line: line})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (isIdentChar(src[j]) || src[j] == '.') {
				j++
			}
			toks = append(toks, token{kind: tNumber, text: src[i:j], line: line})
			i = j
		default:
			op := string(c)
			for _, o := range phpOps {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			toks = append(toks, token{kind: tPunct, text: op, line: line})
			i += len(op)
		}
	}
	return toks, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// singleQuoted decodes the single-quoted literal at the start of s: only \\
// and \' are escapes.
func singleQuoted(s string) (val string, n int, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			return b.String(), i + 1, nil
		}
		if c == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '\'') {
			i++
			c = s[i]
		}
		b.WriteByte(c)
	}
	return "", 0, fmt.Errorf("unterminated string")
}

// closingQuote finds the quote that ends the double-quoted string at the
// start of s, skipping escaped characters.
func closingQuote(s string) (int, error) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i, nil
		}
	}
	return 0, fmt.Errorf("unterminated string")
}

// heredoc reads <<<ID … ID (or nowdoc <<<'ID'); a heredoc interpolates as a
// double-quoted string does (its quotes are plain characters).
func (lx *lexer) heredoc(s string, line int) (token, int, error) {
	j := 3
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	quote := byte(0)
	if j < len(s) && (s[j] == '\'' || s[j] == '"') {
		quote = s[j]
		j++
	}
	k := j
	for k < len(s) && isIdentChar(s[k]) {
		k++
	}
	id := s[j:k]
	if quote != 0 {
		if k >= len(s) || s[k] != quote {
			return token{}, 0, fmt.Errorf("line %d: bad heredoc", line)
		}
		k++
	}
	nl := strings.IndexByte(s[k:], '\n')
	if id == "" || nl < 0 {
		return token{}, 0, fmt.Errorf("line %d: bad heredoc", line)
	}
	body := k + nl + 1
	// The closing identifier starts a line (after indentation) and is not
	// followed by an identifier character.
	for p := body; p <= len(s); {
		q := p
		for q < len(s) && (s[q] == ' ' || s[q] == '\t') {
			q++
		}
		if strings.HasPrefix(s[q:], id) && (q+len(id) == len(s) || !isIdentChar(s[q+len(id)])) {
			text := ""
			if p > body {
				text = s[body : p-1] // without the newline before the closing line
			}
			// The closing line's indentation is removed from every line
			// (PHP 7.3); a line indented less is PHP's parse error.
			if indent := s[p:q]; indent != "" {
				lines := strings.Split(text, "\n")
				for i, l := range lines {
					if !strings.HasPrefix(l, indent) && strings.TrimLeft(l, " \t") != "" {
						return token{}, 0, fmt.Errorf("line %d: a heredoc line indented less than its closing marker", line+1+i)
					}
					lines[i] = strings.TrimPrefix(l, indent)
				}
				text = strings.Join(lines, "\n")
			}
			n := q + len(id)
			if quote == '\'' {
				return token{kind: tString, text: text, line: line}, n, nil
			}
			t, err := lx.interpolated(text, line+1, 0)
			return t, n, err
		}
		e := strings.IndexByte(s[p:], '\n')
		if e < 0 {
			break
		}
		p += e + 1
	}
	return token{}, 0, fmt.Errorf("line %d: unterminated heredoc", line)
}

// interpolated decodes the body of a double-quoted string (quote '"') or a
// heredoc (quote 0): escapes, and embedded $var, $var->prop, $var[key] and
// {$expression} as parts.
func (lx *lexer) interpolated(body string, line int, quote byte) (token, error) {
	var parts []strPart
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			parts = append(parts, strPart{lit: b.String()})
			b.Reset()
		}
	}
	embed := func(src string) error {
		toks, err := lx.lex(src, line, true)
		if err != nil {
			return err
		}
		flush()
		parts = append(parts, strPart{expr: toks})
		return nil
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '{' && i+1 < len(body) && body[i+1] == '$':
			end := matchBrace(body, i)
			if end < 0 {
				return token{}, fmt.Errorf("line %d: unterminated {$ in a string", line)
			}
			if err := embed(body[i+1 : end]); err != nil {
				return token{}, err
			}
			i = end
		case c == '$' && i+1 < len(body) && body[i+1] == '{':
			// "${name}" is $name (deprecated in PHP 8.2, still used).
			end := strings.IndexByte(body[i:], '}')
			name := ""
			if end > 2 {
				name = body[i+2 : i+end]
			}
			if name == "" || !isIdentStart(name[0]) || strings.IndexFunc(name, func(r rune) bool { return r > 127 || !isIdentChar(byte(r)) }) >= 0 {
				return token{}, fmt.Errorf("line %d: ${ } in a string is understood only around a variable's name", line)
			}
			if err := embed("$" + name); err != nil {
				return token{}, err
			}
			i += end
		case c == '$' && i+1 < len(body) && isIdentStart(body[i+1]):
			j := i + 1
			for j < len(body) && isIdentChar(body[j]) {
				j++
			}
			src := body[i:j]
			switch {
			case strings.HasPrefix(body[j:], "->") && j+2 < len(body) && isIdentStart(body[j+2]):
				k := j + 2
				for k < len(body) && isIdentChar(body[k]) {
					k++
				}
				src, j = body[i:k], k
			case j < len(body) && body[j] == '[':
				k := strings.IndexByte(body[j:], ']')
				if k < 0 {
					return token{}, fmt.Errorf("line %d: unterminated [ in a string", line)
				}
				key := body[j+1 : j+k]
				if key != "" && !strings.HasPrefix(key, "$") && !isDigits(strings.TrimPrefix(key, "-")) {
					key = "'" + key + "'" // "$a[key]" is $a['key']
				}
				src, j = src+"["+key+"]", j+k+1
			}
			if err := embed(src); err != nil {
				return token{}, err
			}
			i = j - 1
		case c == '\\' && i+1 < len(body):
			n := decodeEscape(&b, body[i+1:], quote)
			i += n
		default:
			b.WriteByte(c)
		}
	}
	if len(parts) == 0 {
		return token{kind: tString, text: b.String(), line: line}, nil
	}
	flush()
	return token{kind: tInterp, parts: parts, line: line}, nil
}

// matchBrace finds the } that closes the { at s[open].
func matchBrace(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i
			}
		case '\'', '"':
			q := s[i]
			for i++; i < len(s) && s[i] != q; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		}
	}
	return -1
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// decodeEscape writes the escape sequence that follows a backslash (s
// starts after it) and returns how many bytes of s it used. In a heredoc
// (quote 0) \" is not an escape.
func decodeEscape(b *strings.Builder, s string, quote byte) int {
	e := s[0]
	switch e {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'v':
		b.WriteByte('\v')
	case 'e':
		b.WriteByte(0x1b)
	case 'f':
		b.WriteByte('\f')
	case '\\', '$':
		b.WriteByte(e)
	case '"':
		if quote == 0 {
			b.WriteByte('\\')
		}
		b.WriteByte('"')
	case 'x':
		j := 1
		for j < len(s) && j < 3 && isHex(s[j]) {
			j++
		}
		if j == 1 {
			b.WriteString(`\x`)
			return 1
		}
		v, _ := strconv.ParseUint(s[1:j], 16, 8)
		b.WriteByte(byte(v))
		return j
	case 'u':
		if len(s) > 1 && s[1] == '{' {
			if end := strings.IndexByte(s, '}'); end > 2 {
				if v, err := strconv.ParseUint(s[2:end], 16, 32); err == nil && v <= 0x10FFFF {
					b.WriteRune(rune(v))
					return end + 1
				}
			}
		}
		b.WriteString(`\u`)
	default:
		if e >= '0' && e <= '7' {
			j := 0
			for j < len(s) && j < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[:j], 8, 16)
			b.WriteByte(byte(v))
			return j
		}
		b.WriteByte('\\')
		b.WriteByte(e)
	}
	return 1
}

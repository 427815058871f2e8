package config

import (
	"fmt"
	"strconv"
	"strings"
)

// WPConfig is what a wp-config.php defines that the sidecar needs: the
// define()d constants it could evaluate and $table_prefix. The file is read as
// text and never run: only literals, concatenation, negation and the official
// Docker image's getenv_docker()/getenv() are evaluated.
type WPConfig struct {
	Constants   map[string]string // constant name -> value as PHP would print it
	TablePrefix string
	HasPrefix   bool
	// Unresolved names the constants whose value the parser could not
	// evaluate, with the reason.
	Unresolved map[string]string
	// Warnings name other things not understood: a define() whose name is
	// not a literal, an include that is not followed.
	Warnings []string
}

// ParseWPConfig reads the source of a wp-config.php. lookup resolves
// environment variables the way the official image's getenv_docker() does.
// The first define() of a name wins, as it does in PHP (a second define()
// only warns), which also gives `if (!defined('X')) define('X', …)` its meaning.
func ParseWPConfig(src string, lookup func(string) (string, bool)) (*WPConfig, error) {
	toks, err := phpTokens(src)
	if err != nil {
		return nil, err
	}
	wc := &WPConfig{Constants: map[string]string{}, Unresolved: map[string]string{}}
	p := &phpParser{toks: toks, lookup: lookup, consts: wc.Constants}
	p.run(wc)
	// The official image eval()s WORDPRESS_CONFIG_EXTRA after its own defines.
	if strings.Contains(src, "WORDPRESS_CONFIG_EXTRA") {
		if extra, ok := lookup("WORDPRESS_CONFIG_EXTRA"); ok && extra != "" {
			xt, err := phpTokens("<?php " + extra)
			if err != nil {
				wc.Warnings = append(wc.Warnings, "WORDPRESS_CONFIG_EXTRA: "+err.Error())
			} else {
				(&phpParser{toks: xt, lookup: lookup, consts: wc.Constants}).run(wc)
			}
		}
	}
	return wc, nil
}

type tokKind int

const (
	tIdent tokKind = iota
	tVar
	tString
	tNumber
	tPunct
)

type token struct {
	kind tokKind
	text string // identifier, variable name, decoded string, number, punctuation
	line int
	bad  string // non-empty when a string literal could not be decoded (interpolation)
}

// phpTokens splits PHP source into the few token kinds the parser needs,
// dropping inline HTML, comments and whitespace.
func phpTokens(src string) ([]token, error) {
	var toks []token
	line := 1
	i := 0
	inPHP := false
	for i < len(src) {
		if !inPHP {
			j := strings.Index(src[i:], "<?php")
			if j < 0 {
				break
			}
			line += strings.Count(src[i:i+j], "\n")
			i += j + len("<?php")
			inPHP = true
			continue
		}
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "?>"):
			inPHP = false
			i += 2
		case c == '#' || strings.HasPrefix(src[i:], "//"):
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
		case c == '\'' || c == '"':
			s, n, bad, err := phpString(src[i:])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			toks = append(toks, token{kind: tString, text: s, line: line, bad: bad})
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
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (isIdentChar(src[j]) || src[j] == '.') {
				j++
			}
			toks = append(toks, token{kind: tNumber, text: src[i:j], line: line})
			i = j
		default:
			toks = append(toks, token{kind: tPunct, text: string(c), line: line})
			i++
		}
	}
	return toks, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// phpString decodes the quoted literal at the start of s and returns its value
// and length. A double-quoted string that interpolates a variable is returned
// with bad set, since its value depends on run time.
func phpString(s string) (val string, n int, bad string, err error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == q {
			return b.String(), i + 1, bad, nil
		}
		if q == '"' && c == '$' && i+1 < len(s) && (isIdentStart(s[i+1]) || s[i+1] == '{') {
			bad = "string interpolates a variable"
		}
		if q == '"' && c == '{' && i+1 < len(s) && s[i+1] == '$' {
			bad = "string interpolates a variable"
		}
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		e := s[i+1]
		if q == '\'' {
			if e == '\\' || e == '\'' {
				b.WriteByte(e)
				i++
			} else {
				b.WriteByte('\\')
			}
			continue
		}
		i++
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
		case '\\', '$', '"':
			b.WriteByte(e)
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteString(`\x`)
				continue
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 8)
			b.WriteByte(byte(v))
			i = j - 1
		case 'u':
			if i+1 < len(s) && s[i+1] == '{' {
				end := strings.IndexByte(s[i:], '}')
				if end < 0 {
					return "", 0, "", fmt.Errorf("bad \\u escape")
				}
				v, perr := strconv.ParseUint(s[i+2:i+end], 16, 32)
				if perr != nil {
					return "", 0, "", fmt.Errorf("bad \\u escape")
				}
				b.WriteRune(rune(v))
				i += end
				continue
			}
			b.WriteString(`\u`)
		default:
			if e >= '0' && e <= '7' {
				j := i
				for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(s[i:j], 8, 16)
				b.WriteByte(byte(v))
				i = j - 1
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return "", 0, "", fmt.Errorf("unterminated string")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

type phpParser struct {
	toks   []token
	pos    int
	lookup func(string) (string, bool)
	consts map[string]string
}

// phpValue is an evaluated expression: a string, or a bool for true/false
// and negations, kept apart so that define('X', false) prints as "".
type phpValue struct {
	s      string
	isBool bool
	b      bool
}

func (v phpValue) String() string {
	if v.isBool {
		if v.b {
			return "1"
		}
		return ""
	}
	return v.s
}

// truthy is PHP's boolean conversion of a string.
func (v phpValue) truthy() bool {
	if v.isBool {
		return v.b
	}
	return v.s != "" && v.s != "0"
}

func (p *phpParser) peek(off int) token {
	if p.pos+off < len(p.toks) {
		return p.toks[p.pos+off]
	}
	return token{kind: tPunct, text: ""}
}

func (p *phpParser) is(off int, kind tokKind, text string) bool {
	t := p.peek(off)
	return t.kind == kind && (kind != tIdent && t.text == text || kind == tIdent && strings.EqualFold(t.text, text))
}

func (p *phpParser) run(wc *WPConfig) {
	for p.pos < len(p.toks) {
		t := p.toks[p.pos]
		switch {
		case t.kind == tIdent && strings.EqualFold(t.text, "define") && p.is(1, tPunct, "("):
			p.pos += 2
			p.define(wc, t.line)
		case t.kind == tVar && t.text == "table_prefix" && p.is(1, tPunct, "="):
			p.pos += 2
			v, err := p.expr()
			if err != nil {
				wc.Unresolved["$table_prefix"] = fmt.Sprintf("line %d: %v", t.line, err)
				continue
			}
			if !wc.HasPrefix {
				wc.TablePrefix, wc.HasPrefix = v.String(), true
			}
		case t.kind == tIdent && (strings.EqualFold(t.text, "require") || strings.EqualFold(t.text, "require_once") ||
			strings.EqualFold(t.text, "include") || strings.EqualFold(t.text, "include_once")):
			// wp-settings.php is WordPress itself, not configuration.
			if !p.includesWPSettings() {
				wc.Warnings = append(wc.Warnings, fmt.Sprintf("line %d: %s of another file is not followed; settings defined there are not seen", t.line, strings.ToLower(t.text)))
			}
			p.pos++
		default:
			p.pos++
		}
	}
}

func (p *phpParser) includesWPSettings() bool {
	for i := 1; i < 6; i++ {
		t := p.peek(i)
		if t.kind == tString && strings.HasSuffix(t.text, "wp-settings.php") {
			return true
		}
		if t.kind == tPunct && t.text == ";" {
			break
		}
	}
	return false
}

func (p *phpParser) define(wc *WPConfig, line int) {
	name, err := p.expr()
	if err != nil || !p.is(0, tPunct, ",") {
		wc.Warnings = append(wc.Warnings, fmt.Sprintf("line %d: define() with a name that is not a literal", line))
		p.skipStatement()
		return
	}
	p.pos++
	val, err := p.expr()
	if err != nil {
		if _, seen := wc.Unresolved[name.s]; !seen {
			wc.Unresolved[name.s] = fmt.Sprintf("line %d: %v", line, err)
		}
		p.skipStatement()
		return
	}
	_, dup := p.consts[name.s]
	if _, unknown := wc.Unresolved[name.s]; !dup && !unknown {
		p.consts[name.s] = val.String()
	}
}

func (p *phpParser) skipStatement() {
	for p.pos < len(p.toks) && !p.is(0, tPunct, ";") {
		p.pos++
	}
}

// expr := unary ('.' unary)*
func (p *phpParser) expr() (phpValue, error) {
	v, err := p.unary()
	if err != nil {
		return v, err
	}
	for p.is(0, tPunct, ".") {
		p.pos++
		w, err := p.unary()
		if err != nil {
			return w, err
		}
		v = phpValue{s: v.String() + w.String()}
	}
	return v, nil
}

func (p *phpParser) unary() (phpValue, error) {
	if p.is(0, tPunct, "!") {
		p.pos++
		v, err := p.unary()
		if err != nil {
			return v, err
		}
		return phpValue{isBool: true, b: !v.truthy()}, nil
	}
	return p.primary()
}

func (p *phpParser) primary() (phpValue, error) {
	t := p.peek(0)
	switch t.kind {
	case tString:
		p.pos++
		if t.bad != "" {
			return phpValue{}, fmt.Errorf("%s", t.bad)
		}
		return phpValue{s: t.text}, nil
	case tNumber:
		p.pos++
		return phpValue{s: t.text}, nil
	case tPunct:
		if t.text == "(" {
			p.pos++
			v, err := p.expr()
			if err != nil {
				return v, err
			}
			if !p.is(0, tPunct, ")") {
				return v, fmt.Errorf("expression not understood")
			}
			p.pos++
			return v, nil
		}
	case tIdent:
		name := strings.TrimPrefix(t.text, `\`)
		switch strings.ToLower(name) {
		case "true":
			p.pos++
			return phpValue{isBool: true, b: true}, nil
		case "false", "null":
			p.pos++
			return phpValue{isBool: true, b: false}, nil
		case "getenv_docker", "getenv":
			if p.is(1, tPunct, "(") {
				return p.getenvCall(strings.ToLower(name))
			}
		}
		if !p.is(1, tPunct, "(") && !p.is(1, tPunct, ":") {
			// A constant defined above.
			if v, ok := p.consts[name]; ok {
				p.pos++
				return phpValue{s: v}, nil
			}
		}
	}
	return phpValue{}, fmt.Errorf("expression not understood")
}

// getenvCall evaluates getenv_docker('NAME', default) as the official image
// defines it (NAME_FILE, then NAME even when empty, then the default) and
// getenv('NAME'), which is false when unset.
func (p *phpParser) getenvCall(fn string) (phpValue, error) {
	p.pos += 2 // name and "("
	arg, err := p.expr()
	if err != nil {
		return arg, err
	}
	def := phpValue{isBool: true}
	if fn == "getenv_docker" {
		if !p.is(0, tPunct, ",") {
			return phpValue{}, fmt.Errorf("getenv_docker() needs two arguments")
		}
		p.pos++
		if def, err = p.expr(); err != nil {
			return def, err
		}
	}
	if !p.is(0, tPunct, ")") {
		return phpValue{}, fmt.Errorf("expression not understood")
	}
	p.pos++
	if v, ok := p.lookup(arg.s); ok {
		return phpValue{s: v}, nil
	}
	return def, nil
}

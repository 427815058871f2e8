package wpconfig

import (
	"fmt"
	"strconv"
	"strings"
)

// The PHP parser: statements and expressions of configuration files as a
// tree, which phpeval.go evaluates without running anything. What it does
// not understand (loops, classes, closures, arithmetic it has no use for)
// becomes an opaque statement or an unknown expression: never an error,
// so that one odd line does not hide the rest of the file.

type nodeOp int

const (
	nLit     nodeOp = iota // val
	nInterp                // kids: the parts of a string, concatenated
	nConst                 // s: a constant's name
	nVar                   // s: a variable's name
	nIndex                 // kids[0][kids[1]]
	nProp                  // kids[0]->s
	nCall                  // s(kids…)
	nStatic                // class::method(kids…): s is "class::method"
	nMethod                // kids[0]->s(kids[1:]…)
	nUnary                 // s kids[0]: "!", "-", "+", "@", or a cast "(int)"…
	nBinary                // kids[0] s kids[1]
	nTernary               // kids[0] ? kids[1] : kids[2]; kids[1] nil for ?:
	nAssign                // kids[0] s kids[1]: s is "=", ".=" …
	nInclude               // s: require, require_once, include, include_once; kids[0] the path
	nIsset                 // isset(kids…)
	nEmpty                 // empty(kids[0])
	nArray                 // kids: key, value pairs (a nil key is the next index)
	nUnknown               // s: why it is not evaluated
)

type node struct {
	op   nodeOp
	line int
	s    string
	val  value
	kids []*node
}

type stmtOp int

const (
	sExpr   stmtOp = iota // x
	sIf                   // conds, bodies (one more body than conds: else)
	sBlock                // body
	sReturn               // x (may be nil)
	sExit                 // exit or die
	sFunc                 // s: a declared function's name
	sOpaque               // s: what was skipped
)

type stmt struct {
	op     stmtOp
	line   int
	x      *node
	conds  []*node
	bodies [][]*stmt
	body   []*stmt
	s      string
	// touches: an opaque statement holds a define(), an include or a
	// Config:: call that is therefore not seen.
	touches bool
}

// phpFile is one parsed file: where it is (for __DIR__ and __FILE__) and
// its statements.
type phpFile struct {
	path  string
	stmts []*stmt
}

type parser struct {
	toks []token
	pos  int
	path string // the file, for __FILE__ and __DIR__
	// depth bounds the nesting of expressions and blocks, so that a
	// hostile file cannot exhaust the stack.
	depth int
}

const parseDepthLimit = 200

// parsePHP parses src (PHP from its start when inPHP, as eval() reads
// it); lexed, when not nil, is told how many tokens were made before the
// parser builds anything from them, and may refuse them.
func parsePHP(path, src string, inPHP bool, lexed func(int) error) (*phpFile, error) {
	toks, n, err := phpTokens(src, inPHP)
	if err != nil {
		return nil, err
	}
	if lexed != nil {
		if err := lexed(n); err != nil {
			return nil, err
		}
	}
	p := &parser{toks: toks, path: path}
	f := &phpFile{path: path}
	for p.peek(0).kind != tEOF {
		f.stmts = append(f.stmts, p.statement())
	}
	return f, nil
}

// walk visits every statement and node of stmts, without recursion: a
// chain of operators (a|b|c…) makes a tree as deep as it is long.
func walk(stmts []*stmt, visitStmt func(*stmt), visitNode func(*node)) {
	todo := append([]*stmt(nil), stmts...)
	var nodes []*node
	for len(todo) > 0 {
		s := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		visitStmt(s)
		nodes = append(append(nodes, s.x), s.conds...)
		for _, b := range s.bodies {
			todo = append(todo, b...)
		}
		todo = append(todo, s.body...)
		for len(nodes) > 0 {
			n := nodes[len(nodes)-1]
			nodes = nodes[:len(nodes)-1]
			if n == nil {
				continue
			}
			visitNode(n)
			nodes = append(nodes, n.kids...)
		}
	}
}

func (p *parser) peek(off int) token {
	if p.pos+off < len(p.toks) && p.pos+off >= 0 {
		return p.toks[p.pos+off]
	}
	line := 0
	if len(p.toks) > 0 {
		line = p.toks[len(p.toks)-1].line
	}
	return token{kind: tEOF, line: line}
}

func (p *parser) next() token { t := p.peek(0); p.pos++; return t }

func (p *parser) isPunct(off int, text string) bool {
	t := p.peek(off)
	return t.kind == tPunct && t.text == text
}

func (p *parser) isWord(off int, word string) bool {
	t := p.peek(off)
	return t.kind == tIdent && strings.EqualFold(t.text, word)
}

func (p *parser) accept(text string) bool {
	if p.isPunct(0, text) {
		p.pos++
		return true
	}
	return false
}

// skipBalanced skips tokens up to and including the ; that ends a statement
// at nesting depth zero, or a balanced {…} block that ends it; it stops
// before an unmatched closing brace. It tells whether the skipped tokens
// define, include or configure anything.
func (p *parser) skipBalanced() (touches bool) {
	depth := 0
	for {
		t := p.peek(0)
		switch {
		case t.kind == tEOF:
			return touches
		case t.kind == tIdent && touchesConfig(t.text):
			touches = true
		case t.kind == tPunct:
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]":
				if depth > 0 {
					depth--
				}
			case "}":
				if depth == 0 {
					return touches
				}
				depth--
				if depth == 0 && !p.isPunct(1, ")") && !p.isPunct(1, "->") && !p.isPunct(1, ";") &&
					!p.isWord(1, "catch") && !p.isWord(1, "finally") && !p.isWord(1, "else") && !p.isWord(1, "elseif") && !p.isWord(1, "while") {
					p.pos++
					return touches
				}
			case ";":
				if depth == 0 {
					p.pos++
					return touches
				}
			}
		}
		p.pos++
	}
}

func touchesConfig(word string) bool {
	switch strings.ToLower(lastSegment(word)) {
	case "define", "require", "require_once", "include", "include_once", "config", "eval", "putenv":
		return true
	}
	return false
}

// lastSegment is a namespaced name's last part: Env\env is env.
func lastSegment(name string) string {
	if i := strings.LastIndexByte(name, '\\'); i >= 0 {
		return name[i+1:]
	}
	return name
}

func (p *parser) opaque(line int, what string) *stmt {
	return &stmt{op: sOpaque, line: line, s: what, touches: p.skipBalanced()}
}

func (p *parser) statement() *stmt {
	t := p.peek(0)
	if p.depth > parseDepthLimit {
		return p.opaque(t.line, "code nested too deep")
	}
	p.depth++
	defer func() { p.depth-- }()
	switch {
	case p.accept(";"):
		return &stmt{op: sBlock, line: t.line}
	case p.isPunct(0, "{"):
		p.pos++
		return &stmt{op: sBlock, line: t.line, body: p.block("}")}
	case p.isPunct(0, "}"):
		// An unmatched brace: skip it, as a stray token.
		p.pos++
		return &stmt{op: sBlock, line: t.line}
	case t.kind != tIdent:
		return p.exprStatement()
	}
	word := strings.ToLower(t.text)
	switch word {
	case "if":
		return p.ifStatement()
	case "namespace":
		p.pos++
		for p.peek(0).kind == tIdent {
			p.pos++
		}
		if p.isPunct(0, "{") {
			p.pos++
			return &stmt{op: sBlock, line: t.line, body: p.block("}")}
		}
		p.accept(";")
		return &stmt{op: sBlock, line: t.line}
	case "use":
		// An import of names (use Roots\WPConfig\Config;) defines nothing.
		p.skipBalanced()
		return &stmt{op: sBlock, line: t.line}
	case "const":
		// const NAME = value, …; at the top of a file defines constants.
		p.pos++
		var body []*stmt
		for p.peek(0).kind == tIdent && p.isPunct(1, "=") {
			name := p.peek(0)
			p.pos += 2
			x := p.expr()
			body = append(body, &stmt{op: sExpr, line: name.line,
				x: &node{op: nCall, line: name.line, s: "define", kids: []*node{{op: nLit, line: name.line, val: str(name.text)}, x}}})
			if !p.accept(",") {
				break
			}
		}
		p.endStatement()
		return &stmt{op: sBlock, line: t.line, body: body}
	case "global", "static", "echo", "print", "unset", "declare", "goto":
		if word == "static" && p.isPunct(1, "::") {
			return p.exprStatement()
		}
		return p.opaque(t.line, word)
	case "function":
		if p.peek(1).kind == tIdent {
			name := p.peek(1).text
			p.skipBalanced()
			return &stmt{op: sFunc, line: t.line, s: name}
		}
	case "class", "interface", "trait", "enum", "abstract", "final", "readonly",
		"for", "foreach", "while", "do", "switch", "try", "match":
		return p.opaque(t.line, word)
	case "return":
		p.pos++
		var x *node
		if !p.isPunct(0, ";") && p.peek(0).kind != tEOF {
			x = p.expr()
		}
		p.endStatement()
		return &stmt{op: sReturn, line: t.line, x: x}
	case "exit", "die":
		p.skipBalanced()
		return &stmt{op: sExit, line: t.line}
	}
	return p.exprStatement()
}

func (p *parser) exprStatement() *stmt {
	start := p.pos
	line := p.peek(0).line
	x := p.lowExpr()
	if x.op == nUnknown || !(p.isPunct(0, ";") || p.peek(0).kind == tEOF || p.isPunct(0, "}")) {
		p.pos = start
		return p.opaque(line, "a statement not understood")
	}
	p.accept(";")
	return &stmt{op: sExpr, line: line, x: x}
}

func (p *parser) endStatement() {
	if !p.accept(";") && p.peek(0).kind != tEOF && !p.isPunct(0, "}") {
		p.skipBalanced()
	}
}

// block reads statements up to the closing word or brace, which it consumes.
func (p *parser) block(end ...string) []*stmt {
	var body []*stmt
	for {
		t := p.peek(0)
		if t.kind == tEOF {
			return body
		}
		for _, e := range end {
			if e == "}" && p.isPunct(0, "}") {
				p.pos++
				return body
			}
			if e != "}" && p.isWord(0, e) {
				return body
			}
		}
		body = append(body, p.statement())
	}
}

// ifStatement reads if/elseif/else in both the brace and the colon form.
func (p *parser) ifStatement() *stmt {
	s := &stmt{op: sIf, line: p.next().line}
	cond := func() *node {
		if !p.accept("(") {
			return &node{op: nUnknown, s: "if without a condition"}
		}
		c := p.expr()
		if !p.accept(")") {
			p.skipToClose()
			return &node{op: nUnknown, line: s.line, s: "condition not understood"}
		}
		return c
	}
	s.conds = append(s.conds, cond())
	if p.accept(":") {
		s.bodies = append(s.bodies, p.block("elseif", "else", "endif"))
		for {
			switch {
			case p.isWord(0, "elseif"):
				p.pos++
				s.conds = append(s.conds, cond())
				p.accept(":")
				s.bodies = append(s.bodies, p.block("elseif", "else", "endif"))
				continue
			case p.isWord(0, "else"):
				p.pos++
				p.accept(":")
				s.bodies = append(s.bodies, p.block("endif"))
				continue
			case p.isWord(0, "endif"):
				p.pos++
				p.accept(";")
			}
			return s
		}
	}
	s.bodies = append(s.bodies, []*stmt{p.statement()})
	for {
		switch {
		case p.isWord(0, "elseif"), p.isWord(0, "else") && p.isWord(1, "if"):
			if p.isWord(0, "else") {
				p.pos++
			}
			p.pos++
			s.conds = append(s.conds, cond())
			s.bodies = append(s.bodies, []*stmt{p.statement()})
			continue
		case p.isWord(0, "else"):
			p.pos++
			s.bodies = append(s.bodies, []*stmt{p.statement()})
		}
		return s
	}
}

// skipToClose skips to the ) that closes an open parenthesis.
func (p *parser) skipToClose() {
	depth := 1
	for p.peek(0).kind != tEOF {
		t := p.next()
		if t.kind == tPunct && t.text == "(" {
			depth++
		}
		if t.kind == tPunct && t.text == ")" {
			if depth--; depth == 0 {
				return
			}
		}
	}
}

func unknown(line int, format string, a ...any) *node {
	return &node{op: nUnknown, line: line, s: fmt.Sprintf(format, a...)}
}

// lowExpr := expr (('and' | 'or' | 'xor') expr)*
func (p *parser) lowExpr() *node {
	x := p.expr()
	for p.isWord(0, "and") || p.isWord(0, "or") || p.isWord(0, "xor") {
		op := strings.ToLower(p.next().text)
		switch op {
		case "and":
			op = "&&"
		case "or":
			op = "||"
		}
		x = &node{op: nBinary, line: x.line, s: op, kids: []*node{x, p.expr()}}
	}
	return x
}

// expr is an assignment or a ternary.
func (p *parser) expr() *node {
	if p.depth > parseDepthLimit {
		return unknown(p.peek(0).line, "expression nested too deep")
	}
	p.depth++
	defer func() { p.depth-- }()
	x := p.ternary()
	t := p.peek(0)
	if t.kind == tPunct {
		switch t.text {
		case "=", ".=", "??=", "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "**=", "<<=", ">>=":
			p.pos++
			if t.text == "=" && p.accept("&") { // assignment by reference
				t.text = "="
			}
			return &node{op: nAssign, line: t.line, s: t.text, kids: []*node{x, p.expr()}}
		}
	}
	return x
}

func (p *parser) ternary() *node {
	x := p.coalesce()
	for p.isPunct(0, "?") {
		line := p.next().line
		var a *node
		if !p.isPunct(0, ":") {
			a = p.expr()
		}
		if !p.accept(":") {
			return unknown(line, "?: not understood")
		}
		b := p.expr()
		x = &node{op: nTernary, line: line, kids: []*node{x, a, b}}
	}
	return x
}

// coalesce reads a ?? b ?? c, which groups to the right: a loop, not a
// recursion, however long the chain.
func (p *parser) coalesce() *node {
	xs := []*node{p.binary(0)}
	var lines []int
	for p.isPunct(0, "??") {
		lines = append(lines, p.next().line)
		xs = append(xs, p.binary(0))
	}
	x := xs[len(xs)-1]
	for i := len(xs) - 2; i >= 0; i-- {
		x = &node{op: nBinary, line: lines[i], s: "??", kids: []*node{xs[i], x}}
	}
	return x
}

// Binary operators by precedence, loosest first.
var binaryLevels = [][]string{
	{"||"}, {"&&"}, {"|"}, {"^"}, {"&"},
	{"==", "!=", "===", "!==", "<>", "<=>"},
	{"<", ">", "<=", ">="},
	{"."},
	{"<<", ">>"},
	{"+", "-"},
	{"*", "/", "%"},
}

func (p *parser) binary(level int) *node {
	if level == len(binaryLevels) {
		return p.unary()
	}
	x := p.binary(level + 1)
	for {
		t := p.peek(0)
		matched := false
		if t.kind == tPunct {
			for _, op := range binaryLevels[level] {
				if t.text == op {
					matched = true
				}
			}
		}
		if !matched {
			return x
		}
		p.pos++
		x = &node{op: nBinary, line: t.line, s: t.text, kids: []*node{x, p.binary(level + 1)}}
	}
}

var casts = map[string]string{"int": "int", "integer": "int", "bool": "bool", "boolean": "bool",
	"string": "string", "float": "float", "double": "float", "array": "array", "object": "object"}

func (p *parser) unary() *node {
	t := p.peek(0)
	if p.depth > parseDepthLimit {
		p.pos++
		return unknown(t.line, "expression nested too deep")
	}
	p.depth++
	defer func() { p.depth-- }()
	if t.kind == tPunct {
		switch t.text {
		case "!", "-", "+", "@", "~":
			p.pos++
			return &node{op: nUnary, line: t.line, s: t.text, kids: []*node{p.unary()}}
		case "(":
			if c := p.peek(1); c.kind == tIdent && p.isPunct(2, ")") {
				if cast, ok := casts[strings.ToLower(c.text)]; ok {
					p.pos += 3
					return &node{op: nUnary, line: t.line, s: "(" + cast + ")", kids: []*node{p.unary()}}
				}
			}
		}
	}
	if t.kind == tIdent && strings.EqualFold(t.text, "new") {
		p.pos++
		p.postfix(p.primary())
		return unknown(t.line, "new is not evaluated")
	}
	return p.postfix(p.primary())
}

func (p *parser) postfix(x *node) *node {
	for {
		t := p.peek(0)
		switch {
		case p.isPunct(0, "->") || p.isPunct(0, "?->"):
			p.pos++
			name := p.next()
			if name.kind != tIdent {
				return unknown(t.line, "-> not understood")
			}
			if p.isPunct(0, "(") {
				x = &node{op: nMethod, line: t.line, s: name.text, kids: append([]*node{x}, p.args()...)}
			} else {
				x = &node{op: nProp, line: t.line, s: name.text, kids: []*node{x}}
			}
		case p.isPunct(0, "::"):
			p.pos++
			name := p.next()
			class := ""
			if x.op == nConst {
				class = x.s
			}
			switch {
			case name.kind == tIdent && p.isPunct(0, "("):
				x = &node{op: nStatic, line: t.line, s: class + "::" + name.text, kids: p.args()}
			default:
				x = unknown(t.line, "%s::%s is not evaluated", class, name.text)
			}
		case p.isPunct(0, "["):
			p.pos++
			var key *node
			if !p.isPunct(0, "]") {
				key = p.expr()
			}
			if !p.accept("]") {
				return unknown(t.line, "[ not understood")
			}
			if key == nil {
				key = unknown(t.line, "[] is not a value")
			}
			x = &node{op: nIndex, line: t.line, kids: []*node{x, key}}
		case p.isPunct(0, "(") && (x.op == nVar || x.op == nIndex || x.op == nProp):
			p.args()
			x = unknown(t.line, "a call through a variable is not evaluated")
		case p.isPunct(0, "++") || p.isPunct(0, "--"):
			p.pos++
			x = unknown(t.line, "%s is not evaluated", t.text)
		default:
			return x
		}
	}
}

// args reads a parenthesized argument list.
func (p *parser) args() []*node {
	line := p.next().line // "("
	var args []*node
	for !p.isPunct(0, ")") {
		if p.peek(0).kind == tEOF {
			return append(args, unknown(line, "unterminated argument list"))
		}
		if p.peek(0).kind == tIdent && p.isPunct(1, ":") && !p.isPunct(1, "::") {
			p.pos += 2 // a named argument: its value in order is good enough here
		}
		p.accept("...")
		args = append(args, p.expr())
		if !p.accept(",") && !p.isPunct(0, ")") {
			p.skipToClose()
			return append(args, unknown(line, "argument list not understood"))
		}
	}
	p.pos++
	return args
}

func (p *parser) primary() *node {
	t := p.next()
	switch t.kind {
	case tString:
		return &node{op: nLit, line: t.line, val: str(t.text)}
	case tInterp:
		n := &node{op: nInterp, line: t.line}
		for _, part := range t.parts {
			if part.expr == nil {
				n.kids = append(n.kids, &node{op: nLit, line: t.line, val: str(part.lit)})
				continue
			}
			sub := &parser{toks: part.expr, path: p.path, depth: p.depth}
			x := sub.expr()
			if sub.peek(0).kind != tEOF {
				x = unknown(t.line, "string interpolation not understood")
			}
			n.kids = append(n.kids, x)
		}
		return n
	case tNumber:
		return &node{op: nLit, line: t.line, val: number(t.text)}
	case tVar:
		return &node{op: nVar, line: t.line, s: t.text}
	case tPunct:
		switch t.text {
		case "(":
			x := p.expr()
			if !p.accept(")") {
				p.skipToClose()
				return unknown(t.line, "( not understood")
			}
			return x
		case "[":
			return p.arrayLit(t.line, "]")
		case "&":
			return p.unary()
		}
		return unknown(t.line, "%q not understood", t.text)
	case tIdent:
		return p.word(t)
	}
	return unknown(t.line, "unexpected end of file")
}

func (p *parser) word(t token) *node {
	name := strings.TrimPrefix(t.text, `\`)
	lower := strings.ToLower(name)
	switch lower {
	case "true":
		return &node{op: nLit, line: t.line, val: boolean(true)}
	case "false":
		return &node{op: nLit, line: t.line, val: boolean(false)}
	case "null":
		return &node{op: nLit, line: t.line, val: value{}}
	case "__dir__":
		return &node{op: nLit, line: t.line, val: str(phpDirname(p.path, 1))}
	case "__file__":
		return &node{op: nLit, line: t.line, val: str(p.path)}
	case "__line__":
		return &node{op: nLit, line: t.line, val: integer(int64(t.line))}
	case "require", "require_once", "include", "include_once":
		return &node{op: nInclude, line: t.line, s: lower, kids: []*node{p.expr()}}
	case "array", "list":
		if p.isPunct(0, "(") {
			p.pos++
			return p.arrayLit(t.line, ")")
		}
	case "isset", "empty":
		if p.isPunct(0, "(") {
			args := p.args()
			if lower == "empty" {
				if len(args) != 1 {
					return unknown(t.line, "empty() takes one argument")
				}
				return &node{op: nEmpty, line: t.line, kids: args}
			}
			return &node{op: nIsset, line: t.line, kids: args}
		}
	case "function", "fn", "static":
		p.skipBalancedExpr()
		return unknown(t.line, "a closure is not evaluated")
	case "print":
		p.expr()
		return &node{op: nLit, line: t.line, val: integer(1)}
	}
	if p.isPunct(0, "(") {
		return &node{op: nCall, line: t.line, s: name, kids: p.args()}
	}
	return &node{op: nConst, line: t.line, s: name}
}

// skipBalancedExpr skips a closure: its parameter list, use list, return
// type and body.
func (p *parser) skipBalancedExpr() {
	for p.peek(0).kind != tEOF {
		if p.isPunct(0, "(") {
			p.args()
			continue
		}
		if p.isPunct(0, "{") {
			p.pos++
			p.block("}")
			return
		}
		if p.isPunct(0, "=>") { // fn () => expr
			p.pos++
			p.expr()
			return
		}
		if p.isPunct(0, ";") || p.isPunct(0, ")") || p.isPunct(0, ",") {
			return
		}
		p.pos++
	}
}

func (p *parser) arrayLit(line int, end string) *node {
	n := &node{op: nArray, line: line}
	for !p.isPunct(0, end) {
		if p.peek(0).kind == tEOF {
			return unknown(line, "unterminated array")
		}
		if p.accept(",") { // list() may skip elements
			continue
		}
		p.accept("...")
		v := p.expr()
		var k *node
		if p.accept("=>") {
			k, v = v, p.expr()
		}
		n.kids = append(n.kids, k, v)
		if !p.accept(",") && !p.isPunct(0, end) {
			for p.peek(0).kind != tEOF && !p.isPunct(0, end) {
				p.pos++
			}
			p.accept(end)
			return unknown(line, "array not understood")
		}
	}
	p.pos++
	return n
}

// number reads a PHP integer or float literal.
func number(text string) value {
	t := strings.ReplaceAll(text, "_", "")
	lower := strings.ToLower(t)
	switch {
	case strings.HasPrefix(lower, "0x"):
		if n, err := strconv.ParseInt(t[2:], 16, 64); err == nil {
			return integer(n)
		}
	case strings.HasPrefix(lower, "0b"):
		if n, err := strconv.ParseInt(t[2:], 2, 64); err == nil {
			return integer(n)
		}
	case strings.HasPrefix(lower, "0o"):
		if n, err := strconv.ParseInt(t[2:], 8, 64); err == nil {
			return integer(n)
		}
	case len(t) > 1 && t[0] == '0' && isDigits(t):
		if n, err := strconv.ParseInt(t[1:], 8, 64); err == nil {
			return integer(n)
		}
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		return integer(n)
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return float(f)
	}
	return value{k: vUnknown, s: fmt.Sprintf("number %q not understood", text)}
}

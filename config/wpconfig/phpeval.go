package wpconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wpsidecar/wpsidecar/internal/regularfile"
)

// The evaluator runs a wp-config.php as far as it can be known without
// running PHP: constants, variables, if/elseif/else, the includes it
// makes (require, include, their _once forms, and eval of a known string),
// environment lookups (getenv, getenv_docker, $_ENV, $_SERVER, Bedrock's
// env()), Bedrock's Config::define/get/apply and its .env files. What
// depends on a request ($_SERVER['HTTP_HOST']) or on code it does not run
// is unknown; a setting that gets an unknown value is reported, never
// guessed.

// FS is how the evaluator reaches files; the tests give it a map.
type FS interface {
	ReadFile(name string) ([]byte, error)
	Stat(name string) (fs.FileInfo, error)
}

// OSFS is the file system, each file read only when it is a regular file
// of at most MaxFileBytes, without blocking (package regularfile).
type OSFS struct{}

func (OSFS) ReadFile(name string) ([]byte, error)  { return regularfile.Read(name, MaxFileBytes) }
func (OSFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// Bounds on the work a configuration can ask for; phpbudget.go has those
// of the whole reading.
const (
	maxIncludeDepth = 16      // files open at once (includes and eval)
	MaxFiles        = 64      // files read in all, NAME_FILE secrets counted
	MaxFileBytes    = 1 << 20 // one file
	maxStringBytes  = 1 << 20 // one string value
	maxArraySize    = 10000   // elements of an array, nested ones counted
)

// errTooLarge is what regularfile.Read says of a file over MaxFileBytes,
// for a file an FS other than OSFS gives whole.
var errTooLarge = errors.New("larger than 1 MiB")

type constant struct {
	v  value
	at string // file:line of the define(), and where its value came from
}

type envVar struct {
	v         string
	at        string // file:line of the .env entry
	overrides bool   // a mutable Dotenv: wins over the process environment
	uncertain string // loaded under a condition that is not known
	why       string // the value is not known: why
}

type flow int

const (
	flowNext flow = iota
	flowReturn
	flowExit
)

type evaluator struct {
	fsys   FS
	getenv func(string) (string, bool) // the sidecar's environment
	cwd    string                      // PHP's working directory: wp-config.php's

	consts     map[string]constant
	unresolved map[string]string
	vars       map[string]value
	varAt      map[string]string
	funcs      map[string]bool
	// bedrock is Roots\WPConfig\Config's map, in the order keys were set.
	bedrock     *phpArray
	bedrockAt   map[string]string
	dotenv      map[string]envVar
	seen        map[string]bool // every file included so far, for _once
	stack       []string        // files being evaluated, innermost last
	files       []string        // every file read
	reads       int
	budget      budget
	exhausted   bool // the evaluation stopped: exit, or the budget spent
	warnings    []string
	uncertain   string // why the code being evaluated may not run in PHP
	cur         string // the file being evaluated
	returnValue value
}

func (e *evaluator) at(line int) string { return fmt.Sprintf("%s:%d", e.cur, line) }

func (e *evaluator) warn(format string, a ...any) {
	e.warnings = append(e.warnings, fmt.Sprintf(format, a...))
}

// spent stops the evaluation once the budget is spent, saying so once;
// then every value is unknown and no statement runs.
func (e *evaluator) spent() bool {
	if e.budget.err != nil && !e.exhausted {
		e.exhausted = true
		e.warn("%s: evaluation stopped: the configuration asks for more than a configuration file needs (%v); what it defines after this is not seen", e.cur, e.budget.err)
	}
	return e.exhausted
}

// charge counts steps of evaluation; false once the evaluation stopped.
func (e *evaluator) charge(steps int) bool {
	e.budget.step(steps)
	return !e.spent()
}

// alloc counts bytes about to be allocated; false once the evaluation
// stopped.
func (e *evaluator) alloc(bytes int) bool {
	e.budget.alloc(bytes)
	return !e.spent()
}

// elements counts n array elements (or tokens, or nodes) of size bytes
// each; false once the evaluation stopped.
func (e *evaluator) elements(n, size int) bool {
	e.budget.elements(n, size)
	return !e.spent()
}

// stopped is the value of what is evaluated once the evaluation stopped.
func (e *evaluator) stopped() value {
	if e.budget.err != nil {
		return unknownValue("evaluation stopped: " + e.budget.err.Error())
	}
	return unknownValue("evaluation stopped")
}

// grow is asked before a string of n bytes is built: a string over
// maxStringBytes, or one the budget has no room for, is unknown.
func (e *evaluator) grow(n int) (value, bool) {
	if n > maxStringBytes {
		return unknownValue("a string longer than 1 MiB"), false
	}
	if !e.alloc(n) {
		return e.stopped(), false
	}
	return value{}, true
}

// scan charges reading strings through: 64 bytes a step.
func (e *evaluator) scan(vs ...value) bool {
	n := 0
	for _, v := range vs {
		switch v.k {
		case vString:
			n += len(v.s)
		case vArray, vObject:
			n += 64 * v.arr.size
		}
	}
	return e.charge(n / 64)
}

// run evaluates a file's statements.
func (e *evaluator) run(f *phpFile) flow {
	prev := e.cur
	e.cur = f.path
	defer func() { e.cur = prev }()
	return e.exec(f.stmts)
}

func (e *evaluator) exec(stmts []*stmt) flow {
	ok := e.budget.enter()
	defer e.budget.leave()
	if !ok {
		e.spent()
		return flowExit
	}
	for _, s := range stmts {
		if !e.charge(1) {
			return flowExit
		}
		if fl := e.stmt(s); fl != flowNext {
			return fl
		}
	}
	return flowNext
}

func (e *evaluator) stmt(s *stmt) flow {
	switch s.op {
	case sExpr:
		e.eval(s.x)
	case sBlock:
		return e.exec(s.body)
	case sIf:
		for i, c := range s.conds {
			v := e.eval(c)
			if !v.known() {
				e.maybe(fmt.Sprintf("%s: %s", e.at(c.line), v.s), func() {
					for _, b := range s.bodies[i:] {
						e.exec(b)
					}
				})
				return flowNext
			}
			if v.truthy() {
				return e.exec(s.bodies[i])
			}
		}
		if len(s.bodies) > len(s.conds) {
			return e.exec(s.bodies[len(s.conds)])
		}
	case sReturn:
		if e.uncertain != "" {
			return flowNext
		}
		e.returnValue = boolean(true)
		if s.x != nil {
			e.returnValue = e.eval(s.x)
		}
		return flowReturn
	case sExit:
		if e.uncertain != "" {
			return flowNext
		}
		e.warn("%s: exit: PHP stops here, before WordPress runs", e.at(s.line))
		return flowExit
	case sFunc:
		e.funcs[strings.ToLower(lastSegment(s.s))] = true
	case sOpaque:
		if s.touches {
			e.warn("%s: %s is not evaluated; what it defines or includes is not seen", e.at(s.line), s.s)
		}
	}
	return flowNext
}

// maybe evaluates code that PHP may or may not run: what it defines or
// assigns becomes unknown.
func (e *evaluator) maybe(why string, f func()) {
	prev := e.uncertain
	if prev == "" {
		e.uncertain = why
	}
	f()
	e.uncertain = prev
}

// define is PHP's define(): the first definition of a name wins.
func (e *evaluator) define(name string, v value, at string) {
	if _, ok := e.consts[name]; ok {
		return
	}
	if _, ok := e.unresolved[name]; ok {
		return
	}
	switch {
	case e.uncertain != "":
		e.unresolved[name] = fmt.Sprintf("%s: defined under a condition known only when PHP runs (%s)", at, e.uncertain)
	case !v.known():
		e.unresolved[name] = fmt.Sprintf("%s: %s", at, v.s)
	default:
		if v.from != "" {
			at += " (" + v.from + ")"
		}
		e.consts[name] = constant{v: v, at: at}
	}
}

func (e *evaluator) assign(name string, v value, line int) {
	if e.uncertain != "" {
		v = unknownValue(fmt.Sprintf("$%s is assigned under a condition known only when PHP runs (%s)", name, e.uncertain))
	}
	e.vars[name] = v
	at := e.at(line)
	if v.from != "" {
		at += " (" + v.from + ")"
	}
	e.varAt[name] = at
}

func (e *evaluator) eval(n *node) value {
	if n == nil {
		return value{}
	}
	ok := e.budget.enter()
	defer e.budget.leave()
	if !ok || !e.charge(1) {
		e.spent()
		return e.stopped()
	}
	switch n.op {
	case nLit:
		return n.val
	case nUnknown:
		return unknownValue(n.s)
	case nInterp:
		parts := make([]string, len(n.kids))
		size, from := 0, ""
		for i, k := range n.kids {
			v := e.eval(k)
			if !v.known() {
				return v
			}
			if from == "" {
				from = v.from
			}
			parts[i] = v.String()
			if size += len(parts[i]); size > maxStringBytes {
				return unknownValue("a string longer than 1 MiB")
			}
		}
		if bad, ok := e.grow(size); !ok {
			return bad
		}
		return value{k: vString, s: strings.Join(parts, ""), from: from}
	case nConst:
		return e.constant(n.s)
	case nVar:
		switch n.s {
		case "_ENV", "_SERVER", "GLOBALS", "_GET", "_POST", "_COOKIE", "_REQUEST":
			return unknownValue("$" + n.s + " as a whole is not evaluated")
		}
		if v, ok := e.vars[n.s]; ok {
			return v
		}
		return value{} // an undefined variable is null
	case nIndex:
		return e.index(n)
	case nProp:
		x := e.eval(n.kids[0])
		switch x.k {
		case vUnknown:
			return x
		case vObject:
			v, _ := x.arr.get(n.s)
			return v
		}
		return value{}
	case nCall:
		return e.call(n)
	case nStatic:
		return e.static(n)
	case nMethod:
		return e.method(n)
	case nUnary:
		return e.unary(n)
	case nBinary:
		return e.binary(n)
	case nTernary:
		c := e.eval(n.kids[0])
		if !c.known() {
			return c
		}
		if c.truthy() {
			if n.kids[1] == nil {
				return c
			}
			return e.eval(n.kids[1])
		}
		return e.eval(n.kids[2])
	case nAssign:
		return e.assignment(n)
	case nInclude:
		return e.include(n)
	case nIsset:
		for _, k := range n.kids {
			v := e.eval(k)
			if !v.known() {
				return v
			}
			if v.k == vNull {
				return boolean(false)
			}
		}
		return boolean(true)
	case nEmpty:
		v := e.eval(n.kids[0])
		if !v.known() {
			return v
		}
		return boolean(!v.truthy())
	case nArray:
		arr := &phpArray{}
		next := int64(0)
		for i := 0; i+1 < len(n.kids); i += 2 {
			v := e.eval(n.kids[i+1])
			if !v.known() {
				return v
			}
			key := strconv.FormatInt(next, 10)
			if n.kids[i] != nil {
				k := e.eval(n.kids[i])
				if !k.known() {
					return k
				}
				key = k.key()
			}
			if k, err := strconv.ParseInt(key, 10, 64); err == nil && k >= next {
				next = k + 1
			}
			if !e.elements(1, elemBytes+len(key)) {
				return e.stopped()
			}
			arr.set(key, v)
			if arr.size > maxArraySize {
				return unknownValue("an array larger than configuration needs")
			}
			if arr.depth > maxArrayDepth {
				return unknownValue(fmt.Sprintf("arrays nested more than %d deep", maxArrayDepth))
			}
		}
		return value{k: vArray, arr: arr}
	}
	return unknownValue("expression not understood")
}

// requestKeys are $_SERVER entries that PHP fills from the request, not
// the environment.
func requestKey(k string) bool {
	switch k {
	case "HTTPS", "REQUEST_URI", "REQUEST_METHOD", "REQUEST_SCHEME", "REQUEST_TIME", "REQUEST_TIME_FLOAT",
		"QUERY_STRING", "SERVER_NAME", "SERVER_PORT", "SERVER_ADDR", "SERVER_PROTOCOL", "SERVER_SOFTWARE",
		"REMOTE_ADDR", "REMOTE_PORT", "REMOTE_USER", "DOCUMENT_ROOT", "DOCUMENT_URI", "SCRIPT_NAME",
		"SCRIPT_FILENAME", "PHP_SELF", "PATH_INFO", "ORIG_PATH_INFO", "CONTENT_TYPE", "CONTENT_LENGTH",
		"GATEWAY_INTERFACE", "PHP_AUTH_USER", "PHP_AUTH_PW", "AUTH_TYPE", "argv", "argc":
		return true
	}
	return strings.HasPrefix(k, "HTTP_") || strings.HasPrefix(k, "REDIRECT_")
}

func (e *evaluator) index(n *node) value {
	key := e.eval(n.kids[1])
	if !key.known() {
		return key
	}
	if v := n.kids[0]; v.op == nVar {
		switch v.s {
		case "_ENV":
			return e.envValue(key.String())
		case "_SERVER":
			if requestKey(key.String()) {
				return unknownValue(fmt.Sprintf("$_SERVER['%s'] depends on the request", key.String()))
			}
			return e.envValue(key.String())
		case "GLOBALS":
			if g, ok := e.vars[key.String()]; ok {
				return g
			}
			return value{}
		case "_GET", "_POST", "_COOKIE", "_REQUEST", "_FILES":
			return unknownValue(fmt.Sprintf("$%s depends on the request", v.s))
		}
	}
	x := e.eval(n.kids[0])
	switch x.k {
	case vUnknown:
		return x
	case vArray:
		v, _ := x.arr.get(key.key())
		return v
	case vString:
		i, err := strconv.Atoi(key.String())
		if err == nil && i < 0 {
			i += len(x.s)
		}
		if err != nil || i < 0 || i >= len(x.s) {
			return value{}
		}
		return str(x.s[i : i+1])
	}
	return value{}
}

// lookupEnv finds an environment variable as PHP sees it once Bedrock's
// .env files are loaded: the process environment (here the sidecar's)
// wins over them unless they were loaded mutable.
func (e *evaluator) lookupEnv(name string) (value, bool) {
	d, loaded := e.dotenv[name]
	if loaded && d.uncertain != "" {
		return unknownValue(fmt.Sprintf("%s is loaded from %s under a condition known only when PHP runs (%s)", name, d.at, d.uncertain)), true
	}
	if loaded && d.why != "" {
		return unknownValue(fmt.Sprintf("%s in %s: %s", name, d.at, d.why)), true
	}
	if loaded && d.overrides {
		return value{k: vString, s: d.v, from: name + " in " + d.at}, true
	}
	if v, ok := e.getenv(name); ok {
		return value{k: vString, s: v, from: name + " from the environment"}, true
	}
	if loaded {
		return value{k: vString, s: d.v, from: name + " in " + d.at}, true
	}
	return value{}, false
}

// envValue is $_ENV['NAME']: the string, or null when unset.
func (e *evaluator) envValue(name string) value {
	v, _ := e.lookupEnv(name)
	return v
}

func (e *evaluator) constant(name string) value {
	if c, ok := e.consts[name]; ok {
		return c.v
	}
	if why, ok := e.unresolved[name]; ok {
		return unknownValue(fmt.Sprintf("%s is not known (%s)", name, why))
	}
	if v, ok := phpConstants[strings.ToUpper(name)]; ok {
		return v
	}
	if name == "ABSPATH" {
		return unknownValue("ABSPATH is not defined here: WordPress's wp-load.php defines it, and there is no wp-settings.php beside wp-config.php")
	}
	return unknownValue(fmt.Sprintf("constant %s is not defined here", name))
}

// phpConstants are PHP's own constants that configuration files use.
var phpConstants = map[string]value{
	"DIRECTORY_SEPARATOR":    str("/"),
	"PATH_SEPARATOR":         str(":"),
	"PHP_EOL":                str("\n"),
	"PHP_OS":                 str("Linux"),
	"PHP_OS_FAMILY":          str("Linux"),
	"PHP_INT_MAX":            integer(1<<63 - 1),
	"E_ALL":                  integer(32767),
	"E_STRICT":               integer(2048),
	"E_DEPRECATED":           integer(8192),
	"E_NOTICE":               integer(8),
	"E_WARNING":              integer(2),
	"MYSQLI_CLIENT_SSL":      integer(2048),
	"MYSQLI_CLIENT_COMPRESS": integer(32),
	"MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT": integer(64),
	"MYSQLI_CLIENT_SSL_VERIFY_SERVER_CERT":      integer(1073741824),
	"FILTER_VALIDATE_BOOLEAN":                   integer(258),
	"FILTER_VALIDATE_BOOL":                      integer(258),
	"FILTER_VALIDATE_INT":                       integer(257),
	"FILTER_NULL_ON_FAILURE":                    integer(134217728),
}

func (e *evaluator) assignment(n *node) value {
	target := n.kids[0]
	v := e.eval(n.kids[1])
	if n.s != "=" {
		if n.s != ".=" && n.s != "??=" {
			v = unknownValue(n.s + " is not evaluated")
		} else if target.op == nVar {
			old := e.eval(target)
			switch {
			case n.s == "??=" && old.known() && old.k != vNull:
				return old
			case n.s == ".=":
				v = e.concat(old, v)
			}
		}
	}
	switch target.op {
	case nVar:
		e.assign(target.s, v, n.line)
	case nArray: // list(…) = or […] =: the targets become unknown
		for i := 1; i < len(target.kids); i += 2 {
			if t := target.kids[i]; t != nil && t.op == nVar {
				e.assign(t.s, unknownValue("destructuring is not evaluated"), n.line)
			}
		}
	}
	// Writes into arrays, properties and $_SERVER change nothing the
	// sidecar reads.
	return v
}

func (e *evaluator) concat(a, b value) value {
	if !a.known() {
		return a
	}
	if !b.known() {
		return b
	}
	from := a.from
	if from == "" {
		from = b.from
	}
	as, bs := a.String(), b.String()
	if bad, ok := e.grow(len(as) + len(bs)); !ok {
		return bad
	}
	return value{k: vString, s: as + bs, from: from}
}

func (e *evaluator) unary(n *node) value {
	v := e.eval(n.kids[0])
	if !v.known() {
		return v
	}
	switch n.s {
	case "!":
		return boolean(!v.truthy())
	case "@", "+":
		return v
	case "-":
		switch v.k {
		case vInt:
			return integer(-v.n)
		case vFloat:
			return float(-v.f)
		}
		if f, ok := v.numeric(); ok {
			return float(-f)
		}
		return unknownValue("- of a value that is not a number")
	case "(string)":
		return value{k: vString, s: v.String(), from: v.from}
	case "(bool)":
		return boolean(v.truthy())
	case "(int)":
		if v.k == vInt {
			return v
		}
		f, _ := v.numeric()
		if v.k == vString {
			f = leadingNumber(v.s)
		}
		return integer(int64(f))
	case "(object)":
		switch v.k {
		case vArray:
			return value{k: vObject, arr: v.arr}
		case vObject:
			return v
		case vNull:
			return value{k: vObject, arr: &phpArray{}}
		}
		if !e.elements(1, elemBytes) {
			return e.stopped()
		}
		return value{k: vObject, arr: newArray("scalar", v)}
	case "(array)":
		switch v.k {
		case vArray:
			return v
		case vObject:
			return value{k: vArray, arr: v.arr}
		case vNull:
			return value{k: vArray, arr: &phpArray{}}
		}
		if !e.elements(1, elemBytes) {
			return e.stopped()
		}
		return value{k: vArray, arr: newArray("0", v)}
	}
	return unknownValue(n.s + " is not evaluated")
}

// leadingNumber is PHP's (int) of a string: its leading digits.
func leadingNumber(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || end == 0 && (s[end] == '-' || s[end] == '+')) {
		end++
	}
	f, _ := strconv.ParseFloat(s[:end], 64)
	return f
}

func (e *evaluator) binary(n *node) value {
	switch n.s {
	case "&&", "||":
		a := e.eval(n.kids[0])
		if a.known() && a.truthy() == (n.s == "||") {
			return boolean(n.s == "||")
		}
		b := e.eval(n.kids[1])
		if !b.known() {
			return b
		}
		if !a.known() {
			// unknown && false is false; unknown || true is true.
			if b.truthy() == (n.s == "||") {
				return boolean(n.s == "||")
			}
			return a
		}
		return boolean(b.truthy())
	case "??":
		a := e.eval(n.kids[0])
		if !a.known() || a.k != vNull {
			return a
		}
		return e.eval(n.kids[1])
	}
	a, b := e.eval(n.kids[0]), e.eval(n.kids[1])
	if !a.known() {
		return a
	}
	if !b.known() {
		return b
	}
	// Comparing reads both sides through, and so does . (which grow
	// charges as well).
	if !e.scan(a, b) {
		return e.stopped()
	}
	switch n.s {
	case ".":
		return e.concat(a, b)
	case "==":
		return boolean(looseEqual(a, b))
	case "!=", "<>":
		return boolean(!looseEqual(a, b))
	case "===":
		return boolean(strictEqual(a, b))
	case "!==":
		return boolean(!strictEqual(a, b))
	case "|", "&", "^":
		if a.k == vInt && b.k == vInt {
			switch n.s {
			case "|":
				return integer(a.n | b.n)
			case "&":
				return integer(a.n & b.n)
			}
			return integer(a.n ^ b.n)
		}
	case "+", "-", "*":
		if a.k == vInt && b.k == vInt {
			switch n.s {
			case "+":
				return integer(a.n + b.n)
			case "-":
				return integer(a.n - b.n)
			}
			return integer(a.n * b.n)
		}
	}
	return unknownValue(n.s + " is not evaluated")
}

// include follows require, require_once, include and include_once.
func (e *evaluator) include(n *node) value {
	kind := n.s
	at := e.at(n.line)
	pv := e.eval(n.kids[0])
	if !pv.known() {
		e.warn("%s: %s of a path known only when PHP runs (%s); settings defined there are not seen", at, kind, pv.s)
		return unknownValue("the included file's value is not known")
	}
	p := pv.String()
	switch {
	case filepath.Base(p) == "wp-settings.php":
		return boolean(true) // WordPress itself, not its configuration
	case strings.HasSuffix(p, "/vendor/autoload.php") || p == "vendor/autoload.php":
		// Composer's autoloader: the classes Bedrock loads through it
		// (Config, env(), Dotenv) are understood without it.
		return boolean(true)
	case strings.Contains(p, "://"):
		e.warn("%s: %s of %q: not a local file; settings defined there are not seen", at, kind, p)
		return boolean(false)
	}
	path, ok := e.resolve(p)
	if e.exhausted {
		return e.stopped()
	}
	if !ok {
		e.warn("%s: %s of %s: no such file (WordPress would %s); settings defined there are not seen", at, kind, path, map[bool]string{true: "stop with a fatal error", false: "warn and go on"}[strings.HasPrefix(kind, "require")])
		return boolean(false)
	}
	if strings.HasSuffix(kind, "_once") && e.seen[path] {
		return boolean(true)
	}
	for _, open := range e.stack {
		if open == path {
			e.warn("%s: %s of %s: an include cycle (%s → %s); not followed again", at, kind, path, strings.Join(e.stack, " → "), path)
			return boolean(false)
		}
	}
	f, err := e.read(path)
	if err != nil {
		if e.exhausted {
			return e.stopped()
		}
		e.warn("%s: %s of %s: %v; settings defined there are not seen", at, kind, path, err)
		return boolean(false)
	}
	return e.enter(f)
}

// enter evaluates an included file (or eval'd code) and gives its value.
func (e *evaluator) enter(f *phpFile) value {
	e.seen[f.path] = true
	e.stack = append(e.stack, f.path)
	fl := e.run(f)
	e.stack = e.stack[:len(e.stack)-1]
	return e.result(fl, integer(1))
}

// result is the value of an included file or eval'd code that ended with
// fl; otherwise is its value when it returned nothing.
func (e *evaluator) result(fl flow, otherwise value) value {
	switch fl {
	case flowReturn:
		v := e.returnValue
		e.returnValue = value{}
		return v
	case flowExit:
		e.exhausted = true
		return e.stopped()
	}
	return otherwise
}

// read reads and parses a file within the bounds.
func (e *evaluator) read(path string) (*phpFile, error) {
	if len(e.stack) >= maxIncludeDepth {
		return nil, fmt.Errorf("more than %d files deep", maxIncludeDepth)
	}
	b, err := e.readFile(path)
	if err != nil {
		return nil, err
	}
	f, err := e.parse(path, string(b), false)
	if err != nil {
		if e.exhausted {
			return nil, err
		}
		return nil, fmt.Errorf("not PHP the sidecar can read: %v", err)
	}
	return f, nil
}

// readFile reads a file within the bounds: MaxFiles files in all, each of
// at most MaxFileBytes, what is read charged.
func (e *evaluator) readFile(path string) ([]byte, error) {
	if e.reads >= MaxFiles {
		return nil, fmt.Errorf("more than %d files read", MaxFiles)
	}
	e.reads++
	if !e.charge(fsCost) {
		return nil, e.budget.err
	}
	b, err := e.fsys.ReadFile(path)
	if err != nil {
		return nil, explainReadError(err)
	}
	e.files = append(e.files, path)
	if len(b) > MaxFileBytes {
		return nil, errTooLarge
	}
	if !e.alloc(len(b)) {
		return nil, e.budget.err
	}
	return b, nil
}

// parse parses PHP source (a file's, or eval'd code when inPHP) with its
// cost charged: the text before it is lexed, then its tokens before they
// are parsed, then the statements and nodes made.
func (e *evaluator) parse(path, src string, inPHP bool) (*phpFile, error) {
	if !e.alloc(len(src)) || !e.charge(len(src)/64) {
		return nil, e.budget.err
	}
	f, err := parsePHP(path, src, inPHP, func(tokens int) error {
		if !e.elements(tokens, tokenCost) {
			return e.budget.err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	stmts, nodes := 0, 0
	walk(f.stmts, func(*stmt) { stmts++ }, func(*node) { nodes++ })
	if !e.elements(stmts, stmtCost) || !e.elements(nodes, nodeCost) {
		return nil, e.budget.err
	}
	return f, nil
}

func explainReadError(err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied (the sidecar's user cannot read it)")
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no such file")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// resolve finds an included file as PHP does: an absolute path as it is,
// ./ and ../ against the working directory, any other relative path in the
// include path (".", the working directory) and then in the including
// file's own directory. It gives the first candidate when none exists.
func (e *evaluator) resolve(p string) (string, bool) {
	if filepath.IsAbs(p) {
		p = filepath.Clean(p)
		return p, e.exists(p)
	}
	candidates := []string{filepath.Join(e.cwd, p)}
	if !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") {
		candidates = append(candidates, filepath.Join(phpDirname(e.cur, 1), p))
	}
	for _, c := range candidates {
		if e.exists(c) {
			return c, true
		}
	}
	return candidates[0], false
}

// exists tells whether p exists; a look at the file system is charged,
// and nothing exists once the evaluation stopped (which the caller checks).
func (e *evaluator) exists(p string) bool {
	if !e.charge(fsCost) {
		return false
	}
	_, err := e.fsys.Stat(p)
	return err == nil
}

// absolute is a path as PHP's file functions see it: relative ones against
// the working directory.
func (e *evaluator) absolute(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(e.cwd, p)
}

// phpDirname is PHP's dirname(): trailing slashes do not count.
func phpDirname(p string, levels int) string {
	for ; levels > 0; levels-- {
		if p == "" {
			return ""
		}
		t := strings.TrimRight(p, "/")
		if t == "" {
			return "/"
		}
		i := strings.LastIndexByte(t, '/')
		if i < 0 {
			return "."
		}
		p = strings.TrimRight(t[:i], "/")
		if p == "" {
			return "/"
		}
	}
	return p
}

// dedupe returns the warnings without repeats, in order.
func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range list {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

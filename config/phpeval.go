package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

type osFS struct{}

func (osFS) ReadFile(name string) ([]byte, error)  { return os.ReadFile(name) }
func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// Bounds on the work a configuration can ask for.
const (
	maxIncludeDepth = 16      // files open at once (includes and eval)
	maxFiles        = 64      // files read in all
	maxFileBytes    = 1 << 20 // one file
	maxStringBytes  = 1 << 20 // one string value
	maxArraySize    = 10000   // elements of an array, nested ones counted
	workBudget      = 2000000 // expression evaluations, and 64 bytes of string built each
)

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
	work        int
	exhausted   bool
	warnings    []string
	uncertain   string // why the code being evaluated may not run in PHP
	cur         string // the file being evaluated
	returnValue value
}

func (e *evaluator) at(line int) string { return fmt.Sprintf("%s:%d", e.cur, line) }

func (e *evaluator) warn(format string, a ...any) {
	e.warnings = append(e.warnings, fmt.Sprintf(format, a...))
}

// charge counts work; once the budget is spent every value is unknown.
func (e *evaluator) charge(units int) bool {
	e.work += units
	if e.work > workBudget && !e.exhausted {
		e.exhausted = true
		e.warn("%s: evaluation stopped: the configuration asks for more work than a configuration file needs", e.cur)
	}
	return !e.exhausted
}

// strv is a built string, bounded.
func (e *evaluator) strv(s string, from string) value {
	if len(s) > maxStringBytes {
		return unknownValue("a string longer than 1 MiB")
	}
	e.charge(len(s) / 64)
	return value{k: vString, s: s, from: from}
}

// run evaluates a file's statements.
func (e *evaluator) run(f *phpFile) flow {
	prev := e.cur
	e.cur = f.path
	defer func() { e.cur = prev }()
	return e.exec(f.stmts)
}

func (e *evaluator) exec(stmts []*stmt) flow {
	for _, s := range stmts {
		if e.exhausted {
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
	if !e.charge(1) {
		return unknownValue("evaluation stopped")
	}
	switch n.op {
	case nLit:
		return n.val
	case nUnknown:
		return unknownValue(n.s)
	case nInterp:
		var b strings.Builder
		from := ""
		for _, k := range n.kids {
			v := e.eval(k)
			if !v.known() {
				return v
			}
			if from == "" {
				from = v.from
			}
			b.WriteString(v.String())
			if b.Len() > maxStringBytes {
				return unknownValue("a string longer than 1 MiB")
			}
		}
		return e.strv(b.String(), from)
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
		size, next := 0, int64(0)
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
			size++
			if v.k == vArray || v.k == vObject {
				size += arraySize(v.arr)
			}
			if size > maxArraySize {
				return unknownValue("an array larger than configuration needs")
			}
			arr.set(key, v)
		}
		return value{k: vArray, arr: arr}
	}
	return unknownValue("expression not understood")
}

func arraySize(a *phpArray) int {
	n := len(a.vals)
	for _, v := range a.vals {
		if v.k == vArray || v.k == vObject {
			n += arraySize(v.arr)
		}
	}
	return n
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
	if len(a.String())+len(b.String()) > maxStringBytes {
		return unknownValue("a string longer than 1 MiB")
	}
	return e.strv(a.String()+b.String(), from)
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
		return value{k: vObject, arr: &phpArray{keys: []string{"scalar"}, vals: []value{v}}}
	case "(array)":
		switch v.k {
		case vArray:
			return v
		case vObject:
			return value{k: vArray, arr: v.arr}
		case vNull:
			return value{k: vArray, arr: &phpArray{}}
		}
		return value{k: vArray, arr: &phpArray{keys: []string{"0"}, vals: []value{v}}}
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
	switch fl {
	case flowReturn:
		v := e.returnValue
		e.returnValue = value{}
		return v
	case flowExit:
		e.exhausted = true
	}
	return integer(1)
}

// read reads and parses a file within the bounds.
func (e *evaluator) read(path string) (*phpFile, error) {
	if len(e.stack) >= maxIncludeDepth {
		return nil, fmt.Errorf("more than %d files deep", maxIncludeDepth)
	}
	if e.reads >= maxFiles {
		return nil, fmt.Errorf("more than %d files read", maxFiles)
	}
	e.reads++
	b, err := e.fsys.ReadFile(path)
	if err != nil {
		return nil, explainReadError(err)
	}
	e.files = append(e.files, path)
	if len(b) > maxFileBytes {
		return nil, errTooLarge
	}
	e.charge(len(b) / 64)
	f, err := parsePHP(path, string(b))
	if err != nil {
		return nil, fmt.Errorf("not PHP the sidecar can read: %v", err)
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

func (e *evaluator) exists(p string) bool {
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

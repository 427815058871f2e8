package wpconfig

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// The functions and classes configuration files call, evaluated as PHP
// (and Bedrock's libraries) would.

// builtins are the functions function_exists() knows without a
// declaration in the file.
var builtins = map[string]bool{
	"dirname": true, "file_exists": true, "is_readable": true, "is_file": true, "is_dir": true,
	"realpath": true, "defined": true, "define": true, "constant": true, "getenv": true, "in_array": true,
	"parse_url": true, "substr": true, "strtolower": true, "strtoupper": true, "trim": true,
	"rtrim": true, "ltrim": true, "str_replace": true, "sprintf": true, "filter_var": true,
	"function_exists": true, "eval": true, "basename": true, "is_numeric": true, "intval": true, "boolval": true,
	"strval": true, "file_get_contents": true, "putenv": true, "ini_set": true, "error_reporting": true,
}

func (e *evaluator) args(n *node) ([]value, *value) {
	args := make([]value, len(n.kids))
	for i, k := range n.kids {
		args[i] = e.eval(k)
		if !args[i].known() {
			return nil, &args[i]
		}
	}
	return args, nil
}

func (e *evaluator) call(n *node) value {
	name := strings.ToLower(lastSegment(n.s))
	switch name {
	case "define":
		return e.callDefine(n)
	case "eval":
		return e.callEval(n)
	case "env", "getenv", "getenv_docker":
		return e.envCall(name, n)
	}
	args, bad := e.args(n)
	if bad != nil {
		return *bad
	}
	// A function reads its arguments through, at most.
	if !e.scan(args...) {
		return e.stopped()
	}
	arg := func(i int) value {
		if i < len(args) {
			return args[i]
		}
		return value{}
	}
	switch name {
	case "dirname":
		levels := 1
		if len(args) > 1 {
			levels = int(arg(1).n)
		}
		if levels < 1 || levels > 64 {
			return unknownValue("dirname() with a bad level")
		}
		return value{k: vString, s: phpDirname(arg(0).String(), levels), from: arg(0).from}
	case "basename":
		return str(filepath.Base(arg(0).String()))
	case "file_exists", "is_readable", "is_file", "is_dir":
		p := arg(0).String()
		if p == "" || strings.Contains(p, "://") {
			return boolean(false)
		}
		if !e.charge(fsCost) {
			return e.stopped()
		}
		fi, err := e.fsys.Stat(e.absolute(p))
		switch name {
		case "is_file":
			return boolean(err == nil && fi.Mode().IsRegular())
		case "is_dir":
			return boolean(err == nil && fi.IsDir())
		}
		return boolean(err == nil)
	case "realpath":
		p := e.absolute(arg(0).String())
		if !e.exists(p) {
			if e.exhausted {
				return e.stopped()
			}
			return boolean(false)
		}
		return str(p)
	case "defined":
		c := arg(0).String()
		if _, ok := e.consts[c]; ok {
			return boolean(true)
		}
		if why, ok := e.unresolved[c]; ok {
			return unknownValue(fmt.Sprintf("whether %s is defined is not known (%s)", c, why))
		}
		_, builtin := phpConstants[c]
		return boolean(builtin)
	case "constant":
		return e.constant(arg(0).String())
	case "function_exists":
		f := strings.ToLower(lastSegment(arg(0).String()))
		return boolean(e.funcs[f] || builtins[f])
	case "in_array":
		hay := arg(1)
		if hay.k != vArray {
			return unknownValue("in_array() of something that is not an array")
		}
		strict := arg(2).truthy()
		for _, v := range hay.arr.vals {
			if strict && strictEqual(arg(0), v) || !strict && looseEqual(arg(0), v) {
				return boolean(true)
			}
		}
		return boolean(false)
	case "parse_url":
		if len(args) != 1 {
			return unknownValue("parse_url() with a component is not evaluated")
		}
		v := parseURL(arg(0).String(), arg(0).from)
		if v.k == vArray && !e.elements(len(v.arr.keys), elemBytes) {
			return e.stopped()
		}
		return v
	default:
		if v, ok := e.stringCall(name, args); ok {
			return v
		}
	}
	return unknownValue(fmt.Sprintf("%s() is not evaluated", n.s))
}

// stringCall evaluates PHP's string and conversion functions
// configurations use; false when name is not one of them.
func (e *evaluator) stringCall(name string, args []value) (value, bool) {
	arg := func(i int) value {
		if i < len(args) {
			return args[i]
		}
		return value{}
	}
	switch name {
	case "substr":
		s := arg(0).String()
		start := int(arg(1).n)
		if start < 0 {
			start = max(len(s)+start, 0)
		}
		if start > len(s) {
			return value{k: vString, from: arg(0).from}, true
		}
		s = s[start:]
		if len(args) > 2 && arg(2).k != vNull {
			l := int(arg(2).n)
			if l < 0 {
				l = max(len(s)+l, 0)
			}
			if l < len(s) {
				s = s[:l]
			}
		}
		return value{k: vString, s: s, from: arg(0).from}, true
	case "strtolower", "strtoupper":
		// A copy of the string, charged before it is made: PHP (8.2, and
		// before in the C locale) changes ASCII letters only, so the copy
		// is as long as the string.
		s := arg(0).String()
		if bad, ok := e.grow(len(s)); !ok {
			return bad, true
		}
		return value{k: vString, s: asciiCase(s, name == "strtoupper"), from: arg(0).from}, true
	case "trim", "rtrim", "ltrim":
		cut := " \t\n\r\x00\x0B"
		if len(args) > 1 {
			cut = arg(1).String()
		}
		s := arg(0).String()
		switch name {
		case "trim":
			s = strings.Trim(s, cut)
		case "rtrim":
			s = strings.TrimRight(s, cut)
		default:
			s = strings.TrimLeft(s, cut)
		}
		return value{k: vString, s: s, from: arg(0).from}, true
	case "str_replace":
		if arg(0).k == vArray || arg(1).k == vArray || arg(2).k == vArray {
			return unknownValue("str_replace() of arrays is not evaluated"), true
		}
		if arg(0).String() == "" {
			return arg(2), true
		}
		s, from, to := arg(2).String(), arg(0).String(), arg(1).String()
		if bad, ok := e.grow(len(s) + strings.Count(s, from)*(len(to)-len(from))); !ok {
			return bad, true
		}
		return value{k: vString, s: strings.ReplaceAll(s, from, to), from: arg(2).from}, true
	case "sprintf":
		return e.sprintf(args), true
	case "strval":
		return value{k: vString, s: arg(0).String(), from: arg(0).from}, true
	case "intval":
		return e.unary(&node{op: nUnary, s: "(int)", kids: []*node{{op: nLit, val: arg(0)}}}), true
	case "boolval":
		return boolean(arg(0).truthy()), true
	case "is_numeric":
		_, ok := arg(0).numeric()
		return boolean(ok && arg(0).k != vBool && arg(0).k != vNull), true
	case "filter_var":
		if arg(1).n != 258 {
			return unknownValue("filter_var() with this filter is not evaluated"), true
		}
		s := strings.TrimSpace(arg(0).String())
		for _, w := range []string{"1", "true", "on", "yes"} {
			if asciiEqualFold(s, w) {
				return boolean(true), true
			}
		}
		for _, w := range []string{"0", "false", "off", "no", ""} {
			if asciiEqualFold(s, w) {
				return boolean(false), true
			}
		}
		if arg(2).n&134217728 != 0 {
			return value{}, true
		}
		return boolean(false), true
	}
	return value{}, false
}

// callDefine is define(NAME, value).
func (e *evaluator) callDefine(n *node) value {
	if len(n.kids) < 2 {
		return unknownValue("define() needs a name and a value")
	}
	name := e.eval(n.kids[0])
	if !name.known() {
		e.warn("%s: define() of a name known only when PHP runs (%s)", e.at(n.line), name.s)
		return name
	}
	e.define(name.String(), e.eval(n.kids[1]), e.at(n.line))
	return boolean(true)
}

// callEval is eval(code): the code is evaluated as an included file would
// be, in the file and directory that calls it.
func (e *evaluator) callEval(n *node) value {
	if len(n.kids) != 1 {
		return unknownValue("eval() takes one argument")
	}
	code := e.eval(n.kids[0])
	if !code.known() {
		e.warn("%s: eval() of code known only when PHP runs (%s); settings defined there are not seen", e.at(n.line), code.s)
		return code
	}
	if len(e.stack) >= maxIncludeDepth {
		e.warn("%s: eval(): more than %d files deep; not evaluated", e.at(n.line), maxIncludeDepth)
		return boolean(false)
	}
	where := e.at(n.line)
	// The code is parsed (and charged) as a file is, each time.
	f, err := e.parse(e.cur, code.String(), true)
	if err != nil {
		if e.exhausted {
			return e.stopped()
		}
		e.warn("%s: eval() of code the sidecar cannot read: %v", where, err)
		return boolean(false)
	}
	// Its lines are reported as the calling line's: the code has no file.
	walk(f.stmts, func(s *stmt) { s.line = n.line }, func(k *node) { k.line = n.line })
	e.stack = append(e.stack, where)
	fl := e.exec(f.stmts)
	e.stack = e.stack[:len(e.stack)-1]
	return e.result(fl, value{})
}

// envCall is getenv('NAME'), the official image's getenv_docker('NAME',
// default) and Bedrock's env('NAME') (oscarotero/env).
func (e *evaluator) envCall(name string, n *node) value {
	args, bad := e.args(n)
	if bad != nil {
		return *bad
	}
	if len(args) == 0 {
		return unknownValue(name + "() without a name is not evaluated")
	}
	if !e.scan(args...) {
		return e.stopped()
	}
	v, ok := e.lookupEnv(args[0].String())
	if ok && !v.known() {
		return v
	}
	switch name {
	case "getenv":
		if !ok {
			return boolean(false)
		}
		return v
	case "getenv_docker":
		// NAME_FILE names a file holding the value; else NAME, even empty;
		// else the default.
		if bad, ok := e.grow(len(args[0].String()) + len("_FILE")); !ok {
			return bad
		}
		if f, fok := e.lookupEnv(args[0].String() + "_FILE"); fok && f.truthy() {
			// Read as an included file is: a regular file within the
			// bounds, counted among the files read.
			p := e.absolute(f.String())
			if e.reads >= MaxFiles {
				return unknownValue(fmt.Sprintf("%s_FILE: more than %d files read", args[0].String(), MaxFiles))
			}
			b, err := e.readFile(p)
			if err != nil {
				if e.exhausted {
					return e.stopped()
				}
				if !slices.Contains(e.files, p) {
					e.files = append(e.files, p)
				}
				return unknownValue(fmt.Sprintf("%s_FILE: %v", args[0].String(), err))
			}
			return value{k: vString, s: strings.TrimRight(string(b), "\r\n"), from: args[0].String() + "_FILE from the environment"}
		}
		if ok {
			return v
		}
		if len(args) > 1 {
			return args[1]
		}
		return value{}
	}
	if !ok {
		return value{} // Env::$default
	}
	return envConvert(v)
}

// envConvert is oscarotero/env's conversion with Bedrock's options
// (CONVERT_BOOL, CONVERT_NULL, CONVERT_INT, STRIP_QUOTES).
func envConvert(v value) value {
	s := v.s
	switch {
	case asciiEqualFold(s, "true"):
		return value{k: vBool, b: true, from: v.from}
	case asciiEqualFold(s, "false"):
		return value{k: vBool, b: false, from: v.from}
	case asciiEqualFold(s, "null"):
		return value{from: v.from}
	}
	if isDigits(s) {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return value{k: vInt, n: n, from: v.from}
		}
	}
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		s = s[1 : len(s)-1]
	}
	return value{k: vString, s: s, from: v.from}
}

// parseURL is PHP's parse_url(): nothing is decoded; the user information
// ends at the last @ of the authority, the password after its first colon.
func parseURL(u, from string) value {
	out := &phpArray{}
	str := func(x string) value { return value{k: vString, s: x, from: from} }
	rest := u
	if i := strings.Index(rest, "://"); i > 0 {
		out.set("scheme", str(rest[:i]))
		rest = rest[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		rest = rest[end:]
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			user, pass, hasPass := strings.Cut(auth[:at], ":")
			out.set("user", str(user))
			if hasPass {
				out.set("pass", str(pass))
			}
			auth = auth[at+1:]
		}
		host := auth
		if c := strings.LastIndexByte(auth, ':'); c >= 0 && !strings.Contains(auth[c:], "]") {
			host = auth[:c]
			if port := auth[c+1:]; port != "" {
				p, err := strconv.Atoi(port)
				if err != nil || p < 0 || p > 65535 {
					return boolean(false)
				}
				out.set("port", value{k: vInt, n: int64(p), from: from})
			}
		}
		out.set("host", str(host))
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		defer out.set("fragment", str(rest[i+1:]))
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		defer out.set("query", str(rest[i+1:]))
		rest = rest[:i]
	}
	if rest != "" {
		out.set("path", str(rest))
	}
	return value{k: vArray, arr: out}
}

// sprintf understands %s, %d and %%. The pieces are measured, and the
// string charged, before it is built.
func (e *evaluator) sprintf(args []value) value {
	if len(args) == 0 {
		return unknownValue("sprintf() without a format")
	}
	f := args[0].String()
	var pieces []string
	size, next, lit := 0, 1, 0
	add := func(s string) bool {
		pieces = append(pieces, s)
		size += len(s)
		return size <= maxStringBytes
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		if i+1 >= len(f) {
			return unknownValue("sprintf() format not understood")
		}
		add(f[lit:i])
		i++
		lit = i + 1
		switch f[i] {
		case '%':
			add("%")
		case 's', 'd':
			if next >= len(args) {
				return unknownValue("sprintf() with too few arguments")
			}
			a := args[next]
			next++
			if f[i] == 'd' {
				a = e.unary(&node{op: nUnary, s: "(int)", kids: []*node{{op: nLit, val: a}}})
			}
			if !add(a.String()) {
				return unknownValue("a string longer than 1 MiB")
			}
		default:
			return unknownValue("sprintf() format not understood")
		}
	}
	add(f[lit:])
	if bad, ok := e.grow(size); !ok {
		return bad
	}
	return str(strings.Join(pieces, ""))
}

// asciiEqualFold is strtolower($a) === strtolower($b), without the copies.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// asciiCase is PHP's strtoupper (upper) or strtolower: ASCII letters
// only, whatever else the bytes are. A string without such a letter is
// given back as it is; else the one copy is made.
func asciiCase(s string, upper bool) string {
	from := byte('a')
	if !upper {
		from = 'A'
	}
	i := 0
	for i < len(s) && s[i]-from >= 26 {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if b[i]-from < 26 {
			b[i] ^= 0x20 // a and A differ in this bit alone
		}
	}
	return unsafe.String(&b[0], len(b)) // b is not used again
}

// static evaluates Class::method(…) for Bedrock's Config and Dotenv.
func (e *evaluator) static(n *node) value {
	class, method, _ := strings.Cut(n.s, "::")
	class, method = lastSegment(class), strings.ToLower(method)
	switch {
	case class == "Config":
		return e.bedrockConfig(n, method)
	case class == "Dotenv" && strings.HasPrefix(method, "create"):
		return e.dotenvCreate(n, method)
	}
	return unknownValue(fmt.Sprintf("%s() is not evaluated", n.s))
}

// bedrockConfig is Roots\WPConfig\Config (roots/wp-config 1.x): define()
// sets a key (the last one set wins) unless a constant of the name exists;
// get() reads one; apply() defines every key not yet a constant.
func (e *evaluator) bedrockConfig(n *node, method string) value {
	at := e.at(n.line)
	args, bad := e.args(n)
	if bad != nil {
		if method == "define" && len(n.kids) == 2 {
			key := e.eval(n.kids[0])
			if key.known() {
				e.bedrock.set(key.String(), unknownValue(fmt.Sprintf("%s: %s", at, bad.s)))
				e.bedrockAt[key.String()] = at
			}
		}
		return *bad
	}
	switch method {
	case "define":
		if len(args) != 2 {
			return unknownValue("Config::define() takes a key and a value")
		}
		key := args[0].String()
		if _, ok := e.consts[key]; ok {
			e.warn("%s: Config::define('%s') after define('%s'): Bedrock stops here with ConstantAlreadyDefinedException", at, key, key)
			return value{}
		}
		v := args[1]
		if e.uncertain != "" {
			v = unknownValue(fmt.Sprintf("%s: set under a condition known only when PHP runs (%s)", at, e.uncertain))
		}
		if !e.elements(1, elemBytes+len(key)) {
			return e.stopped()
		}
		e.bedrock.set(key, v)
		e.bedrockAt[key] = at
		return value{}
	case "get":
		if len(args) != 1 {
			return unknownValue("Config::get() takes a key")
		}
		if v, ok := e.bedrock.get(args[0].String()); ok {
			return v
		}
		return unknownValue(fmt.Sprintf("Config::get('%s') before Config::define('%s')", args[0].String(), args[0].String()))
	case "remove":
		if len(args) == 1 {
			e.bedrock.remove(args[0].String())
		}
		return value{}
	case "apply":
		for i, key := range e.bedrock.keys {
			v := e.bedrock.vals[i]
			if c, ok := e.consts[key]; ok {
				if v.known() && !strictEqual(c.v, v) {
					e.warn("%s: Config::apply(): %s is already defined with another value; Bedrock stops here with ConstantAlreadyDefinedException", at, key)
				}
				continue
			}
			e.define(key, v, e.bedrockAt[key])
		}
		return value{}
	}
	return unknownValue(fmt.Sprintf("Config::%s() is not evaluated", method))
}

// dotenvCall is a Dotenv instance: where its files are and how it loads.
type dotenvCall struct {
	paths, names []string
	shortCircuit bool
	mutable      bool
}

// dotenvCreate is vlucas/phpdotenv's Dotenv::create($repository, $paths,
// $names, $shortCircuit) and createImmutable/createMutable/
// createUnsafeImmutable/createUnsafeMutable($paths, $names, $shortCircuit).
// A repository given to create() is taken as immutable, as Bedrock builds it.
func (e *evaluator) dotenvCreate(n *node, method string) value {
	kids := n.kids
	if method == "create" {
		if len(kids) < 2 {
			return unknownValue("Dotenv::create() without paths")
		}
		kids = kids[1:]
	}
	d := &dotenvCall{names: []string{".env"}, shortCircuit: true, mutable: strings.Contains(method, "mutable") && !strings.Contains(method, "immutable")}
	strs := func(v value) []string {
		if v.k == vArray {
			var out []string
			for _, s := range v.arr.vals {
				out = append(out, s.String())
			}
			return out
		}
		return []string{v.String()}
	}
	for i, k := range kids {
		v := e.eval(k)
		if !v.known() {
			return v
		}
		if v.k == vArray && !e.elements(len(v.arr.vals), elemBytes) {
			return e.stopped()
		}
		switch i {
		case 0:
			d.paths = strs(v)
		case 1:
			if v.k != vNull {
				d.names = strs(v)
			}
		case 2:
			d.shortCircuit = v.truthy()
		}
	}
	return value{k: vDotenv, env: d}
}

// method evaluates $dotenv->load() and ->safeLoad(); other methods are not
// evaluated.
func (e *evaluator) method(n *node) value {
	x := e.eval(n.kids[0])
	m := strings.ToLower(n.s)
	if x.k == vDotenv && (m == "load" || m == "safeload") {
		e.loadDotenv(x.env, m == "safeload", n.line)
		return value{}
	}
	if !x.known() {
		return x
	}
	return unknownValue(fmt.Sprintf("->%s() is not evaluated", n.s))
}

// loadDotenv reads the files of a Dotenv as it loads them: each existing
// file in order (only the first with shortCircuit), as one text; an entry
// sets its variable unless the process environment has it (immutable),
// and a later entry wins over an earlier one of the same load.
func (e *evaluator) loadDotenv(d *dotenvCall, safe bool, line int) {
	at := e.at(line)
	type file struct {
		path string
		src  []byte
	}
	var files []file
	for _, dir := range d.paths {
		for _, name := range d.names {
			if !e.alloc(len(e.cwd) + len(dir) + len(name) + 2) {
				return
			}
			p := e.absolute(filepath.Join(dir, name))
			if !e.exists(p) {
				if e.exhausted {
					return
				}
				continue
			}
			if e.reads >= MaxFiles {
				e.warn("%s: %s: more than %d files read; not loaded", at, p, MaxFiles)
				continue
			}
			b, err := e.readFile(p)
			if err != nil {
				if e.exhausted {
					return
				}
				e.warn("%s: Dotenv: %s: %v; its variables are not seen", at, p, err)
				continue
			}
			files = append(files, file{p, b})
			if d.shortCircuit {
				break
			}
		}
		if d.shortCircuit && len(files) > 0 {
			break
		}
	}
	if len(files) == 0 && !safe {
		e.warn("%s: Dotenv: no %s in %s (Dotenv's load() stops PHP here)", at, strings.Join(d.names, " or "), strings.Join(d.paths, ", "))
		return
	}
	for _, f := range files {
		// Parsing copies the values out of the text: charged as a copy.
		if !e.alloc(len(f.src)) || !e.charge(len(f.src)/64) {
			return
		}
		entries, err := parseDotenv(f.src)
		if err != nil {
			e.warn("%s: Dotenv: %s: %v (Dotenv stops PHP here); its variables are not seen", at, f.path, err)
			return
		}
		if !e.elements(len(entries), int(unsafe.Sizeof(dotenvEntry{}))) {
			return
		}
		for _, en := range entries {
			if !en.hasValue {
				continue // NAME alone clears a variable: nothing to load
			}
			if !e.charge(1 + len(en.value)/64) {
				return
			}
			v, why := en.value, ""
			if en.interpolate {
				if v, why = e.interpolateDotenv(en.value, en.vars); e.exhausted {
					return
				}
			}
			if _, inProcess := e.getenv(en.name); inProcess && !d.mutable {
				continue
			}
			e.dotenv[en.name] = envVar{v: v, why: why, at: fmt.Sprintf("%s:%d", f.path, en.line), overrides: d.mutable, uncertain: e.uncertain}
		}
	}
}

// interpolateDotenv replaces ${NAME} at the marked offsets with the
// variable's value as loaded so far (left as it is when unset). The value
// is measured, and charged, before it is built: one longer than
// maxStringBytes, or one that refers to a variable whose value is not
// known, is not known, and why says why.
func (e *evaluator) interpolateDotenv(s string, at []int) (v, why string) {
	var pieces []string
	size, prev := 0, 0
	for _, i := range at {
		if i < prev || i >= len(s) || !strings.HasPrefix(s[i:], "${") {
			continue
		}
		// The name, then }: read once, so that a value of many ${ costs
		// its length, not its square.
		end := i + 2
		for end < len(s) && dotenvRefChar(s[end]) {
			end++
		}
		if end == i+2 || end == len(s) || s[end] != '}' {
			continue
		}
		ref, ok := e.lookupEnv(s[i+2 : end])
		if !ok {
			continue
		}
		if !ref.known() {
			return "", ref.s
		}
		pieces = append(pieces, s[prev:i], ref.String())
		size += i - prev + len(ref.String())
		prev = end + 1
		if size > maxStringBytes {
			return "", "longer than 1 MiB once its ${…} are replaced"
		}
	}
	pieces = append(pieces, s[prev:])
	if size += len(s) - prev; size > maxStringBytes {
		return "", "longer than 1 MiB once its ${…} are replaced"
	}
	if !e.alloc(size) {
		return "", e.stopped().s
	}
	return strings.Join(pieces, ""), ""
}

func dotenvRefChar(c byte) bool {
	return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

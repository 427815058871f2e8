// Package wpconfig reads a WordPress site's configuration files as text:
// wp-config.php and what it includes, Bedrock's layout and its .env files,
// and DB_HOST as wpdb takes it apart. The PHP is evaluated as far as that
// can be done without running it (a lexer, a parser and an evaluator
// bounded in steps, memory and depth); what depends on a request or on
// code it does not run is reported as unknown, never guessed. It knows
// nothing of the sidecar's own settings: package config layers those over
// what it reads here.
package wpconfig

import (
	"fmt"
	"path/filepath"
	"sort"
)

// Config is what a site's configuration defines that the sidecar needs:
// the constants its wp-config.php and the files it includes define, and
// $table_prefix. The files are read as text and evaluated as far as that
// can be done without running PHP (phpeval.go).
type Config struct {
	Path      string            // the wp-config.php read
	Constants map[string]string // constant name -> value as PHP would print it
	// Origins says where each constant (and "$table_prefix") was set:
	// file:line, and the environment variable or .env entry its value
	// came from.
	Origins     map[string]string
	TablePrefix string
	HasPrefix   bool
	// Unresolved names the constants whose value could not be known, with
	// where and why.
	Unresolved map[string]string
	// Warnings name what else was not followed: an include of a path
	// known only at run time, a file that cannot be read, a cycle.
	Warnings []string
	// Files are the files read, wp-config.php first.
	Files []string
}

// Find turns --wp-config into a file: a directory means its
// wp-config.php, or web/wp-config.php (a Bedrock project's root).
func Find(path string, fsys FS) (string, error) {
	fi, err := fsys.Stat(path)
	if err != nil {
		return "", explainReadError(err)
	}
	if !fi.IsDir() {
		return path, nil
	}
	for _, rel := range []string{"wp-config.php", "web/wp-config.php"} {
		p := filepath.Join(path, rel)
		if fi, err := fsys.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is a directory without wp-config.php (nor web/wp-config.php, as in a Bedrock project)", path)
}

// Read reads the wp-config.php at path and what it includes.
// getenv is the sidecar's environment, which stands for PHP's. Only a
// wp-config.php that cannot be read or lexed is an error; what cannot be
// followed in it is a warning.
func Read(path string, getenv func(string) (string, bool), fsys FS) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	e := &evaluator{
		fsys: fsys, getenv: getenv, cwd: filepath.Dir(abs), cur: abs,
		consts: map[string]constant{}, unresolved: map[string]string{},
		vars: map[string]value{}, varAt: map[string]string{}, funcs: map[string]bool{},
		bedrock: &phpArray{}, bedrockAt: map[string]string{}, dotenv: map[string]envVar{},
		seen: map[string]bool{},
	}
	// The file itself is read and parsed within the bounds of the whole
	// reading, as what it includes is.
	b, err := e.readFile(abs)
	if err != nil {
		return nil, err
	}
	f, err := e.parse(abs, string(b), false)
	if err != nil {
		return nil, err
	}
	// WordPress's wp-load.php defines ABSPATH before it loads wp-config.php:
	// the directory of wp-settings.php, here when it is beside wp-config.php
	// (else the file's own define() gives it, as in Bedrock).
	if e.exists(filepath.Join(e.cwd, "wp-settings.php")) {
		e.consts["ABSPATH"] = constant{v: str(e.cwd + "/"), at: "WordPress's wp-load.php (wp-settings.php is beside wp-config.php)"}
	}
	e.enter(f)

	wc := &Config{Path: abs, Constants: map[string]string{}, Origins: map[string]string{},
		Unresolved: e.unresolved, Warnings: dedupe(e.warnings), Files: e.files}
	for name, c := range e.consts {
		wc.Constants[name] = c.v.String()
		wc.Origins[name] = c.at
	}
	if v, ok := e.vars["table_prefix"]; ok {
		if v.known() {
			wc.TablePrefix, wc.HasPrefix = v.String(), true
			wc.Origins["$table_prefix"] = e.varAt["table_prefix"]
		} else {
			wc.Unresolved["$table_prefix"] = fmt.Sprintf("%s: %s", e.varAt["table_prefix"], v.s)
		}
	}
	return wc, nil
}

// Names lists the constants defined, sorted (for messages and tests).
func (wc *Config) Names() []string {
	names := make([]string, 0, len(wc.Constants))
	for n := range wc.Constants {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

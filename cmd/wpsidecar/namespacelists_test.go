package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/web/openapi"
)

var updateLists = flag.Bool("update", false, "rewrite the recipes' and the companion plugin's namespace lists from the namespaces cmd serves")

// namespaceLists are the files outside Go that list the namespaces the
// sidecar serves: the web servers' recipes, which send them to the
// sidecar, and the companion plugin's history screen, which filters by
// them. Each list follows a marker, and is generated from api's list
// (TestNamespaceLists).
var namespaceLists = []string{
	"deploy/nginx/wpsidecar-upstream.conf",
	"deploy/apache/wpsidecar.conf",
	"deploy/caddy/wpsidecar.caddy",
	"wordpress/wpsidecar-companion.php",
}

// The markers: a recipe's line after routeMarker has its alternations of
// namespaces ((a|b|c), every namespace's first part) rewritten; the
// plugin's lines between optionsBegin and optionsEnd are the history
// screen's filter, one option a namespace of the site's data.
const (
	routeMarker  = "# wpsidecar namespaces: the next line's list is generated (go test ./cmd/wpsidecar -run TestNamespaceLists -update)"
	optionsBegin = "<?php /* wpsidecar namespaces: begin (generated: go test ./cmd/wpsidecar -run TestNamespaceLists -update) */ ?>"
	optionsEnd   = "<?php /* wpsidecar namespaces: end */ ?>"
	// The history screen's script names each namespace's entries
	// (typeLabel) between these.
	labelsBegin = "// wpsidecar namespaces: labels begin (generated: go test ./cmd/wpsidecar -run TestNamespaceLists -update)"
	labelsEnd   = "// wpsidecar namespaces: labels end"
)

// alternation is a list of namespaces in a recipe's pattern: two or more
// lowercase words joined by |, in parentheses.
var alternation = regexp.MustCompile(`\((?:[a-z][a-z0-9_-]*\|)+[a-z][a-z0-9_-]*\)`)

// TestNamespaceLists: the recipes and the companion plugin list the
// namespaces cmd serves, in its order; -update rewrites them.
func TestNamespaceLists(t *testing.T) {
	list, options, labels := listsOf(apiUnder(&config.Config{}, nil))
	for _, file := range namespaceLists {
		path := "../../" + file
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		if strings.HasSuffix(file, ".php") {
			got, err = generateBlock(b, optionsBegin, optionsEnd, options)
			if err == nil {
				got, err = generateBlock(got, labelsBegin, labelsEnd, labels)
			}
		} else {
			got, err = generateRoutes(b, list)
		}
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		switch {
		case bytes.Equal(got, b):
		case *updateLists:
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("%s lists other namespaces than cmd serves: go test ./cmd/wpsidecar -run TestNamespaceLists -update", file)
		}
	}
}

// listsOf are the lists of the namespaces of api, in its order: the
// recipes' alternation of every namespace (the sidecar's own included),
// and the companion's history filter options and entry labels, one a
// namespace of the site's data.
func listsOf(api []openapi.NamespaceDoc) (list, options, labels string) {
	var routes []string
	var o, l strings.Builder
	for _, ns := range api {
		first, _, _ := strings.Cut(ns.Name, "/")
		routes = append(routes, regexp.QuoteMeta(first))
		if ns.Unit != nil {
			one, many := ns.Unit.Labels()
			fmt.Fprintf(&o, "<option value=%q><?php esc_html_e( '%s', 'wpsidecar' ); ?></option>\n", first, phpQuoted(capitalized(many)))
			fmt.Fprintf(&l, "if ( '%s' === namespace ) {\n\treturn __( '%s', 'wpsidecar' );\n}\n", first, phpQuoted(capitalized(one)))
		}
	}
	return "(" + strings.Join(routes, "|") + ")", o.String(), l.String()
}

// generateRoutes rewrites the alternations of the line after each
// routeMarker as list; a file without one, or a marked line without an
// alternation, is an error.
func generateRoutes(b []byte, list string) ([]byte, error) {
	lines := strings.SplitAfter(string(b), "\n")
	marked := 0
	for i := 0; i+1 < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != routeMarker {
			continue
		}
		marked++
		if !alternation.MatchString(lines[i+1]) {
			return nil, fmt.Errorf("line %d follows the marker and has no list of namespaces", i+2)
		}
		lines[i+1] = alternation.ReplaceAllLiteralString(lines[i+1], list)
	}
	if marked == 0 {
		return nil, fmt.Errorf("no %q", routeMarker)
	}
	return []byte(strings.Join(lines, "")), nil
}

// capitalized is s with its first letter in upper case.
func capitalized(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// phpQuoted is s for a single-quoted PHP or JavaScript string.
func phpQuoted(s string) string { return strings.ReplaceAll(s, "'", `\'`) }

// generateBlock replaces the lines between the markers begin and end by
// lines, indented as the begin marker is.
func generateBlock(b []byte, begin, end, lines string) ([]byte, error) {
	s := string(b)
	i := strings.Index(s, begin)
	j := strings.Index(s, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("no %q … %q", begin, end)
	}
	indent := s[strings.LastIndex(s[:i], "\n")+1 : i]
	var block strings.Builder
	for _, l := range strings.SplitAfter(lines, "\n") {
		if l != "" {
			block.WriteString(indent + l)
		}
	}
	start := i + len(begin) + 1 // the begin marker's line ends
	return []byte(s[:start] + block.String() + indent + s[j:]), nil
}

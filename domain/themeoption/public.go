package themeoption

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
)

// IDs are the theme option ids a public route shows (publicroute).
type IDs []string

// PublicKey names the theme options in a public route.
const PublicKey = "themeopts"

// idRe is an option id a route may name: no wildcards.
var idRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,191}$`)

// ParseIDs reads a public route's option ids (raw, found at at in the
// file): the problems found, each said of its place.
func ParseIDs(raw json.RawMessage, at string) (IDs, []string) {
	var ids IDs
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, []string{fmt.Sprintf("%s: not a list of option ids: %v", at, err)}
	}
	var problems []string
	if len(ids) == 0 {
		problems = append(problems, at+": name at least one option id")
	}
	for j, id := range ids {
		if !idRe.MatchString(id) {
			problems = append(problems, fmt.Sprintf("%s[%d]: %q is not an option id (no wildcards)", at, j, id))
		}
	}
	return ids, problems
}

// Shows: a route shows a change of one of its ids.
func (ids IDs) Shows(c wpsidecar.Commit) bool {
	keys := c.Keys()
	return slices.ContainsFunc(ids, func(id string) bool { return slices.Contains(keys, id) })
}

// Schema is an object of the route's ids, each as the site's
// ThemeOptions schema describes it (any value where it names none).
func (ids IDs) Schema(schemas map[string]any) map[string]any {
	values := map[string]any{}
	if options, ok := schemas["ThemeOptions"].(map[string]any); ok {
		if props, ok := options["properties"].(map[string]any); ok {
			values = props
		}
	}
	props := map[string]any{}
	for _, id := range ids {
		if s, ok := values[id]; ok {
			props[id] = s
		} else {
			props[id] = map[string]any{}
		}
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

// PublicSource is the theme options as public routes show them.
func PublicSource() publicroute.Source {
	return publicroute.Source{Key: PublicKey, Namespace: wpsidecar.ThemeOptions,
		Parse: func(raw json.RawMessage, at string) (publicroute.Selection, []string) { return ParseIDs(raw, at) }}
}

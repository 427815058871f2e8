package fieldgroup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
)

// Selector picks the field groups a public route lists (publicroute):
// every criterion given must hold.
type Selector struct {
	Keys     []string `json:"keys,omitempty"`
	Status   string   `json:"status,omitempty"`
	Type     string   `json:"type,omitempty"`
	PostType string   `json:"post_type,omitempty"`
	Taxonomy string   `json:"taxonomy,omitempty"`
}

// PublicKey names the field groups in a public route.
const PublicKey = "fieldmgr"

// ParseSelector reads a public route's selector (raw, found at at in the
// file): the problems found, each said of its place.
func ParseSelector(raw json.RawMessage, at string) (*Selector, []string) {
	var s Selector
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, []string{fmt.Sprintf("%s: not a selector (an object of keys, status, type, post_type, taxonomy): %v", at, err)}
	}
	var problems []string
	if len(s.Keys) == 0 && s.Status == "" && s.Type == "" && s.PostType == "" && s.Taxonomy == "" {
		problems = append(problems, at+": name at least one of keys, status, type, post_type, taxonomy (no route shows every group)")
	}
	for j, k := range s.Keys {
		if !groupKeyRe.MatchString(k) {
			problems = append(problems, fmt.Sprintf("%s.keys[%d]: %q is not a field group key", at, j, k))
		}
	}
	return &s, problems
}

// Picks tells whether the route lists g: criteria left empty do not
// restrict (and a route names at least one).
func (sel *Selector) Picks(g Group) bool {
	if len(sel.Keys) > 0 && !slices.Contains(sel.Keys, g.Key) || sel.Status != "" && g.Status != sel.Status {
		return false
	}
	if sel.Type == "" && sel.PostType == "" && sel.Taxonomy == "" {
		return true
	}
	var c struct {
		Type     string `json:"type"`
		PostType string `json:"post_type"`
		Taxonomy string `json:"taxonomy"`
	}
	if json.Unmarshal(ConfigJSON(g.Config), &c) != nil {
		return false
	}
	return (sel.Type == "" || c.Type == sel.Type) && (sel.PostType == "" || c.PostType == sel.PostType) && (sel.Taxonomy == "" || c.Taxonomy == sel.Taxonomy)
}

// Shows: a route listing field groups shows any change of them (a group
// may come to match or cease to).
func (*Selector) Shows(wpsidecar.Commit) bool { return true }

// Schema is a list of groups.
func (*Selector) Schema(map[string]any) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/FieldGroupList"}
}

// PublicSource is the field groups as public routes show them.
func PublicSource() publicroute.Source {
	return publicroute.Source{Key: PublicKey, Namespace: wpsidecar.FieldGroups,
		Parse: func(raw json.RawMessage, at string) (publicroute.Selection, []string) { return ParseSelector(raw, at) }}
}

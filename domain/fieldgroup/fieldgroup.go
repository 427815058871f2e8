// Package fieldgroup holds the field groups' model and rules, apart from
// HTTP and SQL: what a group is, which configs and field types it takes
// (the one table validation, GET /field-schemas and the OpenAPI
// description read), how its stored config reads as JSON, and what the
// history keeps of it and calls a change. The REST handlers
// (web/fieldmgr), the table (store), the files (exportdir) and the
// contract (openapi) all use it; it imports no net/http.
package fieldgroup

import (
	"encoding/json"
	"strings"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// Group is a field group as the table holds it. Config is the config
// object as stored: JSON text with the client's key order, or PHP
// serialized from an older writer (see ConfigJSON).
type Group struct {
	Key       string
	Title     string
	Config    string
	Status    string
	CreatedAt string // "YYYY-MM-DD HH:MM:SS", site time
	UpdatedAt string
}

// A group's statuses.
const (
	StatusActive   = "active"
	StatusInactive = "inactive"
)

// Value is what the history keeps of a group: what a revert writes back
// (the dates are the table's own).
type Value struct {
	Title  string `json:"title"`
	Status string `json:"status"`
	Config string `json:"config"`
}

// Value is what the history keeps of g.
func (g Group) Value() Value { return Value{Title: g.Title, Status: g.Status, Config: g.Config} }

// JSON is v as the history stores it (wpsidecar.Item's Before and After).
func (v Value) JSON() string {
	b, _ := json.Marshal(v) // three strings: cannot fail
	return string(b)
}

// ParseValue reads a history value of a group.
func ParseValue(s string) (Value, error) {
	var v Value
	err := json.Unmarshal([]byte(s), &v)
	return v, err
}

// Diff is a group's change between two states; hadBefore and hasAfter
// tell whether it existed in each. The bool is false when nothing the
// history keeps changed (the dates alone do not count).
func Diff(key string, before Group, hadBefore bool, after Group, hasAfter bool) (wpsidecar.Item, bool) {
	c := wpsidecar.Item{Key: key}
	if hadBefore {
		s := before.Value().JSON()
		c.Before = &s
	}
	if hasAfter {
		s := after.Value().JSON()
		c.After = &s
	}
	return c, !same(c.Before, c.After)
}

// same tells whether two history values (nil: none) are the same.
func same(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// ConfigJSON is the stored config as JSON: the sidecar stores JSON text
// (validated on the way in); an older writer stored a PHP-serialized
// array, rendered as json_encode would, with an empty fields list as {}.
func ConfigJSON(stored string) json.RawMessage {
	if strings.HasPrefix(stored, "{") {
		return json.RawMessage(stored)
	}
	v, err := phpserial.Unserialize(stored)
	if err != nil || (v.Kind != phpserial.Array && v.Kind != phpserial.Object) {
		return json.RawMessage("{}")
	}
	for i, e := range v.Entries {
		if e.Key.Str == "fields" && e.Value.Kind == phpserial.Array && len(e.Value.Entries) == 0 {
			v.Entries[i].Value = phpserial.Value{Kind: phpserial.Object}
		}
	}
	if v.Kind == phpserial.Array && len(v.Entries) == 0 {
		return json.RawMessage("{}")
	}
	j, err := phpserial.EncodeJSON(v)
	if err != nil {
		return json.RawMessage("{}") // over phpserial.MaxJSON with its references expanded
	}
	return json.RawMessage(j)
}

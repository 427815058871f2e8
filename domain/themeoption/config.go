// Package themeoption holds the theme options' model and rules, apart from
// HTTP and SQL: the configuration file (docs/api.md §3) and its field
// types, what a value of each type may be, the value schemas the OpenAPI
// description shows, and what changed between two saved sets. The REST
// handlers (web/themeopts), the files (exportdir) and the contract
// (openapi) use it; it imports no net/http.
package themeoption

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// DefaultCapability is what a configuration takes when it names no
// capability.
const DefaultCapability = "edit_theme_options"

// Config is the theme options ("framework") configuration file
// (docs/api.md §3), checked.
type Config struct {
	OptName    string
	Capability string
	DevMode    bool
	Sections   []*Section
	// Fields in configuration order, and by id.
	Fields []*Field
	byID   map[string]*Field
	// raw is the file's JSON, compacted: GET /config answers it as it is.
	raw []byte
}

// JSON is the configuration file's JSON, compacted (GET /config answers
// it). It is shared: not to be modified.
func (c *Config) JSON() []byte { return c.raw }

// Section is one section of the configuration.
type Section struct {
	ID     string
	Fields []*Field
}

// Field is one option of the configuration.
type Field struct {
	ID      string
	Section string
	Type    string
	Title   string
	// Default is the default as PHP holds it (json_decode($default, true));
	// fields without one are left alone by the resets.
	Default    phpserial.Value
	HasDefault bool
	// Choices are the keys of a choice field's options.
	Choices map[string]bool
}

// Field returns the field with the given id.
func (c *Config) Field(id string) (*Field, bool) {
	f, ok := c.byID[id]
	return f, ok
}

// Section returns the section with the given id.
func (c *Config) Section(id string) (*Section, bool) {
	for _, s := range c.Sections {
		if s.ID == id {
			return s, true
		}
	}
	return nil, false
}

// ParseConfig checks a configuration; the error lists every problem, each
// naming its place in the file (sections[0].fields[2].default: …).
func ParseConfig(b []byte) (*Config, error) {
	var file struct {
		OptName    json.RawMessage `json:"opt_name"`
		Capability json.RawMessage `json:"capability"`
		DevMode    json.RawMessage `json:"dev_mode"`
		Sections   json.RawMessage `json:"sections"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	c := &Config{byID: map[string]*Field{}, Capability: DefaultCapability}

	if !decodeString(file.OptName, &c.OptName) || strings.TrimSpace(c.OptName) != c.OptName || c.OptName == "" || len(c.OptName) > 191 {
		bad("opt_name: must be a non-empty option name of at most 191 bytes without surrounding spaces")
	}
	if file.Capability != nil && (!decodeString(file.Capability, &c.Capability) || c.Capability == "") {
		bad("capability: must be a non-empty string")
	}
	if file.DevMode != nil && json.Unmarshal(file.DevMode, &c.DevMode) != nil {
		bad("dev_mode: must be true or false")
	}
	var sections []struct {
		ID     json.RawMessage   `json:"id"`
		Fields []json.RawMessage `json:"fields"`
	}
	if err := json.Unmarshal(file.Sections, &sections); err != nil || file.Sections == nil {
		bad("sections: must be a list of sections, each with an id and a list of fields")
	}
	for i, sec := range sections {
		at := fmt.Sprintf("sections[%d]", i)
		s := &Section{}
		if !decodeString(sec.ID, &s.ID) || s.ID == "" {
			bad("%s.id: must be a non-empty string", at)
		} else if _, dup := c.Section(s.ID); dup {
			bad("%s.id: section %q appears twice", at, s.ID)
		}
		for j, raw := range sec.Fields {
			f, errs := parseField(raw, fmt.Sprintf("%s.fields[%d]", at, j))
			problems = append(problems, errs...)
			if f == nil {
				continue
			}
			if _, dup := c.byID[f.ID]; dup {
				bad("%s.fields[%d].id: field %q appears twice", at, j, f.ID)
				continue
			}
			f.Section = s.ID
			c.byID[f.ID] = f
			c.Fields = append(c.Fields, f)
			s.Fields = append(s.Fields, f)
		}
		c.Sections = append(c.Sections, s)
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	var raw bytes.Buffer
	if err := json.Compact(&raw, b); err != nil {
		return nil, err
	}
	c.raw = raw.Bytes()
	return c, nil
}

func parseField(raw json.RawMessage, at string) (*Field, []string) {
	var in struct {
		ID      json.RawMessage `json:"id"`
		Type    json.RawMessage `json:"type"`
		Title   json.RawMessage `json:"title"`
		Default json.RawMessage `json:"default"`
		Options json.RawMessage `json:"options"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, []string{at + ": must be an object"}
	}
	var problems []string
	f := &Field{}
	if !decodeString(in.ID, &f.ID) || f.ID == "" {
		problems = append(problems, at+".id: must be a non-empty string")
	}
	if !decodeString(in.Type, &f.Type) {
		problems = append(problems, at+".type: must be a string")
	} else if _, ok := fieldTypes[f.Type]; !ok {
		problems = append(problems, fmt.Sprintf("%s.type: unknown field type %q (known: %s)", at, f.Type, strings.Join(fieldTypeNames, ", ")))
	}
	if in.Title != nil && !decodeString(in.Title, &f.Title) {
		problems = append(problems, at+".title: must be a string")
	}
	if choiceTypes[f.Type] {
		var opts map[string]json.RawMessage
		if json.Unmarshal(in.Options, &opts) != nil || len(opts) == 0 || in.Options[0] != '{' {
			problems = append(problems, at+".options: must be an object of choices (value: label)")
		}
		f.Choices = map[string]bool{}
		for k := range opts {
			f.Choices[k] = true
		}
	}
	if in.Default != nil {
		v, err := phpserial.FromJSON(in.Default)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s.default: %v", at, err))
		case len(problems) == 0:
			if msg := f.check(v); msg != "" {
				problems = append(problems, fmt.Sprintf("%s.default: %s", at, msg))
			}
		}
		f.Default, f.HasDefault = v, true
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return f, nil
}

// decodeString decodes a JSON string; false for anything else or nothing.
func decodeString(raw json.RawMessage, dst *string) bool {
	return raw != nil && json.Unmarshal(raw, dst) == nil && raw[0] == '"'
}

// CheckValue says why POST /options refuses v as option id's value (an id
// the configuration does not have, or a value its field's type does not
// take: a non-finite number among them), nil when it takes it. wpsidecar
// import checks the values it writes with it too. An error is a
// *wpsidecar.Invalid: "Invalid value for option "id": what is wrong."
func (c *Config) CheckValue(id string, v phpserial.Value) error {
	f, ok := c.Field(id)
	if !ok {
		return invalidOption(id, "is not an option of the theme options configuration")
	}
	if msg := f.check(v); msg != "" {
		return invalidOption(id, msg)
	}
	return nil
}

func invalidOption(id, msg string) error {
	return &wpsidecar.Invalid{Message: "Invalid value for option " + strconv.Quote(id) + ": " + msg + "."}
}

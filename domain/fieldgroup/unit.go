package fieldgroup

import (
	"bytes"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// Unit is fieldmgr/v1 as the parts shared by every namespace see it.
type Unit struct{}

func (Unit) Namespace() wpsidecar.Namespace { return wpsidecar.FieldGroups }
func (Unit) Summary() string                { return "Field group definitions (fieldmgr/v1); manage_options." }
func (Unit) ItemsField() string             { return "keys" }
func (Unit) HistoryTag() string             { return "g" }
func (Unit) Labels() (one, many string)     { return "field group", "field groups" }
func (Unit) Listed() bool                   { return true }

// HistoryCapability is manage_options, as the routes check it.
func (Unit) HistoryCapability() string { return "manage_options" }

// WriteValue writes a group's kept value as its title, status and config.
func (Unit) WriteValue(b *bytes.Buffer, value string) {
	g, err := ParseValue(value)
	if err != nil {
		b.WriteString("null")
		return
	}
	b.WriteString(`{"title":`)
	phpserial.JSONString(b, g.Title)
	b.WriteString(`,"status":`)
	phpserial.JSONString(b, g.Status)
	b.WriteString(`,"config":`)
	b.Write(ConfigJSON(g.Config))
	b.WriteByte('}')
}

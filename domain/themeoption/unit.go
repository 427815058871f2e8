package themeoption

import (
	"bytes"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// Unit is themeopts/v1 as the parts shared by every namespace see it.
// Config is the configuration in force (reloaded meanwhile); nil, or
// answering nil, when the sidecar serves no theme options: entries left
// from when it did are still shown.
type Unit struct{ Config func() *Config }

func (Unit) Namespace() wpsidecar.Namespace { return wpsidecar.ThemeOptions }
func (Unit) Summary() string                { return "Saved theme options (themeopts/v1); the configured capability." }
func (Unit) ItemsField() string             { return "ids" }
func (Unit) HistoryTag() string             { return "o" }
func (Unit) Labels() (one, many string)     { return "theme option", "theme options" }
func (Unit) Listed() bool                   { return false }

// HistoryCapability is the capability the configuration names, as in
// force now (edit_theme_options unless it says otherwise, and without
// one).
func (u Unit) HistoryCapability() string {
	if u.Config != nil {
		if c := u.Config(); c != nil {
			return c.Capability
		}
	}
	return DefaultCapability
}

// WriteValue writes an option id's kept value (as PHP serializes it) as
// json_encode renders it.
func (Unit) WriteValue(b *bytes.Buffer, value string) {
	pv, err := phpserial.Unserialize(value)
	if err != nil {
		b.WriteString("null")
		return
	}
	j, err := phpserial.EncodeJSON(pv)
	if err != nil {
		b.WriteString("null") // over phpserial.MaxJSON with its references expanded
		return
	}
	b.Write(j)
}

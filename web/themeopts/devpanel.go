package themeopts

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/wire/httpcond"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// handleDevPanel is GET /dev-panel (developer mode only): every field of
// the configuration with its default and stored value, and statistics.
func (s *Service) handleDevPanel(w http.ResponseWriter, r *http.Request) error {
	c := s.Config()
	d, err := s.savedSet(w, r, c)
	if err != nil || httpcond.NotModified(w, r, httpcond.ETag("themeopts:dev-panel", string(c.JSON()), strconv.FormatBool(d.found), d.raw)) {
		return err
	}
	set := d.set
	str := func(s string) []byte { return phpserial.JSON(phpserial.Value{Kind: phpserial.String, Str: s}) }

	var b bytes.Buffer
	b.WriteString(`{"fields":[`)
	stored, customized := 0, 0
	byType := []string{}
	typeCount := map[string]int{}
	for i, f := range c.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		v, isStored := set.Get(f.ID)
		var def, val []byte = []byte("null"), []byte("null")
		if f.HasDefault {
			def = phpserial.JSON(f.Default)
		}
		if isStored {
			val = phpserial.JSON(v)
			stored++
		}
		isDefault := !isStored || (f.HasDefault && bytes.Equal(val, def))
		if isStored && !isDefault {
			customized++
		}
		if typeCount[f.Type] == 0 {
			byType = append(byType, f.Type)
		}
		typeCount[f.Type]++
		b.WriteString(`{"id":`)
		b.Write(str(f.ID))
		b.WriteString(`,"section":`)
		b.Write(str(f.Section))
		b.WriteString(`,"type":`)
		b.Write(str(f.Type))
		b.WriteString(`,"title":`)
		b.Write(str(f.Title))
		b.WriteString(`,"default":`)
		b.Write(def)
		b.WriteString(`,"value":`)
		b.Write(val)
		b.WriteString(`,"is_default":` + strconv.FormatBool(isDefault) + `,"stored":` + strconv.FormatBool(isStored) + `}`)
	}
	b.WriteString(`],"stats":{"sections":` + strconv.Itoa(len(c.Sections)) + `,"fields":` + strconv.Itoa(len(c.Fields)) +
		`,"stored":` + strconv.Itoa(stored) + `,"customized":` + strconv.Itoa(customized) + `,"by_type":{`)
	for i, t := range byType {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(str(t))
		b.WriteString(":" + strconv.Itoa(typeCount[t]))
	}
	optionBytes := 0
	if d.found {
		optionBytes = len(d.raw)
	}
	b.WriteString(`},"option_bytes":` + strconv.Itoa(optionBytes) + `,"orphaned":[`)
	n := 0
	for _, e := range set.Entries {
		if _, known := c.Field(e.Key.String()); known {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(str(e.Key.String()))
		n++
	}
	b.WriteString(`]}}`)
	wpjson.WriteRaw(w, http.StatusOK, b.Bytes())
	return nil
}

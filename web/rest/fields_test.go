package rest

import (
	"encoding/json"
	"testing"
)

func TestFilterFields(t *testing.T) {
	const group = `{"id":"g","title":"T \/ x","config":{"type":"post","fields":{"a":{"type":"text"}},"position":"side"},"status":"active"}`
	tests := []struct {
		fields, in, want string
	}{
		{"id,status", group, `{"id":"g","status":"active"}`},
		{" status , id ", group, `{"id":"g","status":"active"}`}, // order is the data's
		{"title", group, `{"title":"T \/ x"}`},                   // bytes kept as sent
		{"config.type", group, `{"config":{"type":"post"}}`},
		{"config.fields.a.type,id", group, `{"id":"g","config":{"fields":{"a":{"type":"text"}}}}`},
		{"config,config.type", group, `{"config":{"type":"post","fields":{"a":{"type":"text"}},"position":"side"}}`},
		{"config.type,config", group, `{"config":{"type":"post","fields":{"a":{"type":"text"}},"position":"side"}}`},
		{"nothing", group, `[]`},
		{"id", "[" + group + "," + group + "]", `[{"id":"g"},{"id":"g"}]`},
		{"id", "[]", `[]`},
		{"id", "{}", `[]`},
		{"l.0", `{"l":["a","b"]}`, `{"l":["a"]}`},
		{"l.1", `{"l":["a","b"]}`, `{"l":{"1":"b"}}`},
		{"l.id", `{"l":[{"id":1}]}`, `{"l":[]}`},
		{"a.b", `{"a":"scalar"}`, `{"a":"scalar"}`},
	}
	for _, tt := range tests {
		got, err := filterFields([]byte(tt.in), fieldTree(parseList(tt.fields)))
		if err != nil || string(got) != tt.want {
			t.Errorf("_fields=%s on %s: %s %v, want %s", tt.fields, tt.in, got, err, tt.want)
		}
	}
}

func FuzzFields(f *testing.F) {
	f.Add("id,config.type", `{"id":"g","config":{"type":"post"}}`)
	f.Add("a.b.c,,a", `[{"a":{"b":{"c":1}}},[1,2]]`)
	f.Add("0,1.x", `[[1],{"x":[]}]`)
	f.Fuzz(func(t *testing.T, list, body string) {
		if !json.Valid([]byte(body)) {
			return
		}
		got, err := filterFields([]byte(body), fieldTree(parseList(list)))
		if err != nil || !json.Valid(got) {
			t.Errorf("_fields=%q on %q gave %q", list, body, got)
		}
	})
}

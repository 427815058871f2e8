// Package history is the rules of the history of field groups and theme
// options, with no HTTP: which entries a list asks for (Filter, read from
// query parameters as WordPress validates a collection's), an entry's JSON
// (WriteEntry), and the capability a namespace's entries take
// (Capability), and the shape of an entry and of a filter, which store
// keeps and lists. The wpsidecar/v1 routes (web/historyapi) and the
// `wpsidecar history` command both use them, so that the two say the same
// thing in the same words.
package history

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// Entry is a row of the history.
type Entry struct {
	ID        int64
	Namespace string
	// Object is the options row an option id belongs to, or the field
	// group table.
	Object    string
	Key       string
	Before    *string
	After     *string
	UserID    int64
	Login     string
	Via       string
	RequestID string
	DateGMT   string // "YYYY-MM-DD HH:MM:SS"
}

// Filter selects entries; zero fields select all.
type Filter struct {
	Namespace string
	Key       string
	Since     time.Time
	Page      int // from 1
	PerPage   int
}

// InvalidParam is a list parameter ParseFilter refuses: Name is the parameter,
// Message what is wrong with it, in the words rest_validate_request_arg
// uses. The routes answer it as WordPress answers a bad collection
// parameter, 400 rest_invalid_param with data.params naming it.
type InvalidParam struct {
	Name, Message string
}

// Error is the answer's code and message, which is what the command line
// has always printed for it.
func (e *InvalidParam) Error() string {
	return "rest_invalid_param: Invalid parameter(s): " + e.Name
}

// ParseFilter reads a list request's query as WordPress validates collection
// parameters: page ≥ 1, per_page 1–100 (10 unless given), since a date.
// An error is an *InvalidParam.
func ParseFilter(q map[string][]string, units wpsidecar.Units) (Filter, error) {
	get := func(k string) (string, bool) {
		v, ok := q[k]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	f := Filter{Page: 1, PerPage: 10}
	if v, ok := get("namespace"); ok {
		if units.Find(wpsidecar.Namespace(v)) == nil {
			names := make([]string, len(units))
			for i, u := range units {
				names[i] = string(u.Namespace())
			}
			return f, &InvalidParam{"namespace", "namespace is not one of " + strings.Join(names, ", ") + "."}
		}
		f.Namespace = v
	}
	f.Key, _ = get("key")
	if v, ok := get("since"); ok {
		t, err := ParseDate(v)
		if err != nil {
			return f, &InvalidParam{"since", "Invalid date."}
		}
		f.Since = t
	}
	for _, p := range []struct {
		name     string
		dst      *int
		min, max int
	}{{"page", &f.Page, 1, math.MaxInt32}, {"per_page", &f.PerPage, 1, 100}} {
		if v, ok := get(p.name); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return f, &InvalidParam{p.name, p.name + " is not of type integer."}
			}
			if n < p.min || n > p.max {
				return f, &InvalidParam{p.name, p.name + " must be between " + strconv.Itoa(p.min) + " (" + "inclusive) and " + strconv.Itoa(p.max) + " (inclusive)"}
			}
			*p.dst = n
		}
	}
	return f, nil
}

// ParseDate reads a date as rest_parse_date does: RFC 3339, or without a
// zone (taken as UTC here: the history keeps GMT), with or without
// fractional seconds.
func ParseDate(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("invalid date")
}

// Capability is what seeing and reverting namespace's entries takes
// (its unit's HistoryCapability); "" is no one: a namespace not served
// has no entries, and none is shown.
func Capability(namespace string, units wpsidecar.Units) string {
	if u := units.Find(wpsidecar.Namespace(namespace)); u != nil {
		return u.HistoryCapability()
	}
	return ""
}

// WriteEntry writes an entry's wire form, its values as its namespace's
// unit shows them (null for a namespace not among units).
func WriteEntry(b *bytes.Buffer, e Entry, units wpsidecar.Units) {
	b.WriteString(`{"id":` + strconv.FormatInt(e.ID, 10) + `,"namespace":`)
	phpserial.JSONString(b, e.Namespace)
	b.WriteString(`,"object":`)
	phpserial.JSONString(b, e.Object)
	b.WriteString(`,"key":`)
	phpserial.JSONString(b, e.Key)
	b.WriteString(`,"before":`)
	writeValue(b, units.Find(wpsidecar.Namespace(e.Namespace)), e.Before)
	b.WriteString(`,"after":`)
	writeValue(b, units.Find(wpsidecar.Namespace(e.Namespace)), e.After)
	b.WriteString(`,"user":{"id":` + strconv.FormatInt(e.UserID, 10) + `,"login":`)
	phpserial.JSONString(b, e.Login)
	b.WriteString(`},"via":`)
	phpserial.JSONString(b, e.Via)
	b.WriteString(`,"request_id":`)
	phpserial.JSONString(b, e.RequestID)
	b.WriteString(`,"date_gmt":`)
	phpserial.JSONString(b, strings.Replace(e.DateGMT, " ", "T", 1))
	b.WriteByte('}')
}

func writeValue(b *bytes.Buffer, u wpsidecar.Unit, v *string) {
	if v == nil || u == nil {
		b.WriteString("null")
		return
	}
	u.WriteValue(b, *v)
}

// Package history answers the wpsidecar/v1 namespace: the history of the
// field groups and theme options, and reverting one of its entries
// (docs/api.md §12). Only users with manage_options see it, and of it only
// the entries of the namespaces they may read and write themselves (see
// permitted); it is never public and never cached.
package history

import (
	"bytes"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/fieldgroup"
	"github.com/wpsidecar/wpsidecar/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/themeopt"
	"github.com/wpsidecar/wpsidecar/wpjson"
)

// Service is one site's history routes.
type Service struct {
	auth     *auth.Authenticator
	history  *store.History
	settings store.Settings // the site's time for a group's dates, db_version for the options row's autoload
	opts     ThemeOptions   // the theme options whose capability guards their entries
	now      func() time.Time
}

// ThemeOptions are a site's theme options as the history needs them: the
// configuration in force, nil when the sidecar serves none
// (proxy/themeopts' Service, whose nil is none).
type ThemeOptions interface{ Config() *themeopt.Config }

// New returns the service of a site's history. opts is the site's theme
// options (nil when the sidecar serves none): the capability its
// configuration names is what reading and reverting their entries takes.
func New(a *auth.Authenticator, h *store.History, settings store.Settings, opts ThemeOptions) *Service {
	return &Service{auth: a, history: h, settings: settings, opts: opts, now: time.Now}
}

// Name is the namespace the service answers.
func (s *Service) Name() string { return "wpsidecar/v1" }

// Register lists the routes, behind manage_options.
func (s *Service) Register(r *mux.Router) {
	r.Use(s.auth.Identify(http.StatusUnauthorized, nil), wpjson.CheckBody, s.auth.Permit(capability, http.StatusUnauthorized))
	wpjson.Register(r, wpjson.RouteInfo{Namespace: s.Name(), Home: s.home, Errors: answerOf, DBVersion: s.dbVersion, LoggedIn: loggedIn,
		Permitted: func(r *http.Request) bool { return auth.UserFrom(r.Context()).Can("manage_options") }}, s.routes())
}

// loggedIn is is_user_logged_in() for the no-cache headers.
func loggedIn(r *http.Request) bool { return auth.UserFrom(r.Context()) != nil }

func capability(*http.Request) string { return "manage_options" }

// An entry holds a namespace's values, before and after, and reverting it
// writes one of them back: it is for those who may read and write that
// namespace through its own routes, and no one else. fieldmgr/v1 takes
// manage_options (as proxy/fieldmgr checks it); themeopts/v1 the
// capability its configuration names, as in force now (edit_theme_options
// unless it says otherwise; also when the sidecar serves no theme options,
// for entries left from when it did).
func (s *Service) namespaceCapability(namespace string) string {
	switch wpsidecar.Namespace(namespace) {
	case wpsidecar.FieldGroups:
		return "manage_options"
	case wpsidecar.ThemeOptions:
		if s.opts != nil {
			if c := s.opts.Config(); c != nil {
				return c.Capability
			}
		}
		return themeopt.DefaultCapability
	}
	return "" // no other namespace is recorded; none is shown
}

// permitted tells whether r's user may see and revert the entries of
// namespace.
func (s *Service) permitted(r *http.Request, namespace string) bool {
	need := s.namespaceCapability(namespace)
	return need != "" && auth.UserFrom(r.Context()).Can(need)
}

func (s *Service) home() (string, error) {
	st, err := s.settings.Current()
	return st.Home, err
}

func (s *Service) dbVersion() (int64, error) {
	st, err := s.settings.Current()
	return st.DBVersion, err
}

// Routes are the namespace's routes with their documentation, for the
// OpenAPI description (their handlers are not for serving).
func Routes() []wpjson.Route { return (&Service{}).routes() }

func (s *Service) routes() []wpjson.Route {
	invalid := wpjson.ErrorDoc{Status: http.StatusBadRequest, Code: "rest_invalid_param"}
	notFound := wpjson.ErrorDoc{Status: http.StatusNotFound, Code: "wpsidecar_history_not_found"}
	return []wpjson.Route{
		{Path: "/history", Handlers: []wpjson.MethodHandler{
			{Method: http.MethodGet, Fn: s.handleList, Doc: wpjson.Operation{ID: "listHistory", Summary: "List the history of field groups and theme options",
				Description: "Changes newest first: the sidecar's writes, and with the binlog feed every other writer's. Filters namespace, key, since; paginated with page and per_page (X-WP-Total, X-WP-TotalPages).",
				Answer:      "HistoryList", Paginated: true, Query: []wpjson.ParamDoc{
					{Name: "namespace", Type: "string", Description: "fieldmgr or themeopts"}, {Name: "key", Type: "string", Description: "a group's key or an option id"},
					{Name: "since", Type: "string", Description: "entries from this date on (RFC 3339; without a zone, GMT)"},
					{Name: "page", Type: "integer", Description: "from 1"}, {Name: "per_page", Type: "integer", Description: "1-100, 10 unless given"}},
				Errors: []wpjson.ErrorDoc{invalid, {Status: http.StatusBadRequest, Code: "rest_history_invalid_page_number"}}}},
		}},
		{Path: "/history/{entry:[0-9]+}/revert", Handlers: []wpjson.MethodHandler{
			{Method: http.MethodPost, Fn: s.handleRevert, Doc: wpjson.Operation{ID: "revertHistory", Summary: "Revert a change",
				Description: "Writes the entry's before back (recorded in turn). 412 when the value is no longer the entry's after, unless ?force=true.",
				Answer:      "Reverted", Query: []wpjson.ParamDoc{{Name: "force", Type: "boolean", Description: "revert even when the value changed since the entry"}},
				Errors: []wpjson.ErrorDoc{notFound, {Status: http.StatusPreconditionFailed, Code: "wpsidecar_history_changed"},
					{Status: http.StatusConflict, Code: "wpsidecar_history_unrevertable"}, {Status: http.StatusBadRequest, Code: "rest_invalid_param"}}}},
		}},
	}
}

var (
	errNotFound = &wpjson.Error{Status: http.StatusNotFound, Code: "wpsidecar_history_not_found", Message: "No history entry has this id."}
	errChanged  = &wpjson.Error{Status: http.StatusPreconditionFailed, Code: "wpsidecar_history_changed",
		Message: "The value has changed since this entry; revert with ?force=true to overwrite it."}
	errUnrevertable = &wpjson.Error{Status: http.StatusConflict, Code: "wpsidecar_history_unrevertable",
		Message: "This entry cannot be written back: its value, or what it belongs to, is no longer one it can be written into (a group with the same key in another letter case, an options row that is no longer an array)."}
)

func answerOf(err error) error {
	switch {
	case errors.Is(err, wpsidecar.ErrNotFound):
		return errNotFound
	case errors.Is(err, wpsidecar.ErrChanged):
		return errChanged
	case errors.Is(err, wpsidecar.ErrDuplicate), errors.Is(err, wpsidecar.ErrUnrevertable):
		return errUnrevertable
	}
	return err
}

func invalidParam(name, msg string) error {
	return &wpjson.Error{Status: http.StatusBadRequest, Code: "rest_invalid_param", Message: "Invalid parameter(s): " + name,
		Params: map[string]string{name: msg}}
}

// Filter reads a list request's query as WordPress validates collection
// parameters: page ≥ 1, per_page 1–100 (10 unless given), since a date.
func Filter(q map[string][]string) (store.HistoryFilter, error) {
	get := func(k string) (string, bool) {
		v, ok := q[k]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	f := store.HistoryFilter{Page: 1, PerPage: 10}
	if v, ok := get("namespace"); ok {
		if ns := wpsidecar.Namespace(v); ns != wpsidecar.FieldGroups && ns != wpsidecar.ThemeOptions {
			return f, invalidParam("namespace", "namespace is not one of fieldmgr, themeopts.")
		}
		f.Namespace = v
	}
	f.Key, _ = get("key")
	if v, ok := get("since"); ok {
		t, err := ParseDate(v)
		if err != nil {
			return f, invalidParam("since", "Invalid date.")
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
				return f, invalidParam(p.name, p.name+" is not of type integer.")
			}
			if n < p.min || n > p.max {
				return f, invalidParam(p.name, p.name+" must be between "+strconv.Itoa(p.min)+" ("+"inclusive) and "+strconv.Itoa(p.max)+" (inclusive)")
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

// handleList is GET /history.
func (s *Service) handleList(w http.ResponseWriter, r *http.Request) error {
	f, err := Filter(r.URL.Query())
	if err != nil {
		return err
	}
	// Only the namespaces the user may read: the filter narrows to them, so
	// that the page and X-WP-Total count nothing else.
	var allowed []string
	for _, ns := range wpsidecar.Namespaces {
		if s.permitted(r, string(ns)) {
			allowed = append(allowed, string(ns))
		}
	}
	list, total := []store.HistoryEntry{}, 0
	switch {
	case f.Namespace != "" && !s.permitted(r, f.Namespace), len(allowed) == 0:
		// Nothing to show: an empty list.
	default:
		if f.Namespace == "" && len(allowed) == 1 {
			f.Namespace = allowed[0]
		}
		if list, total, err = s.history.List(r.Context(), f); err != nil {
			return err
		}
	}
	pages := (total + f.PerPage - 1) / f.PerPage
	if f.Page > 1 && f.Page > pages {
		return &wpjson.Error{Status: http.StatusBadRequest, Code: "rest_history_invalid_page_number",
			Message: "The page number requested is larger than the number of pages available."}
	}
	w.Header().Set("X-WP-Total", strconv.Itoa(total))
	w.Header().Set("X-WP-TotalPages", strconv.Itoa(pages))
	var b bytes.Buffer
	b.WriteByte('[')
	for i, e := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		WriteEntry(&b, e)
	}
	b.WriteByte(']')
	wpjson.WriteRaw(w, http.StatusOK, b.Bytes())
	return nil
}

// WriteEntry writes an entry's wire form: an option id's values as
// json_encode renders them, a group's as its title, status and config.
func WriteEntry(b *bytes.Buffer, e store.HistoryEntry) {
	b.WriteString(`{"id":` + strconv.FormatInt(e.ID, 10) + `,"namespace":`)
	phpserial.JSONString(b, e.Namespace)
	b.WriteString(`,"object":`)
	phpserial.JSONString(b, e.Object)
	b.WriteString(`,"key":`)
	phpserial.JSONString(b, e.Key)
	b.WriteString(`,"before":`)
	writeValue(b, e.Namespace, e.Before)
	b.WriteString(`,"after":`)
	writeValue(b, e.Namespace, e.After)
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

func writeValue(b *bytes.Buffer, namespace string, v *string) {
	if v == nil {
		b.WriteString("null")
		return
	}
	if wpsidecar.Namespace(namespace) == wpsidecar.FieldGroups {
		g, err := fieldgroup.ParseValue(*v)
		if err != nil {
			b.WriteString("null")
			return
		}
		b.WriteString(`{"title":`)
		phpserial.JSONString(b, g.Title)
		b.WriteString(`,"status":`)
		phpserial.JSONString(b, g.Status)
		b.WriteString(`,"config":`)
		b.Write(fieldgroup.ConfigJSON(g.Config))
		b.WriteByte('}')
		return
	}
	pv, err := phpserial.Unserialize(*v)
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

// handleRevert is POST /history/{id}/revert.
func (s *Service) handleRevert(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(mux.Vars(r)["entry"], 10, 64)
	if err != nil {
		return errNotFound
	}
	force := false
	if v := r.URL.Query().Get("force"); v != "" {
		if force, err = strconv.ParseBool(v); err != nil {
			return invalidParam("force", "force is not of type boolean.")
		}
	}
	// An entry of a namespace the user may not write is one they cannot
	// see either: not found, as in the list.
	e, err := s.history.Get(r.Context(), id)
	if err != nil {
		return err
	}
	if !s.permitted(r, e.Namespace) {
		return errNotFound
	}
	st, err := s.settings.Current()
	if err != nil {
		return err
	}
	rv := store.Revert{By: auth.AuthorOf(r), Now: st.LocalTime(s.now()), DBVersion: st.DBVersion, Force: force}
	if err := s.history.Revert(r.Context(), id, rv); err != nil {
		return err
	}
	wpjson.WriteJSON(w, http.StatusOK, struct {
		Success  bool   `json:"success"`
		Message  string `json:"message"`
		Reverted int64  `json:"reverted"`
	}{true, "Change reverted", id})
	return nil
}

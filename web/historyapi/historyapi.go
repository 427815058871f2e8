// Package historyapi answers the wpsidecar/v1 namespace: the history of
// the namespaces of the site's data, and reverting one of its entries
// (docs/api.md §12). Only users with manage_options see it, and of it only
// the entries of the namespaces they may read and write themselves (see
// permitted); it is never public and never cached. The history's rules
// (the list's parameters, an entry's JSON, who may see what) are the
// history package's; this is their HTTP.
package historyapi

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/domain/history"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/wire/routetable"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// Service is one site's history routes.
type Service struct {
	auth     *auth.Authenticator
	history  *store.History
	settings store.Settings // the site's time for a group's dates, db_version for the options row's autoload
	units    wpsidecar.Units
	now      func() time.Time
}

// New returns the service of a site's history, over the namespaces of
// units: each one's entries are for the users with the capability its
// unit names (HistoryCapability), and shown as it says (WriteValue). A
// nil h (--history-retention off) answers every route that no history is
// kept, so that a client can tell it from routes that do not reach the
// sidecar (PHP's rest_no_route).
func New(a *auth.Authenticator, h *store.History, settings store.Settings, units wpsidecar.Units) *Service {
	return &Service{auth: a, history: h, settings: settings, units: units, now: time.Now}
}

// Name is the namespace the service answers.
func (s *Service) Name() string { return "wpsidecar/v1" }

// Register lists the routes, behind manage_options.
func (s *Service) Register(r *mux.Router) {
	r.Use(s.auth.Identify(http.StatusUnauthorized, nil), wpjson.CheckBody, s.auth.Permit(capability, http.StatusUnauthorized))
	wpjson.Register(r, wpjson.RouteInfo{Namespace: s.Name(), Home: store.Home(s.settings), Errors: answerOf, DBVersion: store.DBVersion(s.settings), LoggedIn: loggedIn,
		Permitted: func(r *http.Request) bool { return auth.UserFrom(r.Context()).Can("manage_options") }}, s.routes())
}

// loggedIn is is_user_logged_in() for the no-cache headers.
func loggedIn(r *http.Request) bool { return auth.UserFrom(r.Context()) != nil }

func capability(*http.Request) string { return "manage_options" }

// permitted tells whether r's user may see and revert the entries of
// namespace.
func (s *Service) permitted(r *http.Request, namespace string) bool {
	need := history.Capability(namespace, s.units)
	return need != "" && auth.UserFrom(r.Context()).Can(need)
}

// Routes are the namespace's routes with their documentation, for the
// OpenAPI description (their handlers are not for serving): the history
// of the namespaces of units.
func Routes(units wpsidecar.Units) []routetable.Route { return (&Service{units: units}).routes() }

func (s *Service) routes() []routetable.Route {
	var names, many, keys []string
	for _, u := range s.units {
		one, m := u.Labels()
		names, many = append(names, string(u.Namespace())), append(many, m)
		keys = append(keys, "a "+one+"'s "+strings.TrimSuffix(u.ItemsField(), "s"))
	}
	invalid := routetable.ErrorDoc{Status: http.StatusBadRequest, Code: "rest_invalid_param"}
	notFound := routetable.ErrorDoc{Status: http.StatusNotFound, Code: "wpsidecar_history_not_found"}
	off := routetable.ErrorDoc{Status: http.StatusNotFound, Code: "wpsidecar_history_off"}
	return []routetable.Route{
		{Path: "/history", Handlers: []routetable.MethodHandler{
			{Method: http.MethodGet, Fn: s.handleList, Doc: routetable.Operation{ID: "listHistory", Summary: "List the history of " + list(many, "and"),
				Description: "Changes newest first: the sidecar's writes, and with the binlog feed every other writer's. Filters namespace, key, since; paginated with page and per_page (X-WP-Total, X-WP-TotalPages).",
				Answer:      "HistoryList", Paginated: true, Query: []routetable.ParamDoc{
					{Name: "namespace", Type: "string", Description: list(names, "or")}, {Name: "key", Type: "string", Description: list(keys, "or")},
					{Name: "since", Type: "string", Description: "entries from this date on (RFC 3339; without a zone, GMT)"},
					{Name: "page", Type: "integer", Description: "from 1"}, {Name: "per_page", Type: "integer", Description: "1-100, 10 unless given"}},
				Errors: []routetable.ErrorDoc{invalid, {Status: http.StatusBadRequest, Code: "rest_history_invalid_page_number"}, off}}},
		}},
		{Path: "/history/{entry:[0-9]+}/revert", Handlers: []routetable.MethodHandler{
			{Method: http.MethodPost, Fn: s.handleRevert, Doc: routetable.Operation{ID: "revertHistory", Summary: "Revert a change",
				Description: "Writes the entry's before back (recorded in turn). 412 when the value is no longer the entry's after, unless ?force=true.",
				Answer:      "Reverted", Query: []routetable.ParamDoc{{Name: "force", Type: "boolean", Description: "revert even when the value changed since the entry"}},
				Errors: []routetable.ErrorDoc{notFound, off, {Status: http.StatusPreconditionFailed, Code: "wpsidecar_history_changed"},
					{Status: http.StatusConflict, Code: "wpsidecar_history_unrevertable"}, {Status: http.StatusBadRequest, Code: "rest_invalid_param"}}}},
		}},
	}
}

// list joins words as a sentence does: "a, b and c".
func list(words []string, last string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + last + " " + words[len(words)-1]
}

var (
	errOff = &wpjson.Error{Status: http.StatusNotFound, Code: "wpsidecar_history_off",
		Message: "This site keeps no history: the sidecar runs with --history-retention off."}
	errNotFound = &wpjson.Error{Status: http.StatusNotFound, Code: "wpsidecar_history_not_found", Message: "No history entry has this id."}
	errChanged  = &wpjson.Error{Status: http.StatusPreconditionFailed, Code: "wpsidecar_history_changed",
		Message: "The value has changed since this entry; revert with ?force=true to overwrite it."}
	errUnrevertable = &wpjson.Error{Status: http.StatusConflict, Code: "wpsidecar_history_unrevertable",
		Message: "This entry cannot be written back: its value, or what it belongs to, is no longer one it can be written into (a group with the same key in another letter case, an options row that is no longer an array)."}
)

// answerOf is the answer to what the store and the history's rules
// refuse: a bad list parameter as WordPress answers one, with data.params
// naming it.
func answerOf(err error) error {
	var bad *history.InvalidParam
	switch {
	case errors.As(err, &bad):
		return invalidParam(bad.Name, bad.Message)
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

// handleList is GET /history.
func (s *Service) handleList(w http.ResponseWriter, r *http.Request) error {
	if s.history == nil {
		return errOff
	}
	f, err := history.ParseFilter(r.URL.Query(), s.units)
	if err != nil {
		return err
	}
	// Only the namespaces the user may read: the filter narrows to them, so
	// that the page and X-WP-Total count nothing else.
	var allowed []string
	for _, u := range s.units {
		if ns := string(u.Namespace()); s.permitted(r, ns) {
			allowed = append(allowed, ns)
		}
	}
	list, total := []history.Entry{}, 0
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
		history.WriteEntry(&b, e, s.units)
	}
	b.WriteByte(']')
	wpjson.WriteRaw(w, http.StatusOK, b.Bytes())
	return nil
}

// handleRevert is POST /history/{id}/revert.
func (s *Service) handleRevert(w http.ResponseWriter, r *http.Request) error {
	if s.history == nil {
		return errOff
	}
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

// Package fieldmgr answers the fieldmgr/v1 REST namespace (field group
// definitions) from the field-group table: HTTP around the rules of
// package fieldgroup, whose refusals it answers as the contract's errors.
package fieldmgr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/gorilla/mux"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/domain/cachetag"
	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/wire/httpcond"
	"github.com/wpsidecar/wpsidecar/wire/routetable"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// Service holds the namespace's dependencies.
type Service struct {
	auth     *auth.Authenticator
	groups   *fieldgrouptable.Groups
	settings store.Settings // the site's local time
	now      func() time.Time
	log      zerolog.Logger

	tableMu    sync.Mutex
	tableReady atomic.Bool
	listed     atomic.Pointer[renderedList] // the last list answered
}

// New returns the service.
func New(a *auth.Authenticator, groups *fieldgrouptable.Groups, settings store.Settings, log zerolog.Logger) *Service {
	return &Service{auth: a, groups: groups, settings: settings, now: time.Now, log: log}
}

// ensureTable creates the field-group table the first time a request needs
// it (the database may not be up when the sidecar starts).
func (s *Service) ensureTable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.tableReady.Load() {
			s.tableMu.Lock()
			if !s.tableReady.Load() {
				created, err := s.groups.EnsureTable(r.Context())
				if err != nil {
					s.tableMu.Unlock()
					wpjson.Render(w, r, err)
					return
				}
				if created {
					s.log.Info().Str("table", s.groups.Table()).Msg("created the field-group table")
				}
				s.tableReady.Store(true)
			}
			s.tableMu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// Name is the namespace the service answers.
func (s *Service) Name() string { return string(wpsidecar.FieldGroups) + "/v1" }

// Register lists every route of the namespace (docs/api.md §2), all
// behind manage_options; OPTIONS describes a route as WordPress does. Other
// paths and methods go to PHP.
func (s *Service) Register(r *mux.Router) {
	r.Use(s.auth.Identify(http.StatusUnauthorized, s.ride), wpjson.CheckBody, s.auth.Permit(capability, http.StatusUnauthorized), s.ensureTable)
	wpjson.Register(r, wpjson.RouteInfo{Namespace: s.Name(), Home: store.Home(s.settings), Errors: answerOf, DBVersion: store.DBVersion(s.settings), LoggedIn: loggedIn,
		Permitted: func(r *http.Request) bool { return auth.UserFrom(r.Context()).Can("manage_options") }}, s.routes())
}

// loggedIn is is_user_logged_in() for the no-cache headers.
func loggedIn(r *http.Request) bool { return auth.UserFrom(r.Context()) != nil }

// Routes are the namespace's routes with their documentation, for the
// OpenAPI description (their handlers are not for serving).
func Routes() []routetable.Route { return (&Service{}).routes() }

// routes is the route table: paths, methods, handlers, and what each
// answers (docs/api.md §2).
func (s *Service) routes() []routetable.Route {
	invalid := routetable.ErrorDoc{Status: http.StatusBadRequest, Bare: true}
	notFound := routetable.ErrorDoc{Status: http.StatusNotFound, Bare: true}
	body := []routetable.ErrorDoc{{Status: http.StatusUnsupportedMediaType, Bare: true}, {Status: http.StatusRequestEntityTooLarge, Bare: true}, {Status: http.StatusBadRequest, Code: "rest_invalid_json"}}
	return []routetable.Route{
		{Name: "list", Path: "/field-groups", Handlers: []routetable.MethodHandler{
			{Method: http.MethodGet, Fn: s.handleList, Doc: routetable.Operation{ID: "listFieldGroups", Summary: "List field groups",
				Description: "Every field group, oldest first.", Answer: "FieldGroupList", Read: true}, Prepared: true},
			{Method: http.MethodPost, Fn: s.handleCreate, Doc: routetable.Operation{ID: "createFieldGroup", Summary: "Create a field group",
				Description: "A new group; its key must be free in any letter case.", Body: "FieldGroupCreate", Answer: "Created", Status: http.StatusCreated,
				Errors: append([]routetable.ErrorDoc{invalid}, body...)}},
		}},
		{Name: "group", Path: "/field-groups/{id}", Handlers: []routetable.MethodHandler{
			{Method: http.MethodGet, Fn: s.handleGet, Doc: routetable.Operation{ID: "getFieldGroup", Summary: "Get a field group",
				Description: "The group with this key.", Answer: "FieldGroup", Read: true, Errors: []routetable.ErrorDoc{notFound}}, Prepared: true},
			{Method: http.MethodPut, Fn: s.handleUpdate, Doc: routetable.Operation{ID: "updateFieldGroup", Summary: "Update a field group",
				Description: "Changes the title, the config or both; what is left out keeps its value.", Body: "FieldGroupUpdate", Answer: "Done", Write: true,
				Errors: append([]routetable.ErrorDoc{invalid, notFound}, body...)}},
			{Method: http.MethodDelete, Fn: s.handleDelete, Doc: routetable.Operation{ID: "deleteFieldGroup", Summary: "Delete a field group",
				Answer: "Done", Write: true, Errors: []routetable.ErrorDoc{notFound}}},
		}},
		{Path: "/field-groups/{id}/toggle", Handlers: []routetable.MethodHandler{
			{Method: http.MethodPost, Fn: s.handleToggle, Doc: routetable.Operation{ID: "toggleFieldGroup", Summary: "Activate or deactivate a field group",
				Description: "Flips the group's status and says which it made.", Answer: "Toggled", Write: true, Errors: []routetable.ErrorDoc{notFound}}},
		}},
		{Path: "/field-schemas", Handlers: []routetable.MethodHandler{
			{Method: http.MethodGet, Fn: s.handleSchemas, Doc: routetable.Operation{ID: "getFieldSchemas", Summary: "List the field types",
				Description: "Each field type with its label and the settings it allows.", Answer: "FieldSchemas", Read: true}, Prepared: true},
		}},
	}
}

// prefetched is what a GET's read brought along with authentication.
type prefetched struct {
	pb    *store.Piggyback
	list  fieldgrouptable.GroupList
	group fieldgroup.Group
	found bool
}

// Piggyback is the read (auth.Ride).
func (p *prefetched) Piggyback() *store.Piggyback { return p.pb }

// ride declares the read a GET's route has ride along with the user
// lookup (by the route's name: "list", "group"), so that the answer costs
// one database round trip in all.
func (s *Service) ride(r *http.Request) auth.Ride {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return nil
	}
	p := &prefetched{}
	switch mux.CurrentRoute(r).GetName() {
	case "list":
		p.pb = s.groups.ListPiggyback(&p.list)
	case "group":
		key, ok := groupKey(r)
		if !ok {
			return nil
		}
		p.pb = s.groups.GetPiggyback(key, &p.group, &p.found)
	default:
		return nil
	}
	return p
}

// prefetchedFrom is the request's ride-along read when it ran without error.
func prefetchedFrom(r *http.Request) *prefetched {
	p, _ := auth.RideFrom(r.Context()).(*prefetched)
	if p == nil {
		return nil
	}
	if done, err := p.pb.Done(); !done || err != nil {
		return nil
	}
	return p
}

// capability is manage_options, except that OPTIONS needs none.
func capability(r *http.Request) string {
	if r.Method == http.MethodOptions {
		return ""
	}
	return "manage_options"
}

// writeGroup writes the wire form of a group, keys in the contract's order.
// It is written by hand: encoding/json would re-scan every stored config,
// the bulk of a list, on every request.
func writeGroup(b *bytes.Buffer, g fieldgroup.Group) {
	b.WriteString(`{"id":`)
	phpserial.JSONString(b, g.Key)
	b.WriteString(`,"title":`)
	phpserial.JSONString(b, g.Title)
	b.WriteString(`,"config":`)
	b.Write(fieldgroup.ConfigJSON(g.Config))
	b.WriteString(`,"status":`)
	phpserial.JSONString(b, g.Status)
	b.WriteString(`,"created_at":`)
	phpserial.JSONString(b, g.CreatedAt)
	b.WriteString(`,"updated_at":`)
	phpserial.JSONString(b, g.UpdatedAt)
	b.WriteByte('}')
}

type result struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	ID      string `json:"id,omitempty"`
}

type toggleResult struct {
	Success bool   `json:"success"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// handleList is GET /field-groups.
func (s *Service) handleList(w http.ResponseWriter, r *http.Request) error {
	var list fieldgrouptable.GroupList
	if p := prefetchedFrom(r); p != nil {
		list = p.list
	} else {
		var err error
		if list, err = s.groups.Listed(r.Context()); err != nil {
			return err
		}
	}
	a := s.render(list)
	a.tags.Set(w.Header())
	if httpcond.NotModified(w, r, a.etag) {
		return nil
	}
	wpjson.WriteRaw(w, http.StatusOK, a.body)
	return nil
}

// renderedList is a list's answer, made once for each version of the
// list (fieldgrouptable.GroupList): the memo hands out the same list, version and
// all, for as long as nothing changed, so its ETag (a hash of every group)
// and JSON are made once, not on every request.
type renderedList struct {
	version uint64
	etag    string
	tags    cachetag.Tags
	body    []byte
}

// render is list's answer: the last one made when it was made from the
// same version of the list, else a new one (kept for the next request).
func (s *Service) render(list fieldgrouptable.GroupList) *renderedList {
	if a := s.listed.Load(); a != nil && list.Version != 0 && a.version == list.Version {
		return a
	}
	etag, tags := listTags("fieldmgr:list", list.Groups)
	a := &renderedList{version: list.Version, etag: etag, tags: cachetag.New(tags...), body: listJSON(list.Groups)}
	if list.Version != 0 {
		s.listed.Store(a)
	}
	return a
}

// nsTag is the namespace's cache tag (cachetag spells the others from it).
const nsTag = string(wpsidecar.FieldGroups)

// listTags are a list's ETag (kind names what is listed) and cache tags:
// the namespace, "fieldmgr:list" (any change may change a list: a new
// group, a toggle) and each group's key.
func listTags(kind string, list []fieldgroup.Group) (string, []string) {
	parts := make([]string, 0, 6*len(list))
	tags := []string{nsTag, cachetag.List(nsTag)}
	for _, g := range list {
		parts = append(parts, g.Key, g.Title, g.Config, g.Status, g.CreatedAt, g.UpdatedAt)
		tags = append(tags, cachetag.Key(nsTag, g.Key))
	}
	return httpcond.ETag(kind, parts...), tags
}

func listJSON(list []fieldgroup.Group) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, g := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		writeGroup(&b, g)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// Public is a public route's answer: the groups sel (a
// *fieldgroup.Selector) picks, rendered as the list route renders them,
// with their ETag and cache tags. It needs no credentials; what it may
// show is the site owner's choice.
func (s *Service) Public(ctx context.Context, route publicroute.Selection) (body []byte, etag string, tags []string, err error) {
	sel, ok := route.(*fieldgroup.Selector)
	if !ok {
		return nil, "", nil, fmt.Errorf("fieldmgr: a public route's selection %T is not a field group selector", route)
	}
	all, err := s.groups.List(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	var list []fieldgroup.Group
	for _, g := range all {
		if sel.Picks(g) {
			list = append(list, g)
		}
	}
	etag, tags = listTags("fieldmgr:public:"+strings.Join(slices.Concat(sel.Keys, []string{sel.Status, sel.Type, sel.PostType, sel.Taxonomy}), "\x00"), list)
	return listJSON(list), etag, tags, nil
}

// groupETag is a group's entity tag: GET answers it, If-Match is checked
// against it.
func groupETag(g fieldgroup.Group) string {
	return httpcond.ETag("fieldmgr:group", g.Key, g.Title, g.Config, g.Status, g.CreatedAt, g.UpdatedAt)
}

// ifMatch is the store's check for the request's If-Match (nil without one).
func ifMatch(r *http.Request) func(fieldgroup.Group) error {
	p := httpcond.IfMatch(r)
	if p == nil {
		return nil
	}
	return func(g fieldgroup.Group) error { return p.Check(groupETag(g)) }
}

// handleGet is GET /field-groups/{id}.
func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) error {
	key, ok := groupKey(r)
	if !ok {
		return wpsidecar.ErrNotFound
	}
	var g fieldgroup.Group
	if p := prefetchedFrom(r); p != nil {
		if !p.found {
			return wpsidecar.ErrNotFound
		}
		g = p.group
	} else {
		var err error
		if g, err = s.groups.Get(r.Context(), key); err != nil {
			return err
		}
	}
	cachetag.Set(w.Header(), nsTag, cachetag.Key(nsTag, g.Key))
	if httpcond.NotModified(w, r, groupETag(g)) {
		return nil
	}
	var b bytes.Buffer
	writeGroup(&b, g)
	wpjson.WriteRaw(w, http.StatusOK, b.Bytes())
	return nil
}

// handleCreate is POST /field-groups.
func (s *Service) handleCreate(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var key string // not a string: as refused as an empty key
	if k, ok := body.Get("group_key"); ok && k.Kind == phpserial.String {
		key = k.Str
	}
	if err := fieldgroup.ValidateKey(key); err != nil {
		return err
	}
	rawTitle, ok := body.Get("title")
	if !ok {
		return invalid("title: required")
	}
	title, err := fieldgroup.ValidateTitle(rawTitle)
	if err != nil {
		return err
	}
	config := fieldgroup.DefaultConfig
	if raw, ok := body.Get("config"); ok {
		if config, err = fieldgroup.ValidateConfig(raw); err != nil {
			return err
		}
	}
	now, err := s.localNow()
	if err != nil {
		return err
	}
	if err := s.groups.Create(r.Context(), key, title, config, now, auth.AuthorOf(r)); err != nil {
		return err
	}
	wpjson.WriteJSON(w, http.StatusCreated, result{Success: true, Message: "Field group created", ID: key})
	return nil
}

// handleUpdate is PUT /field-groups/{id}: title and/or config.
func (s *Service) handleUpdate(w http.ResponseWriter, r *http.Request) error {
	key, ok := groupKey(r)
	if !ok {
		return wpsidecar.ErrNotFound
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var title, config *string
	if raw, ok := body.Get("title"); ok {
		t, err := fieldgroup.ValidateTitle(raw)
		if err != nil {
			return err
		}
		title = &t
	}
	if raw, ok := body.Get("config"); ok {
		c, err := fieldgroup.ValidateConfig(raw)
		if err != nil {
			return err
		}
		config = &c
	}
	if title == nil && config == nil {
		return invalid("title or config: at least one is required")
	}
	now, err := s.localNow()
	if err != nil {
		return err
	}
	if err := s.groups.Update(r.Context(), key, title, config, now, ifMatch(r), auth.AuthorOf(r)); err != nil {
		return err
	}
	wpjson.WriteJSON(w, http.StatusOK, result{Success: true, Message: "Field group updated"})
	return nil
}

// handleDelete is DELETE /field-groups/{id}.
func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request) error {
	key, ok := groupKey(r)
	if !ok {
		return wpsidecar.ErrNotFound
	}
	if err := s.groups.Delete(r.Context(), key, ifMatch(r), auth.AuthorOf(r)); err != nil {
		return err
	}
	wpjson.WriteJSON(w, http.StatusOK, result{Success: true, Message: "Field group deleted"})
	return nil
}

// handleToggle is POST /field-groups/{id}/toggle.
func (s *Service) handleToggle(w http.ResponseWriter, r *http.Request) error {
	key, ok := groupKey(r)
	if !ok {
		return wpsidecar.ErrNotFound
	}
	now, err := s.localNow()
	if err != nil {
		return err
	}
	status, err := s.groups.Toggle(r.Context(), key, now, ifMatch(r), auth.AuthorOf(r))
	if err != nil {
		return err
	}
	msg := "Field group activated"
	if status == fieldgroup.StatusInactive {
		msg = "Field group deactivated"
	}
	wpjson.WriteJSON(w, http.StatusOK, toggleResult{Success: true, Status: status, Message: msg})
	return nil
}

// handleSchemas is GET /field-schemas.
func (s *Service) handleSchemas(w http.ResponseWriter, r *http.Request) error {
	cachetag.Set(w.Header(), nsTag, cachetag.Key(nsTag, "schemas"))
	if httpcond.NotModified(w, r, schemasETag) {
		return nil
	}
	wpjson.WriteRaw(w, http.StatusOK, schemasJSON)
	return nil
}

// The field schemas, which are the program's, not stored: their body and
// its tag are made once.
var (
	schemasJSON = fieldgroup.SchemasJSON()
	schemasETag = httpcond.ETag("fieldmgr:schemas", string(schemasJSON))
)

// groupKey is the {id} of the path, decoded; false when it cannot be a key
// (the database is then not asked).
func groupKey(r *http.Request) (string, bool) {
	k, err := url.PathUnescape(mux.Vars(r)["id"])
	return k, err == nil && fieldgroup.ValidateKey(k) == nil
}

func (s *Service) localNow() (string, error) {
	st, err := s.settings.Current()
	if err != nil {
		return "", err
	}
	return st.LocalTime(s.now()), nil
}

// readBody reads a JSON object body, once: JSON media type, at most the
// sidecar's body limit (enforced by the proxy), an object at the top
// without duplicate keys.
func readBody(r *http.Request) (phpserial.Value, error) {
	b, err := wpjson.ReadBody(r, bodyErrors)
	if err != nil {
		return phpserial.Value{}, err
	}
	if b == nil && !wpjson.IsJSONMediaType(r.Header.Get("Content-Type")) {
		return phpserial.Value{}, errMediaType
	}
	n, err := fieldgroup.ParseJSON(b)
	if err != nil {
		return phpserial.Value{}, invalid("body: not valid JSON: %v", err)
	}
	if n.Kind != phpserial.Object {
		return phpserial.Value{}, invalid("body: must be a JSON object")
	}
	if path, ok := fieldgroup.BeyondFloat(n, ""); ok {
		return phpserial.Value{}, invalid("%s: number beyond what a PHP float holds", path)
	}
	return n, nil
}

var (
	errMediaType = &wpjson.Error{Status: http.StatusUnsupportedMediaType, Message: "The request body must be JSON (Content-Type: application/json).", Bare: true}
	errTooLarge  = wpjson.ErrTooLarge.AsBare()
	bodyErrors   = wpjson.BodyErrors{MediaType: errMediaType, TooLarge: errTooLarge, Unread: invalid("body: could not be read")}
)

// invalid is a client mistake, answered 400 with its message: the
// namespace's rules' (a *wpsidecar.Invalid, through answerOf) and the
// body's (here) alike.
func invalid(format string, a ...any) *wpjson.Error {
	return &wpjson.Error{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, a...), Bare: true}
}

// answerOf names the namespace's errors as the contract answers them, in
// its own {"error": …} shape; the rest (a database that is down, a stale
// If-Match, faults) the REST server's renderer answers.
func answerOf(err error) error {
	var bad *wpsidecar.Invalid
	switch {
	case errors.As(err, &bad):
		return invalid("%s", bad.Message)
	case errors.Is(err, wpsidecar.ErrNotFound):
		return errNotFound
	case errors.Is(err, wpsidecar.ErrDuplicate):
		return errDuplicate
	}
	return err
}

var (
	errNotFound  = &wpjson.Error{Status: http.StatusNotFound, Message: "Field group not found", Bare: true}
	errDuplicate = &wpjson.Error{Status: http.StatusBadRequest, Message: "A field group with this key already exists", Bare: true}
)

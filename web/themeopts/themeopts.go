// Package themeopts answers the themeopts/v1 REST namespace (saved theme
// options) from the options row the theme options configuration names,
// read and written in PHP's serialize() format so that PHP's get_option
// and the sidecar see the same bytes: HTTP around the rules of package
// themeoption (the configuration and what a value may be).
package themeopts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gorilla/mux"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/auth"
	"github.com/wpsidecar/wpsidecar/domain/cachetag"
	"github.com/wpsidecar/wpsidecar/domain/publicroute"
	"github.com/wpsidecar/wpsidecar/domain/themeoption"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/wire/httpcond"
	"github.com/wpsidecar/wpsidecar/wire/routetable"
	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// Service holds the namespace's dependencies and its configuration, which
// Reload replaces while requests run.
type Service struct {
	auth     *auth.Authenticator
	db       *store.DB
	settings store.Settings // db_version decides the row's autoload; home is in OPTIONS answers
	log      zerolog.Logger
	cfg      Source

	// last is what the last GET derived from the row: reused while the
	// row's bytes are the same, so that a GET (or a 304) of an unchanged
	// set does not decode and render it again.
	last atomic.Pointer[derivedSet]
	// public keeps each public route's answer (by its ids) while the row
	// is unchanged.
	public sync.Map
	// configTag is the configuration in force with its ETag.
	configTag atomic.Pointer[taggedConfig]
}

// derivedSet is what a row's bytes give a GET. It is shared: never modified.
type derivedSet struct {
	raw   string
	found bool
	set   phpserial.Value
	etag  string
	tags  []string
	head  cachetag.Tags // tags, as headers
	json  []byte
}

// Source gives the configuration in force; whoever reads the file reloads
// and watches it (reload.File).
type Source interface{ Current() *themeoption.Config }

// NewService returns the service of a configuration.
func NewService(a *auth.Authenticator, db *store.DB, settings store.Settings, cfg Source, log zerolog.Logger) *Service {
	return &Service{auth: a, db: db, settings: settings, log: log, cfg: cfg}
}

// Config is the configuration in force; nil on a nil Service (a site
// that serves no theme options: web/historyapi asks it all the same).
func (s *Service) Config() *themeoption.Config {
	if s == nil {
		return nil
	}
	return s.cfg.Current()
}

// Name is the namespace the service answers.
func (s *Service) Name() string { return string(wpsidecar.ThemeOptions) + "/v1" }

// Register lists every route of the namespace (docs/api.md §3), all
// behind the configured capability; /dev-panel exists only in developer
// mode (otherwise PHP answers it: rest_no_route).
func (s *Service) Register(r *mux.Router) {
	r.Use(s.auth.Identify(http.StatusForbidden, s.ride), wpjson.CheckBody, s.auth.Permit(s.capability, http.StatusForbidden))
	wpjson.Register(r, wpjson.RouteInfo{Namespace: s.Name(), Home: store.Home(s.settings), Errors: answerOf, DBVersion: store.DBVersion(s.settings), LoggedIn: loggedIn,
		Permitted: func(r *http.Request) bool { return auth.UserFrom(r.Context()).Can(s.Config().Capability) }}, s.routes())
}

// loggedIn is is_user_logged_in() for the no-cache headers.
func loggedIn(r *http.Request) bool { return auth.UserFrom(r.Context()) != nil }

// Routes are the namespace's routes with their documentation, for the
// OpenAPI description (their handlers are not for serving).
func Routes() []routetable.Route { return (&Service{}).routes() }

// routes is the route table: paths, methods, handlers, and what each
// answers (docs/api.md §3).
func (s *Service) routes() []routetable.Route {
	body := []routetable.ErrorDoc{{Status: http.StatusBadRequest, Code: "rest_invalid_json"}, {Status: http.StatusBadRequest, Code: "themeopts_invalid_body"},
		{Status: http.StatusUnsupportedMediaType, Code: "themeopts_unsupported_media_type"}, {Status: http.StatusRequestEntityTooLarge, Code: wpjson.ErrTooLarge.Code}}
	corrupt := routetable.ErrorDoc{Status: http.StatusInternalServerError, Code: "themeopts_corrupt_option"}
	return []routetable.Route{
		{Path: "/options", Handlers: []routetable.MethodHandler{
			{Method: http.MethodGet, Fn: s.handleGet, Doc: routetable.Operation{ID: "getThemeOptions", Summary: "Get the saved theme options",
				Description: "The saved set, in stored order; {} when nothing is saved.", Answer: "ThemeOptions", Read: true}, Prepared: true},
			{Method: http.MethodPost, Fn: s.handleSave, Doc: routetable.Operation{ID: "saveThemeOptions", Summary: "Save theme options",
				Description: "Saves the ids given; every id must be a configured field and every value fit its type, else nothing is written.",
				Body:        "ThemeOptions", Answer: "ThemeOptionsSaved", Write: true,
				Errors: append([]routetable.ErrorDoc{{Status: http.StatusBadRequest, Code: "themeopts_invalid_option"}, corrupt}, body...)}},
		}},
		{Path: "/options/reset", Handlers: []routetable.MethodHandler{
			{Method: http.MethodPost, Fn: s.handleReset, Doc: routetable.Operation{ID: "resetThemeOptions", Summary: "Reset every option to its default",
				Answer: "ThemeOptionsSaved", Write: true, Errors: []routetable.ErrorDoc{corrupt}}},
		}},
		{Path: "/options/reset-section", Handlers: []routetable.MethodHandler{
			{Method: http.MethodPost, Fn: s.handleResetSection, Doc: routetable.Operation{ID: "resetThemeOptionsSection", Summary: "Reset one section to its defaults",
				Body: "SectionReset", BodyOptional: true, Answer: "ThemeOptionsSectionReset", Write: true,
				Query:  []routetable.ParamDoc{{Name: "section", Type: "string", Description: "the section's id, when the body gives none"}},
				Errors: append([]routetable.ErrorDoc{{Status: http.StatusBadRequest, Code: "themeopts_missing_section"}, {Status: http.StatusNotFound, Code: "themeopts_unknown_section"}, corrupt}, body...)}},
		}},
		{Path: "/config", Handlers: []routetable.MethodHandler{
			{Method: http.MethodGet, Fn: s.handleConfig, Doc: routetable.Operation{ID: "getThemeOptionsConfig", Summary: "Get the theme options configuration",
				Description: "The configuration file as it is.", Answer: "ThemeOptionsConfig", Read: true}, Prepared: true},
		}},
		{Path: "/dev-panel", When: func() bool { return s.Config().DevMode }, Handlers: []routetable.MethodHandler{
			{Method: http.MethodGet, Fn: s.handleDevPanel, Doc: routetable.Operation{ID: "getThemeOptionsDevPanel", Summary: "Inspect every field (developer mode)",
				Description: "Every field with its default, value and state, and statistics; 404 rest_no_route unless dev_mode is on.", Answer: "DevPanel", Read: true}},
		}},
	}
}

// capability is the configured one, except that OPTIONS needs none.
func (s *Service) capability(r *http.Request) string {
	if r.Method == http.MethodOptions {
		return ""
	}
	return s.Config().Capability
}

// prefetched is the option row a GET read along with authentication.
type prefetched struct {
	pb    *store.Piggyback
	name  string // the row read: the configuration may change meanwhile
	raw   string
	found bool
}

// Piggyback is the read (auth.Ride).
func (p *prefetched) Piggyback() *store.Piggyback { return p.pb }

// ride has a GET read the option row along with the user lookup of its
// authentication: one database round trip in all.
func (s *Service) ride(r *http.Request) auth.Ride {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return nil
	}
	p := &prefetched{name: s.Config().OptName}
	p.pb = s.db.OptionPiggyback(p.name, &p.raw, &p.found)
	return p
}

// nsTag is the namespace's cache tag (cachetag spells the others from it).
const nsTag = string(wpsidecar.ThemeOptions)

// stored is the saved option set as stored: the prefetched row when the
// request has one of optName (a reload may have changed opt_name since),
// else a read of its own.
func (s *Service) stored(r *http.Request, optName string) (raw string, found bool, err error) {
	if p, _ := auth.RideFrom(r.Context()).(*prefetched); p != nil && p.name == optName {
		if done, err := p.pb.Done(); done && err == nil {
			return p.raw, p.found, nil
		}
	}
	raw, err = s.db.RawOption(r.Context(), optName)
	if errors.Is(err, wpsidecar.ErrNotFound) {
		return "", false, nil
	}
	return raw, err == nil, err
}

// errCorrupt: the row holds serialized data PHP itself could not read; a
// write refuses to overwrite it (a reset replaces it).
var errCorrupt = &wpjson.Error{Status: http.StatusInternalServerError, Code: "themeopts_corrupt_option",
	Message: "The saved theme options cannot be read, so they were not changed. Reset all options to start again."}

// decodeSet is the option set a row holds, as themeopts_get_option sees
// it: missing, empty or not an array is the empty set.
func decodeSet(raw string, found bool) (phpserial.Value, error) {
	empty := phpserial.Value{Kind: phpserial.Array}
	if !found {
		return empty, nil
	}
	v, err := phpserial.MaybeUnserialize(raw)
	if err != nil {
		return empty, errCorrupt
	}
	if v.Kind == phpserial.Array || (v.Kind == phpserial.Object && !v.Custom) {
		// A set whose JSON would be over phpserial.MaxJSON (references
		// nested: PHP's json_encode runs out of memory) cannot be shown
		// nor written back with its answer.
		if phpserial.CheckJSON(v) != nil {
			return empty, errCorrupt
		}
		return v, nil
	}
	return empty, nil
}

// setJSON renders the option set: always a JSON object, keys in stored
// order, values as json_encode writes them.
func setJSON(set phpserial.Value) []byte {
	return phpserial.JSON(phpserial.Value{Kind: phpserial.Object, Entries: set.Entries})
}

// handleGet is GET /options.
func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) error {
	d, err := s.savedSet(w, r, s.Config())
	if err != nil || httpcond.NotModified(w, r, d.etag) {
		return err
	}
	wpjson.WriteRaw(w, http.StatusOK, d.json)
	return nil
}

// savedSet reads the saved set for a GET and names the namespace and every
// saved id (themeopts:<id>, as the change webhooks name them) in the cache
// tags. A corrupt row reads as empty, as PHP's get_option gives false.
func (s *Service) savedSet(w http.ResponseWriter, r *http.Request, c *themeoption.Config) (*derivedSet, error) {
	raw, found, err := s.stored(r, c.OptName)
	if err != nil {
		return nil, err
	}
	d := s.derive(r.Context(), c, raw, found)
	d.head.Set(w.Header())
	return d, nil
}

// Public is a public route's answer: the listed ids (sel, themeoption.IDs)
// that are saved, in the order listed, each value as GET /options gives it, with an ETag and the
// cache tags of every listed id (saved or not: saving one changes the
// answer). It needs no credentials; what it may show is the site owner's
// choice.
func (s *Service) Public(ctx context.Context, sel publicroute.Selection) (body []byte, etag string, tags []string, err error) {
	ids, ok := sel.(themeoption.IDs)
	if !ok {
		return nil, "", nil, fmt.Errorf("themeopts: a public route's selection %T is not option ids", sel)
	}
	c := s.Config()
	raw, err := s.db.RawOption(ctx, c.OptName)
	found := err == nil
	if errors.Is(err, wpsidecar.ErrNotFound) {
		err = nil
	}
	if err != nil {
		return nil, "", nil, err
	}
	d := s.derive(ctx, c, raw, found)
	key := strings.Join(ids, "\x00")
	if p, ok := s.public.Load(key); ok && p.(*publicAnswer).from == d {
		p := p.(*publicAnswer)
		return p.body, p.etag, p.tags, nil
	}
	picked := phpserial.Value{Kind: phpserial.Array}
	tags = []string{nsTag}
	for _, id := range ids {
		if v, ok := d.set.Get(id); ok {
			picked.Entries = append(picked.Entries, phpserial.Entry{Key: phpserial.StrKey(id), Value: v})
		}
		tags = append(tags, cachetag.Key(nsTag, id))
	}
	// The tag is of what the answer shows, nothing else: a tag over the
	// whole row would let anyone test guesses at the values it hides.
	body = setJSON(picked)
	p := &publicAnswer{from: d, body: body, etag: httpcond.ETag("themeopts:public", string(body)), tags: tags}
	s.public.Store(key, p) // one entry per route's list of ids
	return p.body, p.etag, p.tags, nil
}

// publicAnswer is a public route's answer, kept while the row it was made
// from is the one in force (from).
type publicAnswer struct {
	from *derivedSet
	body []byte
	etag string
	tags []string
}

// derive is what the row's bytes give, reused while they stay the same.
func (s *Service) derive(ctx context.Context, c *themeoption.Config, raw string, found bool) *derivedSet {
	d := s.last.Load()
	if d == nil || d.raw != raw || d.found != found {
		d = &derivedSet{raw: raw, found: found, etag: optionsETag(raw, found), tags: []string{nsTag}}
		var err error
		if d.set, err = decodeSet(raw, found); err != nil {
			zerolog.Ctx(ctx).Warn().Str("option", c.OptName).Msg("saved theme options are corrupt; answered as empty")
		}
		for _, e := range d.set.Entries {
			d.tags = append(d.tags, cachetag.Key(nsTag, e.Key.String()))
		}
		d.json = setJSON(d.set)
		d.head = cachetag.New(d.tags...)
		s.last.Store(d)
	}
	return d
}

// optionsETag tags the option row as stored: GET /options answers it, the
// writes' If-Match is checked against it.
func optionsETag(raw string, found bool) string {
	return httpcond.ETag("themeopts:options", strconv.FormatBool(found), raw)
}

// handleSave is POST /options: the body's ids replace their saved values in
// place, new ids are appended in request order (array_replace).
func (s *Service) handleSave(w http.ResponseWriter, r *http.Request) error {
	c := s.Config()
	body, err := readBody(r, true)
	if err != nil {
		return err
	}
	for _, e := range body.Entries {
		if err := c.CheckValue(e.Key.String(), e.Value); err != nil {
			return err
		}
	}
	set, err := s.modify(w, r, c, func(set *phpserial.Value) {
		for _, e := range body.Entries {
			put(set, e.Key, e.Value)
		}
	})
	if err != nil {
		return err
	}
	writeResult(w, "Options saved", "", set)
	return nil
}

// handleReset is POST /options/reset: every field's default, in
// configuration order; nothing else stays.
func (s *Service) handleReset(w http.ResponseWriter, r *http.Request) error {
	c := s.Config()
	set, err := s.write(w, r, c, func(cur phpserial.Value, _ error) (phpserial.Value, error) {
		next := phpserial.Value{Kind: phpserial.Array}
		for _, f := range c.Fields {
			if f.HasDefault {
				put(&next, phpserial.StrKey(f.ID), f.Default)
			}
		}
		if cur.Kind == phpserial.Object {
			next.Kind, next.Class = cur.Kind, cur.Class
		}
		return next, nil
	})
	if err != nil {
		return err
	}
	writeResult(w, "All options reset to defaults", "", set)
	return nil
}

// handleResetSection is POST /options/reset-section: the section's fields
// with a default take it, in place or appended in configuration order.
func (s *Service) handleResetSection(w http.ResponseWriter, r *http.Request) error {
	c := s.Config()
	id, err := sectionParam(r)
	if err != nil {
		return err
	}
	sec, ok := c.Section(id)
	if !ok {
		return &wpjson.Error{Status: http.StatusNotFound, Code: "themeopts_unknown_section", Message: "Unknown section " + strconv.Quote(id) + "."}
	}
	set, err := s.modify(w, r, c, func(set *phpserial.Value) {
		for _, f := range sec.Fields {
			if f.HasDefault {
				put(set, phpserial.StrKey(f.ID), f.Default)
			}
		}
	})
	if err != nil {
		return err
	}
	writeResult(w, "Section reset to defaults", id, set)
	return nil
}

// sectionParam is the section of a reset-section request: the body's
// "section", else the query's.
func sectionParam(r *http.Request) (string, error) {
	missing := &wpjson.Error{Status: http.StatusBadRequest, Code: "themeopts_missing_section", Message: "A section id is required: {\"section\": \"<id>\"}."}
	if r.ContentLength != 0 {
		body, err := readBody(r, false)
		if err != nil {
			return "", err
		}
		if v, ok := body.Get("section"); ok {
			if v.Kind != phpserial.String || v.Str == "" {
				return "", missing
			}
			return v.Str, nil
		}
	}
	if q := r.URL.Query(); q.Has("section") && q.Get("section") != "" {
		return q.Get("section"), nil
	}
	return "", missing
}

// modify changes the saved set in place with change, atomically.
func (s *Service) modify(w http.ResponseWriter, r *http.Request, c *themeoption.Config, change func(*phpserial.Value)) (phpserial.Value, error) {
	return s.write(w, r, c, func(cur phpserial.Value, err error) (phpserial.Value, error) {
		if err != nil {
			return cur, err
		}
		change(&cur)
		return cur, nil
	})
}

// write is the one read-modify-write of the option row: the request's
// If-Match is checked against the row as locked, next gets the saved set
// (or errCorrupt) and returns the set to store. On success the answer
// carries the row's new ETag, the one GET /options now answers.
func (s *Service) write(w http.ResponseWriter, r *http.Request, c *themeoption.Config, next func(phpserial.Value, error) (phpserial.Value, error)) (phpserial.Value, error) {
	st, err := s.settings.Current()
	if err != nil {
		return phpserial.Value{}, err
	}
	pre := httpcond.IfMatch(r)
	var (
		out    phpserial.Value
		stored string
	)
	rec := &store.Recorded{Namespace: wpsidecar.ThemeOptions, Diff: themeoption.Diff, By: auth.AuthorOf(r)}
	err = s.db.ModifyOption(r.Context(), c.OptName, st.DBVersion, rec, func(raw string, found bool) (string, error) {
		if err := pre.Check(optionsETag(raw, found)); err != nil {
			return "", err
		}
		set, err := next(decodeSet(raw, found))
		if err != nil {
			return "", err
		}
		out, stored = set, phpserial.Serialize(set)
		return stored, nil
	})
	switch {
	case err == nil:
		w.Header().Set("ETag", optionsETag(stored, true))
	case errors.Is(err, errCorrupt):
		zerolog.Ctx(r.Context()).Error().Str("option", c.OptName).Msg("saved theme options are corrupt; write refused")
	}
	return out, err
}

// put sets key to v: in place when the key is there, else at the end.
func put(set *phpserial.Value, key phpserial.Key, v phpserial.Value) {
	for i := range set.Entries {
		if set.Entries[i].Key == key {
			set.Entries[i].Value = v
			return
		}
	}
	set.Entries = append(set.Entries, phpserial.Entry{Key: key, Value: v})
}

// handleConfig is GET /config: the configuration file as it is.
func (s *Service) handleConfig(w http.ResponseWriter, r *http.Request) error {
	c := s.Config()
	cachetag.Set(w.Header(), nsTag, cachetag.Key(nsTag, "config"))
	if httpcond.NotModified(w, r, s.configETag(c)) {
		return nil
	}
	wpjson.WriteRaw(w, http.StatusOK, c.JSON())
	return nil
}

// taggedConfig is a configuration with its ETag.
type taggedConfig struct {
	c    *themeoption.Config
	etag string
}

// configETag is c's ETag, made once for each configuration loaded (a
// reload brings a new one).
func (s *Service) configETag(c *themeoption.Config) string {
	if t := s.configTag.Load(); t != nil && t.c == c {
		return t.etag
	}
	t := &taggedConfig{c: c, etag: httpcond.ETag("themeopts:config", string(c.JSON()))}
	s.configTag.Store(t)
	return t.etag
}

// answerOf answers a value the configuration refuses (CheckValue's
// *wpsidecar.Invalid) as themeopts_invalid_option; the REST server's
// renderer answers the rest.
func answerOf(err error) error {
	var bad *wpsidecar.Invalid
	if errors.As(err, &bad) {
		return &wpjson.Error{Status: http.StatusBadRequest, Code: "themeopts_invalid_option", Message: bad.Message}
	}
	return err
}

var (
	errMediaType = &wpjson.Error{Status: http.StatusUnsupportedMediaType, Code: "themeopts_unsupported_media_type", Message: "The request body must be JSON (Content-Type: application/json)."}
	errTooLarge  = wpjson.ErrTooLarge
	errNotObject = &wpjson.Error{Status: http.StatusBadRequest, Code: "themeopts_invalid_body", Message: "The request body must be a JSON object."}
	errBadJSON   = &wpjson.Error{Status: http.StatusBadRequest, Code: "rest_invalid_json", Message: "Invalid JSON body passed."}
)

// readBody reads a JSON object body as json_decode($body, true) would.
// An empty body is an error only when required.
func readBody(r *http.Request, required bool) (phpserial.Value, error) {
	b, err := wpjson.ReadBody(r, wpjson.BodyErrors{MediaType: errMediaType, TooLarge: errTooLarge, Unread: errBadJSON})
	switch {
	case err != nil:
		return phpserial.Value{}, err
	case b == nil && !required:
		return phpserial.Value{Kind: phpserial.Array}, nil
	case b == nil && !wpjson.IsJSONMediaType(r.Header.Get("Content-Type")):
		return phpserial.Value{}, errMediaType
	}
	v, err := phpserial.FromJSON(b)
	if err != nil {
		return phpserial.Value{}, errBadJSON
	}
	if b[0] != '{' {
		return phpserial.Value{}, errNotObject
	}
	return v, nil
}

// writeResult writes a write's answer: success, message, the section for
// a section reset, and the whole saved set.
func writeResult(w http.ResponseWriter, message, section string, set phpserial.Value) {
	var b bytes.Buffer
	b.WriteString(`{"success":true,"message":`)
	b.Write(phpserial.JSON(phpserial.Value{Kind: phpserial.String, Str: message}))
	if section != "" {
		b.WriteString(`,"section":`)
		b.Write(phpserial.JSON(phpserial.Value{Kind: phpserial.String, Str: section}))
	}
	b.WriteString(`,"options":`)
	b.Write(setJSON(set))
	b.WriteByte('}')
	wpjson.WriteRaw(w, http.StatusOK, b.Bytes())
}

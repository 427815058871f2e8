// Package changes notices changes to the field groups and the theme
// options row, whoever made them (PHP, another sidecar replica, this one),
// by polling cheap version signals, and tells configured URLs with signed
// webhooks, for CDN purges and frontend revalidation.
package changes

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/phpserial"
	"github.com/wpsidecar/wpsidecar/store"
)

// Change names what changed in one namespace: field-group keys, or theme
// option ids (added, changed or removed).
type Change struct {
	Namespace string // "fieldmgr" or "themeopts"
	Keys      []string
	// Site is the blog id of the site on a multisite network; 0 on a
	// single site.
	Site int64
}

// JSON is the webhook body: {"namespace":"fieldmgr","keys":[…]} or
// {"namespace":"themeopts","ids":[…]}; on a network, with "site": the
// blog id.
func (c Change) JSON() []byte {
	field := "keys"
	if c.Namespace == "themeopts" {
		field = "ids"
	}
	set := phpserial.Value{Kind: phpserial.Array}
	for i, k := range c.Keys {
		set.Entries = append(set.Entries, phpserial.Entry{Key: phpserial.IntKey(int64(i)), Value: phpserial.Value{Kind: phpserial.String, Str: k}})
	}
	var b strings.Builder
	b.WriteString(`{"namespace":`)
	b.Write(phpserial.JSON(phpserial.Value{Kind: phpserial.String, Str: c.Namespace}))
	b.WriteString(`,"` + field + `":`)
	b.Write(phpserial.JSON(set))
	if c.Site > 0 {
		b.WriteString(`,"site":` + strconv.FormatInt(c.Site, 10))
	}
	b.WriteString(`}`)
	return []byte(b.String())
}

// Detector compares, every interval, what is stored with what it saw last.
// The first look only takes the baseline.
type Detector struct {
	groups  *store.FieldGroups
	db      *store.DB
	optName func() string // the theme options row; "" when not served
	notify  func(Change)
	log     zerolog.Logger

	groupsSeen map[string]string // key → row digest
	optSeen    string            // the row's name when optRaw was taken
	optRaw     string            // the row as it was then
	optBase    bool
}

// NewDetector returns a detector; groups or optName may be nil.
func NewDetector(db *store.DB, groups *store.FieldGroups, optName func() string, notify func(Change), log zerolog.Logger) *Detector {
	return &Detector{db: db, groups: groups, optName: optName, notify: notify, log: log}
}

// Run polls every interval until ctx ends (see Every).
func (d *Detector) Run(ctx context.Context, interval time.Duration) {
	Every(ctx, interval, d.log, d.Poll)
}

// Every is change detection by polling: poll every interval until ctx
// ends. A failed poll (database down) is logged once and retried at the
// next tick; nothing is lost, since the next successful poll compares with
// the last state seen. It is the one polling loop, a single site's or a
// network's (whose poll looks at each site).
func Every(ctx context.Context, interval time.Duration, log zerolog.Logger, poll func(context.Context) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		err := poll(ctx)
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			log.Warn().Err(err).Msg("change detection: cannot read; retrying every interval")
			failing = true
		case err == nil && failing:
			log.Info().Msg("change detection: reading again")
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Poll looks once and reports what changed since the last look.
func (d *Detector) Poll(ctx context.Context) error {
	var errs []error
	if d.groups != nil {
		errs = append(errs, d.pollGroups(ctx))
	}
	if d.optName != nil {
		errs = append(errs, d.pollOptions(ctx))
	}
	return errors.Join(errs...)
}

func (d *Detector) pollGroups(ctx context.Context) error {
	now, err := d.groups.Versions(ctx)
	if err != nil {
		return err
	}
	if d.groupsSeen != nil {
		var keys []string
		for k, v := range now {
			if d.groupsSeen[k] != v {
				keys = append(keys, k)
			}
		}
		for k := range d.groupsSeen {
			if _, ok := now[k]; !ok {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			slices.Sort(keys)
			d.report(Change{Namespace: "fieldmgr", Keys: keys})
		}
	}
	d.groupsSeen = now
	return nil
}

func (d *Detector) pollOptions(ctx context.Context) error {
	name := d.optName()
	raw, err := d.db.RawOption(ctx, name)
	if err != nil && !errors.Is(err, wpsidecar.ErrNotFound) {
		return err
	}
	if d.optBase && d.optSeen == name {
		var ids []string
		for _, c := range store.DiffOptions(d.optRaw, raw) {
			ids = append(ids, c.Key)
		}
		if len(ids) > 0 {
			d.report(Change{Namespace: "themeopts", Keys: ids})
		}
	}
	d.optSeen, d.optRaw, d.optBase = name, raw, true
	return nil
}

func (d *Detector) report(c Change) {
	d.log.Info().Str("namespace", c.Namespace).Strs("keys", c.Keys).Msg("stored data changed")
	d.notify(c)
}

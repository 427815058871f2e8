package wpjson

import (
	"context"
	"time"
)

// Keep is what the building of an answer learns of whether the answer may
// be given again, unchanged, to the same request while nothing it was
// built from changes (package rest's prepared answers): its route must
// allow it, and what authenticated the request may hold only until a time
// (a cookie's expiry, a nonce's tick, an application password's use to
// record). A nil Keep, an answer not being kept, ignores both.
type Keep struct {
	allowed, refused bool
	until            time.Time
}

type keepKey struct{}

// WithKeep has the answer built with ctx report to k.
func WithKeep(ctx context.Context, k *Keep) context.Context {
	return context.WithValue(ctx, keepKey{}, k)
}

// KeepOf is the Keep the answer built with ctx reports to, or nil.
func KeepOf(ctx context.Context) *Keep {
	k, _ := ctx.Value(keepKey{}).(*Keep)
	return k
}

// Allow says that the answer depends on nothing but the request and what
// the change feed vouches for: the rows read through the store's memo,
// the site settings, the configuration files.
func (k *Keep) Allow() {
	if k != nil {
		k.allowed = true
	}
}

// Refuse says that the answer must not be kept, whatever allowed it (a
// failure rendered).
func (k *Keep) Refuse() {
	if k != nil {
		k.refused = true
	}
}

// Allowed tells whether the answer may be kept as far as is known now.
func (k *Keep) Allowed() bool { return k.allowed && !k.refused }

// Until says that the answer holds only until t (the earliest such time
// wins).
func (k *Keep) Until(t time.Time) {
	if k != nil && (k.until.IsZero() || t.Before(k.until)) {
		k.until = t
	}
}

// Holds tells whether the answer may be kept at now, and until when
// (zero: no time of its own).
func (k *Keep) Holds(now time.Time) (bool, time.Time) {
	return k.Allowed() && (k.until.IsZero() || now.Before(k.until)), k.until
}

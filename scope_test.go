package wpsidecar_test

import (
	"context"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar"
)

type user struct {
	id    int64
	login string
}

func (u user) Identity() (int64, string) { return u.id, u.login }

type gtid string

func (g gtid) String() string { return string(g) }

// TestScope: each part of the scope is told to a level and seen by the
// contexts made from it, never by those made before; without a scope
// nothing is learned and nothing kept.
func TestScope(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		name string
		// do tells the scope things, and returns the context asked after.
		do func(ctx context.Context) context.Context
		// want, of the context do returned
		who, ride string // login; ride as a string
		keeps     bool   // Holds at now
		until     time.Time
		readAfter string
		notes     bool
		receipt   string
	}{
		{name: "no scope: nothing learned, nothing kept", do: func(ctx context.Context) context.Context {
			s := wpsidecar.ScopeOf(ctx) // nil: every method is safe
			s.Identify(user{1, "a"}, "r")
			s.Keep()
			s.Allow()
			s.Until(now.Add(time.Hour))
			s.ReadAfter(gtid("0-1-1"))
			s.NoteWrites()
			s.Noted("0-1-2")
			return ctx
		}},
		{name: "identified", do: func(ctx context.Context) context.Context {
			ctx, s := wpsidecar.WithScope(ctx)
			s.Identify(user{1, "admin"}, "blogname")
			ctx, _ = wpsidecar.WithScope(ctx) // a level below sees it
			return ctx
		}, who: "admin", ride: "blogname"},
		{name: "the nearest identification wins, anonymous too", do: func(ctx context.Context) context.Context {
			ctx, s := wpsidecar.WithScope(ctx)
			s.Identify(user{1, "admin"}, "blogname")
			ctx, s = wpsidecar.WithScope(ctx)
			s.Identify(nil, nil)
			return ctx
		}},
		{name: "allowed below the keeping level", do: func(ctx context.Context) context.Context {
			ctx, s := wpsidecar.WithScope(ctx)
			s.Keep()
			ctx, _ = wpsidecar.WithScope(ctx)
			wpsidecar.ScopeOf(ctx).Allow()
			return ctx
		}, keeps: true},
		{name: "allowed, no level keeps", do: func(ctx context.Context) context.Context {
			ctx, s := wpsidecar.WithScope(ctx)
			s.Allow()
			return ctx
		}},
		{name: "refused wins", do: func(ctx context.Context) context.Context {
			ctx, s := wpsidecar.WithScope(ctx)
			s.Keep()
			s.Refuse()
			s.Allow()
			return ctx
		}},
		{name: "the earliest until wins", do: func(ctx context.Context) context.Context {
			ctx, s := wpsidecar.WithScope(ctx)
			s.Keep()
			s.Allow()
			s.Until(now.Add(2 * time.Hour))
			s.Until(now.Add(time.Hour))
			s.Until(now.Add(3 * time.Hour))
			return ctx
		}, keeps: true, until: now.Add(time.Hour)},
		{name: "until passed", do: func(ctx context.Context) context.Context {
			ctx, s := wpsidecar.WithScope(ctx)
			s.Keep()
			s.Allow()
			s.Until(now)
			return ctx
		}, until: now},
		{name: "keeping again starts afresh", do: func(ctx context.Context) context.Context {
			ctx, s := wpsidecar.WithScope(ctx)
			s.Keep()
			s.Refuse()
			s.Until(now)
			s.Keep()
			s.Allow()
			return ctx
		}, keeps: true},
		{name: "read after, below", do: func(ctx context.Context) context.Context {
			ctx, s := wpsidecar.WithScope(ctx)
			s.ReadAfter(gtid("0-1-41"))
			ctx, _ = wpsidecar.WithScope(ctx)
			return ctx
		}, readAfter: "0-1-41"},
		{name: "read after: not a context made before", do: func(ctx context.Context) context.Context {
			ctx, _ = wpsidecar.WithScope(ctx)
			before := ctx
			_, s := wpsidecar.WithScope(ctx)
			s.ReadAfter(gtid("0-1-41"))
			return before
		}},
		{name: "writes noted below the noting level", do: func(ctx context.Context) context.Context {
			ctx, s := wpsidecar.WithScope(ctx)
			s.NoteWrites()
			inner, _ := wpsidecar.WithScope(ctx)
			wpsidecar.ScopeOf(inner).Noted("0-1-41")
			wpsidecar.ScopeOf(inner).Noted("0-1-42") // the last one wins
			return ctx
		}, notes: true, receipt: "0-1-42"},
		{name: "writes not noted where none asks", do: func(ctx context.Context) context.Context {
			ctx, s := wpsidecar.WithScope(ctx)
			s.Noted("0-1-42")
			return ctx
		}},
		{name: "writes of a context made before the noting level: not noted", do: func(ctx context.Context) context.Context {
			before, _ := wpsidecar.WithScope(ctx)
			ctx, s := wpsidecar.WithScope(before)
			s.NoteWrites()
			wpsidecar.ScopeOf(before).Noted("0-1-42")
			return ctx
		}, notes: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := wpsidecar.ScopeOf(tc.do(context.Background()))
			who := ""
			if u := s.Who(); u != nil {
				_, who = u.Identity()
			}
			ride, _ := s.Ride().(string)
			keeps, until := s.Holds(now)
			readAfter := ""
			if g := s.ReadsAfter(); g != nil {
				readAfter = g.String()
			}
			if who != tc.who || ride != tc.ride || keeps != tc.keeps || !until.Equal(tc.until) ||
				readAfter != tc.readAfter || s.NotesWrites() != tc.notes || s.Receipt() != tc.receipt {
				t.Errorf("who %q ride %q keeps %v until %v readAfter %q notes %v receipt %q\nwant %q %q %v %v %q %v %q",
					who, ride, keeps, until, readAfter, s.NotesWrites(), s.Receipt(),
					tc.who, tc.ride, tc.keeps, tc.until, tc.readAfter, tc.notes, tc.receipt)
			}
		})
	}
}

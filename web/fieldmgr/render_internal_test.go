package fieldmgr

import (
	"testing"

	"github.com/wpsidecar/wpsidecar/store/fieldgrouptable"

	"github.com/wpsidecar/wpsidecar/domain/fieldgroup"
)

// TestRender_ByVersion: a list's answer is made again unless the list is
// of the version the last answer was made from. What made the answer once
// (the address of its first group and its length) says nothing of its
// groups: a list with the same first element and length but other
// contents was given the old answer.
func TestRender_ByVersion(t *testing.T) {
	groups := []fieldgroup.Group{{Key: "g1", Title: "Before", Status: "active"}}
	s := &Service{}
	first := s.render(fieldgrouptable.GroupList{Groups: groups, Version: 7})

	for _, tc := range []struct {
		name  string
		list  func() fieldgrouptable.GroupList
		again bool // the answer made first is given
	}{
		{"the same version", func() fieldgrouptable.GroupList { return fieldgrouptable.GroupList{Groups: groups, Version: 7} }, true},
		{"the same version, a list of its own", func() fieldgrouptable.GroupList {
			return fieldgrouptable.GroupList{Groups: append([]fieldgroup.Group(nil), groups...), Version: 7}
		}, true},
		{"another version, the same first element and length, other contents", func() fieldgrouptable.GroupList {
			changed := groups[:1:1]
			changed[0].Title = "After" // as a list the store replaced would differ
			return fieldgrouptable.GroupList{Groups: changed, Version: 8}
		}, false},
		{"no version", func() fieldgrouptable.GroupList { return fieldgrouptable.GroupList{Groups: groups} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.listed.Store(first)
			a := s.render(tc.list())
			if (a == first) != tc.again {
				t.Errorf("the first answer given: %v, want %v (%s)", a == first, tc.again, a.body)
			}
		})
	}
}

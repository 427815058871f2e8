package auth

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/wpsidecar/wpsidecar/internal/harness/testvectors"
)

// user_roles_6.1.txt is wp_user_roles as WordPress 6.1's populate_roles()
// wrote it on a fresh install (the default roles are identical in 7.1).
func defaultRoles(t *testing.T) Roles {
	t.Helper()
	b, err := os.ReadFile("testdata/user_roles_6.1.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseRoles(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.order) != 5 || len(r.caps["administrator"]) != 61 || len(r.caps["subscriber"]) != 2 {
		t.Fatalf("roles %v, administrator %d caps", r.order, len(r.caps["administrator"]))
	}
	return r
}

func TestUserCaps_Vectors(t *testing.T) {
	type user struct {
		Raw              string   `json:"raw_capabilities"`
		Roles            []string `json:"roles"`
		ManageOptions    *bool    `json:"manage_options"`
		EditThemeOptions *bool    `json:"edit_theme_options"`
		Customize        *bool    `json:"customize"`
	}
	var v struct {
		Capabilities struct {
			V61 map[string]json.RawMessage `json:"6.1.9"`
			V71 map[string]json.RawMessage `json:"7.1"`
		} `json:"capabilities"`
	}
	testvectors.Decode(t, &v)
	users := map[string]map[string]user{}
	for version, m := range map[string]map[string]json.RawMessage{"6.1.9": v.Capabilities.V61, "7.1": v.Capabilities.V71} {
		users[version] = map[string]user{}
		for name, raw := range m {
			var u user
			if json.Unmarshal(raw, &u) == nil {
				users[version][name] = u
			}
		}
	}
	roles := defaultRoles(t)
	n := 0
	for _, version := range []string{"6.1.9", "7.1"} {
		for name, u := range users[version] {
			if strings.HasPrefix(name, "_") || u.ManageOptions == nil {
				continue
			}
			n++
			c := userCaps(u.Raw, roles, false)
			if u.Roles != nil && strings.Join(c.Roles, ",") != strings.Join(u.Roles, ",") {
				t.Errorf("%s/%s: roles %v, want %v", version, name, c.Roles, u.Roles)
			}
			for cap, want := range map[string]*bool{"manage_options": u.ManageOptions, "edit_theme_options": u.EditThemeOptions, "customize": u.Customize} {
				if want != nil && c.Can(cap) != *want {
					t.Errorf("%s/%s %s: %v, WordPress says %v", version, name, cap, c.Can(cap), *want)
				}
			}
		}
	}
	if n < 12 {
		t.Errorf("only %d users checked", n)
	}
}

func TestUserCaps_EdgeCases(t *testing.T) {
	roles := defaultRoles(t)
	if c := userCaps("not serialized", roles, false); c.Can("manage_options") || !c.Can("exist") {
		t.Error("garbage meta gives no caps but exist")
	}
	if c := userCaps(`a:1:{s:10:"subscriber";b:1;}`, roles, true); !c.Can("manage_options") {
		t.Error("a super admin passes every check")
	}
	if c := userCaps(`a:1:{s:9:"ghostrole";b:1;}`, roles, false); len(c.Roles) != 0 || c.Can("read") {
		t.Error("an unknown role grants nothing")
	}
}

func TestSiteAdmins(t *testing.T) {
	if got := siteAdmins("", false); len(got) != 1 || got[0] != "admin" {
		t.Errorf("missing option: %v", got)
	}
	if got := siteAdmins(`a:2:{i:0;s:5:"admin";i:1;s:9:"siteadmin";}`, true); strings.Join(got, ",") != "admin,siteadmin" {
		t.Errorf("got %v", got)
	}
}

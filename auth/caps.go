package auth

import (
	"fmt"

	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// Roles are the role definitions of {prefix}user_roles: role slug →
// capability → granted, in stored order.
type Roles struct {
	order []string
	caps  map[string][]capEntry
}

type capEntry struct {
	name    string
	granted bool
}

// parseRoles reads the serialized {prefix}user_roles option.
func parseRoles(serialized string) (Roles, error) {
	v, err := phpserial.Unserialize(serialized)
	if err != nil {
		return Roles{}, fmt.Errorf("auth: user_roles: %w", err)
	}
	r := Roles{caps: map[string][]capEntry{}}
	if v.Kind != phpserial.Array {
		return r, nil
	}
	for _, e := range v.Entries {
		slug := e.Key.String()
		var list []capEntry
		if c, ok := e.Value.Get("capabilities"); ok && c.Kind == phpserial.Array {
			for _, ce := range c.Entries {
				list = append(list, capEntry{ce.Key.String(), ce.Value.Truthy()})
			}
		}
		r.order = append(r.order, slug)
		r.caps[slug] = list
	}
	return r, nil
}

// Caps are one user's capabilities on one site, as WP_User computes them.
type Caps struct {
	Roles      []string
	all        map[string]bool
	superAdmin bool
}

// userCaps computes allcaps from the user's {prefix}capabilities meta:
// role membership is the presence of a role's key (its value is ignored),
// role capabilities merge in the order of the meta, and the user's own
// entries override them, as WP_User::get_role_caps does. superAdmin is for
// multisite super admins, who pass every check.
func userCaps(capsMeta string, roles Roles, superAdmin bool) Caps {
	c := Caps{all: map[string]bool{}, superAdmin: superAdmin}
	v, err := phpserial.Unserialize(capsMeta)
	if err != nil || v.Kind != phpserial.Array {
		return c
	}
	for _, e := range v.Entries {
		slug := e.Key.String()
		if list, ok := roles.caps[slug]; ok {
			c.Roles = append(c.Roles, slug)
			for _, ce := range list {
				c.all[ce.name] = ce.granted
			}
		}
	}
	for _, e := range v.Entries {
		c.all[e.Key.String()] = e.Value.Truthy()
	}
	return c
}

// Can is has_cap() for the primitive capabilities the sidecar checks
// (manage_options, edit_theme_options and other primitives; customize maps
// to edit_theme_options, as map_meta_cap does).
func (c Caps) Can(capability string) bool {
	if capability == "customize" {
		capability = "edit_theme_options"
	}
	if c.superAdmin {
		return true
	}
	if capability == "exist" {
		return true
	}
	return c.all[capability]
}

// siteAdmins reads the network option site_admins (a serialized list of
// logins); missing means ["admin"], as get_super_admins() assumes.
func siteAdmins(serialized string, present bool) []string {
	if !present {
		return []string{"admin"}
	}
	v, err := phpserial.Unserialize(serialized)
	if err != nil || v.Kind != phpserial.Array {
		return nil
	}
	var out []string
	for _, e := range v.Entries {
		if e.Value.Kind == phpserial.String {
			out = append(out, e.Value.Str)
		}
	}
	return out
}

package command

import (
	"context"
	"fmt"
	"strings"

	"github.com/wpsidecar/wpsidecar/multisite"
	"github.com/wpsidecar/wpsidecar/store"
	"github.com/wpsidecar/wpsidecar/themeopt"
)

// stored is a site's stored data as the commands that edit it offline
// reach it.
type stored struct {
	ID     int64 // 0 on a single site
	DB     *store.DB
	Groups *store.FieldGroups
	// Themeopts is the site's theme options configuration, as the server
	// would serve it (nil: none): an import checks values against it.
	Themeopts *themeopt.Config
}

// storedSites are the sites the command works on: the single site; on a
// network site --site only (when given), else every site.
func (c *cmd) storedSites(ctx context.Context, db *store.DB) ([]stored, error) {
	var topts Themeopts
	if c.o.Themeopts != nil {
		var err error
		if topts, err = c.o.Themeopts(); err != nil {
			return nil, err
		}
	}
	themeoptsOf := func(ms *multisite.Site) *themeopt.Config {
		if topts == nil {
			return nil
		}
		if f := topts.Of(ms); f != nil {
			return f.Current()
		}
		return nil
	}
	only := c.f.site
	site := func(id int64, ms *multisite.Site) (stored, error) {
		view := db
		if id > 0 {
			view = db.ForSite(id)
		}
		s := stored{ID: id, DB: view, Themeopts: themeoptsOf(ms)}
		var err error
		s.Groups, err = view.FieldGroups(view.Table(strings.TrimPrefix(c.o.FieldmgrTable, c.o.DB.TablePrefix)))
		return s, err
	}
	if !c.o.DB.Multisite {
		if only > 0 {
			return nil, fmt.Errorf("--site %d: not a multisite network", only)
		}
		s, err := site(0, nil)
		return []stored{s}, err
	}
	m, err := db.LoadNetwork(ctx, c.o.Network)
	if err != nil {
		return nil, err
	}
	var out []stored
	for i := range m.Sites {
		ms := &m.Sites[i]
		if only > 0 && ms.ID != only {
			continue
		}
		s, err := site(ms.ID, ms)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--site %d: no such site on the network", only)
	}
	return out, nil
}

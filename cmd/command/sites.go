package command

import (
	"context"
	"fmt"

	"github.com/wpsidecar/wpsidecar/domain/exportdir"
	"github.com/wpsidecar/wpsidecar/domain/multisite"
	"github.com/wpsidecar/wpsidecar/store"
)

// stored is a site's stored data as the commands that edit it offline
// reach it.
type stored struct {
	ID    int64 // 0 on a single site
	DB    *store.DB
	Parts []exportdir.Part // its namespaces as files
}

// storedSites are the sites the command works on: the single site; on a
// network site --site only (when given), else every site.
func (c *cmd) storedSites(ctx context.Context, db *store.DB) ([]stored, error) {
	var partsOf PartsOf
	if c.o.Parts != nil {
		var err error
		if partsOf, err = c.o.Parts(); err != nil {
			return nil, err
		}
	}
	only := c.f.site
	site := func(id int64, ms *multisite.Site) (stored, error) {
		view := db
		if id > 0 {
			view = db.ForSite(id)
		}
		s := stored{ID: id, DB: view}
		if partsOf == nil {
			return s, nil
		}
		var err error
		s.Parts, err = partsOf(view, ms)
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

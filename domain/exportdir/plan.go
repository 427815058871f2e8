package exportdir

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wpsidecar/wpsidecar"
)

// Plan is what an import would change, kind by kind.
type Plan struct {
	Parts []PartPlan
}

// PartPlan is what an import would change of one kind.
type PartPlan struct {
	Part  Part
	Steps []Step
}

// Step is one write of an import: an item, or a set of them (an options
// row), in a transaction of its own.
type Step struct {
	// Key names what it writes after the kind's namespace, in the list of
	// conflicts ("fieldmgr g_a").
	Key string
	// Lines say what it does, as the plan prints it.
	Lines []string
	// Conflict: what it writes changed in the database since the export.
	Conflict bool
	// Write writes it, checking (unless w.Force) that what it writes is
	// still what was planned against, else an error wrapping ErrConflict.
	Write func(ctx context.Context, w Writing) error
}

// Writing is how an import's writes are made.
type Writing struct {
	// By is who they are by in the history (Via: import).
	By wpsidecar.Author
	// Now is the site's local time, as WordPress dates a row.
	Now string
	// DBVersion is the site's db_version (an options row's autoload
	// depends on it: store.ModifyOption).
	DBVersion int64
	// Force: a row changed since the plan is overwritten.
	Force bool
}

// Item operations, as a plan's lines name them.
const (
	OpCreate = "create"
	OpChange = "change"
	OpDelete = "delete"
)

// Empty tells whether the import writes nothing.
func (p Plan) Empty() bool {
	for _, k := range p.Parts {
		if len(k.Steps) > 0 {
			return false
		}
	}
	return true
}

// Conflicts are the steps whose rows changed since the export.
func (p Plan) Conflicts() []string {
	var out []string
	for _, k := range p.Parts {
		for _, s := range k.Steps {
			if s.Conflict {
				out = append(out, string(k.Part.Namespace())+" "+s.Key)
			}
		}
	}
	return out
}

// Lines say what the plan does, as its steps say it, a conflict marked.
func (p Plan) Lines() []string {
	var out []string
	for _, k := range p.Parts {
		for _, s := range k.Steps {
			mark := ""
			if s.Conflict {
				mark = " (changed in the database since the export)"
			}
			for _, l := range s.Lines {
				out = append(out, l+mark)
			}
		}
	}
	return out
}

// PlanImport compares files with what the site stores, kind by kind.
// prune deletes the items that have no file.
func PlanImport(ctx context.Context, files Files, prune bool) (Plan, error) {
	var p Plan
	for i, w := range files.wanted {
		steps, err := w.Plan(ctx, prune)
		if err != nil {
			return p, err
		}
		p.Parts = append(p.Parts, PartPlan{Part: files.kinds[i], Steps: steps})
	}
	return p, nil
}

// ErrConflict: an import would overwrite rows changed since the export.
var ErrConflict = errors.New("changed in the database since the export (--force overwrites them)")

// Apply writes the plan: each step in a transaction of its own, checked
// to be still what was planned against (unless force), recorded in the
// history as by's (now: the site's local time; dbVersion: its
// db_version, see Writing). With conflicts and no force, nothing is
// written.
func Apply(ctx context.Context, p Plan, force bool, by wpsidecar.Author, now string, dbVersion int64) error {
	if c := p.Conflicts(); len(c) > 0 && !force {
		return fmt.Errorf("%s: %w", strings.Join(c, ", "), ErrConflict)
	}
	by.Via = wpsidecar.ViaImport
	w := Writing{By: by, Now: now, DBVersion: dbVersion, Force: force}
	for _, k := range p.Parts {
		for _, s := range k.Steps {
			// Stopped (a signal): the rows before stay written.
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := s.Write(ctx, w); err != nil {
				return err
			}
		}
	}
	return nil
}

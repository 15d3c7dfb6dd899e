package retention

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/database"
)

// Step removes one kind's rows created (or finished, or last active)
// before the cut-off, in the workspaces of scope, in bounded batches, and
// returns how many it removed; with dryRun it only counts them.
type Step func(ctx context.Context, s Scope, before time.Time, dryRun bool) (int64, error)

// Scope is the workspaces one pass of a Step covers: WorkspaceID alone,
// or, when it is empty, every workspace but those in Except (they have
// an override of their own). Steps of kinds that are not PerWorkspace
// always get the empty scope.
type Scope struct {
	WorkspaceID string
	Except      []string
}

// UsageRollup folds usage detail rows created before the cut-off into
// daily totals and deletes them, returning how many detail rows it
// folded (store.Usage's Rollup).
type UsageRollup func(ctx context.Context, before time.Time) (int64, error)

// Options configures a Pruner. Nil means defaults.
type Options struct {
	// Policy is the server's: kind → age. A kind absent from it is kept
	// unless a workspace override sets an age for it.
	Policy Policy
	// Overrides are the workspaces' own ages. Default: those stored in
	// the database (NewOverrides).
	Overrides *Overrides
	// UsageRollup is the usage_detail step. Nil: a usage_detail policy
	// is reported as skipped, since deleting detail without folding it
	// into totals would lose what the usage API reports.
	UsageRollup UsageRollup
	// Steps replaces or adds the Step of a kind (the built-in ones are
	// in steps.go).
	Steps map[Kind]Step
	// BatchSize is how many parents (runs, conversations, uploads) or
	// rows (jobs, audit, usage) one transaction removes. Default 200.
	BatchSize int
	// NoVacuum skips what a run that removed rows does next on SQLite:
	// checkpoint the WAL, give freed pages back (incremental_vacuum) and
	// checkpoint again so the file shrinks now. Default false.
	NoVacuum bool
	// ConversationsRemoved, when set, is told of every batch of
	// conversations removed (after its transaction committed), with their
	// workspace, so that what lives outside the database's tables — the
	// search index of a conversation's memories — goes with them. Its
	// error is logged; the rows stay removed.
	ConversationsRemoved func(ctx context.Context, removed []RemovedRow) error
	// Logger gets a line per kind removed. Nil discards.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// RemovedRow names one row a step removed.
type RemovedRow struct {
	WorkspaceID, ID string
}

// Pruner removes what the policies no longer keep.
type Pruner struct {
	db    *database.DB
	c     conn
	opts  Options
	steps map[Kind]Step
}

// New returns a pruner on db, which the store has migrated.
func New(db *database.DB, opts *Options) (*Pruner, error) {
	if db == nil {
		return nil, errors.New("retention: new: db is nil")
	}
	p := &Pruner{db: db, c: newConn(db)}
	if opts != nil {
		p.opts = *opts
	}
	if p.opts.BatchSize <= 0 {
		p.opts.BatchSize = 200
	}
	if p.opts.Logger == nil {
		p.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if p.opts.Now == nil {
		p.opts.Now = time.Now
	}
	if p.opts.Overrides == nil {
		p.opts.Overrides = NewOverrides(db)
	}
	for k, v := range p.opts.Policy {
		if !k.Valid() {
			return nil, fmt.Errorf("retention: new: unknown kind %q in the policy", k)
		}
		if k == Audit && v > 0 && v < MinAuditAge {
			return nil, fmt.Errorf("retention: new: audit %s is under a day; audit rows are kept at least %s", FormatAge(v), FormatAge(MinAuditAge))
		}
	}
	p.steps = p.builtinSteps()
	if p.opts.UsageRollup != nil {
		roll := p.opts.UsageRollup
		p.steps[UsageDetail] = func(ctx context.Context, _ Scope, before time.Time, dryRun bool) (int64, error) {
			if dryRun {
				return p.c.count(ctx, `SELECT count(*) FROM usage_records WHERE created_at < ?`, p.c.ts(before))
			}
			return roll(ctx, before)
		}
	}
	for k, s := range p.opts.Steps {
		p.steps[k] = s
	}
	return p, nil
}

// Removed is what one pass removed (or, in a dry run, would remove).
type Removed struct {
	Kind Kind `json:"kind"`
	// WorkspaceID is the workspace of an override; "" for the server's
	// policy (every workspace without an override of its own).
	WorkspaceID string    `json:"workspace_id,omitempty"`
	Age         string    `json:"age"`
	Before      time.Time `json:"before"`
	Rows        int64     `json:"rows"`
}

// Skipped is a kind with a policy that was not applied, and why.
type Skipped struct {
	Kind   Kind   `json:"kind"`
	Reason string `json:"reason"`
}

// Report is what a Run did.
type Report struct {
	DryRun  bool      `json:"dry_run"`
	Removed []Removed `json:"removed"`
	Skipped []Skipped `json:"skipped,omitempty"`
	// Checkpoint and VacuumedPages are SQLite's, after the rows went;
	// VacuumNote says why the file did not shrink when it could not.
	Checkpoint    *database.CheckpointResult `json:"checkpoint,omitempty"`
	VacuumedPages int64                      `json:"vacuumed_pages,omitempty"`
	VacuumNote    string                     `json:"vacuum_note,omitempty"`
	Took          time.Duration              `json:"took_ns"`
}

// Total is the number of rows removed over every kind.
func (r Report) Total() int64 {
	var n int64
	for _, x := range r.Removed {
		n += x.Rows
	}
	return n
}

// Rows is the number of rows of kind removed.
func (r Report) Rows(kind Kind) int64 {
	var n int64
	for _, x := range r.Removed {
		if x.Kind == kind {
			n += x.Rows
		}
	}
	return n
}

// WriteText writes the report as a table.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	verb := "REMOVED"
	if r.DryRun {
		verb = "WOULD REMOVE"
	}
	fmt.Fprintf(tw, "KIND\tSCOPE\tAGE\tBEFORE\t%s\n", verb)
	for _, x := range r.Removed {
		scope := "server"
		if x.WorkspaceID != "" {
			scope = "workspace " + x.WorkspaceID
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", x.Kind, scope, x.Age, x.Before.UTC().Format(time.RFC3339), x.Rows)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", s.Kind, s.Reason)
	}
	if r.Checkpoint != nil {
		fmt.Fprintf(w, "wal checkpoint: %d frames, busy=%t\n", r.Checkpoint.Frames, r.Checkpoint.Busy)
	}
	if r.VacuumedPages > 0 {
		fmt.Fprintf(w, "incremental vacuum: %d pages returned to the file system\n", r.VacuumedPages)
	}
	if r.VacuumNote != "" {
		fmt.Fprintln(w, "vacuum:", r.VacuumNote)
	}
	_, err := fmt.Fprintf(w, "total %d rows in %s\n", r.Total(), r.Took.Round(time.Millisecond))
	return err
}

// pass is one Step call: a kind, a scope and its cut-off.
type pass struct {
	kind  Kind
	scope Scope
	age   time.Duration
}

// plan lists the passes of the policies and overrides, in Kinds order.
func (p *Pruner) plan(ctx context.Context) ([]pass, error) {
	overrides, err := p.opts.Overrides.list(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []pass
	for _, k := range Kinds {
		var except []string
		var own []pass
		if k.PerWorkspace() {
			for ws, ages := range overrides {
				v, ok := ages[k]
				if !ok {
					continue
				}
				except = append(except, ws)
				if d, err := ParseAge(v); err == nil && d > 0 {
					own = append(own, pass{kind: k, scope: Scope{WorkspaceID: ws}, age: d})
				}
			}
		}
		if d := p.opts.Policy[k]; d > 0 {
			out = append(out, pass{kind: k, scope: Scope{Except: except}, age: d})
		}
		out = append(out, own...)
	}
	return out, nil
}

// Run applies every policy once. It carries on past a kind that fails
// and returns the errors joined with what it did.
func (p *Pruner) Run(ctx context.Context, dryRun bool) (Report, error) {
	start := p.opts.Now()
	r := Report{DryRun: dryRun, Removed: []Removed{}}
	passes, err := p.plan(ctx)
	if err != nil {
		return r, err
	}
	var errs []error
	skipped := map[Kind]bool{}
	for _, ps := range passes {
		step := p.steps[ps.kind]
		if step == nil {
			if !skipped[ps.kind] {
				skipped[ps.kind] = true
				reason := "no step removes this kind"
				if ps.kind == UsageDetail {
					reason = "no usage rollup is wired (detail is only deleted once folded into daily totals)"
				}
				r.Skipped = append(r.Skipped, Skipped{Kind: ps.kind, Reason: reason})
			}
			continue
		}
		before := start.Add(-ps.age)
		n, err := step(ctx, ps.scope, before, dryRun)
		if err != nil {
			errs = append(errs, wrap(ps.kind, err))
		}
		r.Removed = append(r.Removed, Removed{Kind: ps.kind, WorkspaceID: ps.scope.WorkspaceID, Age: FormatAge(ps.age), Before: before, Rows: n})
		if n > 0 {
			p.opts.Logger.Info("retention_pruned", "kind", string(ps.kind), "workspace_id", ps.scope.WorkspaceID,
				"before", before.UTC().Format(time.RFC3339), "rows", n, "dry_run", dryRun)
		}
	}
	if !dryRun && !p.opts.NoVacuum && p.db.Kind() == database.SQLite && r.Total() > 0 {
		if err := p.compact(ctx, &r); err != nil {
			errs = append(errs, err)
		}
	}
	r.Took = p.opts.Now().Sub(start)
	return r, errors.Join(errs...)
}

// compact checkpoints, returns the freed pages when the file's mode
// allows it, and checkpoints again so that the file shrinks now.
func (p *Pruner) compact(ctx context.Context, r *Report) error {
	if _, err := p.db.Checkpoint(ctx); err != nil {
		return err
	}
	freed, err := p.db.IncrementalVacuum(ctx)
	switch {
	case errors.Is(err, database.ErrNoIncrementalVacuum):
		r.VacuumNote = "the freed pages stay in the file for reuse: its auto_vacuum mode is not incremental (a database created before this version); run `agentcraft db vacuum` once with serve stopped to convert it"
	case err != nil:
		return err
	}
	r.VacuumedPages = freed
	cp, err := p.db.Checkpoint(ctx)
	if err != nil {
		return err
	}
	r.Checkpoint = &cp
	if cp.Busy {
		r.VacuumNote = strings.TrimSpace(r.VacuumNote + " the WAL was not truncated: a reader kept an old snapshot; the next checkpoint does it")
	}
	return nil
}

package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// TriggerKind says what starts a trigger's runs.
type TriggerKind string

// Trigger kinds.
const (
	// TriggerSchedule fires on the ticks of a cron schedule.
	TriggerSchedule TriggerKind = "schedule"
	// TriggerWebhook fires on each signed POST /hooks/{id}.
	TriggerWebhook TriggerKind = "webhook"
)

// Valid reports whether k is a known kind.
func (k TriggerKind) Valid() bool { return k == TriggerSchedule || k == TriggerWebhook }

// MisfirePolicy says what a schedule does with the ticks that passed while
// no scheduler ran (downtime).
type MisfirePolicy string

// Misfire policies.
const (
	// MisfireSkip fires only the ticks from now on (the default).
	MisfireSkip MisfirePolicy = "skip"
	// MisfireCatchUpOnce fires one run for all the missed ticks, at the
	// latest of them, then goes on from now.
	MisfireCatchUpOnce MisfirePolicy = "catch_up_once"
)

// Valid reports whether p is a known policy.
func (p MisfirePolicy) Valid() bool { return p == MisfireSkip || p == MisfireCatchUpOnce }

// Trigger starts runs of a workflow or an agent: on a cron schedule, or on
// a signed webhook delivery.
type Trigger struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// Name is unique within the workspace.
	Name string      `json:"name"`
	Kind TriggerKind `json:"kind"`
	// WorkflowID or Agent is the target, exactly one of them: the stored
	// workflow whose newest version runs, or the agent (by name) run as a
	// one-node durable run.
	WorkflowID string `json:"workflow_id,omitempty"`
	Agent      string `json:"agent,omitempty"`
	// Input is the run's {{input}} for a schedule (JSON; nil for none). A
	// webhook's run gets the delivered body instead.
	Input json.RawMessage `json:"input,omitempty"`
	// Schedule is the cron spec of a schedule trigger (package trigger
	// parses it), Timezone the IANA zone its ticks are read in ("" is
	// UTC), Misfire what happens to ticks missed during downtime.
	Schedule string        `json:"schedule,omitempty"`
	Timezone string        `json:"timezone,omitempty"`
	Misfire  MisfirePolicy `json:"misfire,omitempty"`
	Enabled  bool          `json:"enabled"`
	// SecretCiphertext is a webhook trigger's signing secret sealed by
	// package secret (never the secret in clear), KeyID the master key
	// that sealed it; both empty for a schedule.
	SecretCiphertext []byte    `json:"-"`
	KeyID            string    `json:"-"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// Validate reports whether t can be written. Package trigger checks the
// cron spec, the time zone and that the target exists.
func (t Trigger) Validate() error {
	switch {
	case t.WorkspaceID == "":
		return fmt.Errorf("%w: trigger workspace id is empty; set Trigger.WorkspaceID", ErrInvalid)
	case strings.TrimSpace(t.Name) == "":
		return fmt.Errorf("%w: trigger name is empty; set Trigger.Name", ErrInvalid)
	case !t.Kind.Valid():
		return fmt.Errorf("%w: trigger %q kind %q is unknown; use schedule or webhook", ErrInvalid, t.Name, t.Kind)
	case (t.WorkflowID == "") == (t.Agent == ""):
		return fmt.Errorf("%w: trigger %q needs exactly one target; set WorkflowID or Agent", ErrInvalid, t.Name)
	case len(t.Input) > 0 && !json.Valid(t.Input):
		return fmt.Errorf("%w: trigger %q input is not valid JSON", ErrInvalid, t.Name)
	case t.Kind == TriggerSchedule && strings.TrimSpace(t.Schedule) == "":
		return fmt.Errorf("%w: schedule trigger %q has no schedule; set Trigger.Schedule to a cron spec", ErrInvalid, t.Name)
	case t.Misfire != "" && !t.Misfire.Valid():
		return fmt.Errorf("%w: trigger %q misfire policy %q is unknown; use skip or catch_up_once", ErrInvalid, t.Name, t.Misfire)
	case t.Kind == TriggerWebhook && (len(t.SecretCiphertext) == 0 || t.KeyID == ""):
		return fmt.Errorf("%w: webhook trigger %q has no sealed secret; seal one with secret.Box and set SecretCiphertext and KeyID", ErrInvalid, t.Name)
	}
	return nil
}

// TriggerFire records one tick of a schedule that fired. (TriggerID, Tick)
// is unique: however many schedulers see the tick, one insert wins, and
// only its process starts the run; a fire left with neither a run nor an
// error (Triggers.Unstarted) is finished by any scheduler later.
type TriggerFire struct {
	WorkspaceID string    `json:"workspace_id"`
	TriggerID   string    `json:"trigger_id"`
	Tick        time.Time `json:"tick"`
	// Missed is how many earlier ticks this fire stands for
	// (catch_up_once after downtime); 0 for an on-time tick.
	Missed int `json:"missed,omitempty"`
	// Owner names the process that won the tick.
	Owner string `json:"owner"`
	// RunID is the run it started, set once started; Error says why no
	// run started.
	RunID     string    `json:"run_id,omitempty"`
	Error     string    `json:"error,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// TriggerDelivery records one webhook delivery. (TriggerID, DeliveryID) is
// unique, so a redelivery finds the first one's run instead of starting
// another.
type TriggerDelivery struct {
	WorkspaceID string `json:"workspace_id"`
	TriggerID   string `json:"trigger_id"`
	DeliveryID  string `json:"delivery_id"`
	// RunID is empty while the first delivery is starting its run.
	RunID     string    `json:"run_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Triggers stores triggers, the ticks they fired and the webhook
// deliveries they accepted.
type Triggers interface {
	// Create inserts t (ID assigned when empty, Misfire defaulting to
	// skip) and returns it as stored. A name taken in the workspace gives
	// ErrConflict; an unknown workspace ErrNotFound.
	Create(ctx context.Context, t Trigger) (Trigger, error)
	// Get returns the workspace's trigger, sealed secret included.
	Get(ctx context.Context, workspaceID, id string) (Trigger, error)
	// Lookup returns the trigger with id in whichever workspace holds it:
	// the one read without a workspace, because a webhook's URL names
	// only the trigger (its signature then proves the sender).
	Lookup(ctx context.Context, id string) (Trigger, error)
	// List returns the workspace's triggers ordered by name.
	List(ctx context.Context, workspaceID string) ([]Trigger, error)
	// Schedules returns the enabled schedule triggers of every workspace,
	// ordered by id: what a scheduler runs.
	Schedules(ctx context.Context) ([]Trigger, error)
	// Version changes whenever a trigger of any workspace is created,
	// updated or deleted: a cheap check before reloading Schedules.
	Version(ctx context.Context) (string, error)
	// Update replaces every field of the trigger with t.ID in
	// t.WorkspaceID except CreatedAt, stamps UpdatedAt and returns it.
	Update(ctx context.Context, t Trigger) (Trigger, error)
	// Delete removes the trigger with its fires and deliveries.
	Delete(ctx context.Context, workspaceID, id string) error

	// Fire records the tick f.Tick of f.TriggerID for f.Owner. It reports
	// false, with the stored fire, when the tick was recorded already (by
	// another process): that process starts the run, this one does not.
	Fire(ctx context.Context, f TriggerFire) (TriggerFire, bool, error)
	// FireDone sets the run (or the error) of a recorded tick.
	FireDone(ctx context.Context, f TriggerFire) error
	// Unstarted returns up to limit fires of every workspace that record
	// neither a run nor an error and were created before before, oldest
	// first (limit 0 means 100): ticks whose winner stopped (crashed, or
	// failed to start the run for a reason that may pass) before it
	// recorded how the run went, for a scheduler to finish.
	Unstarted(ctx context.Context, before time.Time, limit int) ([]TriggerFire, error)
	// Fires returns up to limit of the trigger's fires, newest tick first
	// (limit 0 means 100).
	Fires(ctx context.Context, workspaceID, triggerID string, limit int) ([]TriggerFire, error)

	// Deliver records a delivery. It reports false, with the stored
	// delivery, when the trigger has one with that id already.
	Deliver(ctx context.Context, d TriggerDelivery) (TriggerDelivery, bool, error)
	// DeliveryDone sets the run of a recorded delivery.
	DeliveryDone(ctx context.Context, d TriggerDelivery) error
	// Forget deletes a delivery whose run could not start, so that the
	// sender's retry may start it.
	Forget(ctx context.Context, workspaceID, triggerID, deliveryID string) error
}

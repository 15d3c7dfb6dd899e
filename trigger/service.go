package trigger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentcraftlab/agentcraft/audit"
	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
)

// FieldError is bad input to a trigger: Field names the request field
// (name, kind, workflow, agent, schedule, timezone, misfire, input) and
// Message says what is wrong and how to fix it.
type FieldError struct {
	Field, Message string
}

func (e *FieldError) Error() string { return "trigger: " + e.Field + ": " + e.Message }

// Agents finds a workspace's agents (platform.Platform does).
type Agents interface {
	GetAgent(ctx context.Context, workspaceID, idOrName string) (store.Agent, error)
}

// Options configure a Service.
type Options struct {
	// Agents resolves agent targets; nil refuses them ("agent" field).
	Agents Agents
	// Audit records trigger.create, .update, .delete and .rotate_secret;
	// pass platform.Platform.RecordAudit. Default: record nothing.
	Audit func(context.Context, store.AuditEvent)
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
}

// Service creates, changes and deletes triggers, and starts their runs.
type Service struct {
	st   store.Store
	runs *controlplane.Service
	box  *secret.Box
	opts Options
}

// New returns a Service starting runs through runs and sealing webhook
// secrets with box.
func New(st store.Store, runs *controlplane.Service, box *secret.Box, opts *Options) (*Service, error) {
	if st == nil || runs == nil || box == nil {
		return nil, errors.New("trigger: New needs a store, a run service and a secret box")
	}
	s := &Service{st: st, runs: runs, box: box}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Audit == nil {
		s.opts.Audit = func(context.Context, store.AuditEvent) {}
	}
	if s.opts.Logger == nil {
		s.opts.Logger = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Spec is what a person sets on a trigger. On Update, nil fields keep the
// stored value.
type Spec struct {
	Name *string `json:"name,omitempty"`
	// Kind is "schedule" or "webhook"; it cannot change on Update.
	Kind *string `json:"kind,omitempty"`
	// Workflow (an id or a name) or Agent (a name) is the target.
	Workflow *string `json:"workflow,omitempty"`
	Agent    *string `json:"agent,omitempty"`
	// Input is nil when left out; JSON null (kept as "null", which a
	// pointer would not: encoding/json sets a pointer to nil for null)
	// clears it.
	Input    json.RawMessage `json:"input,omitempty"`
	Schedule *string         `json:"schedule,omitempty"`
	Timezone *string         `json:"timezone,omitempty"`
	Misfire  *string         `json:"misfire,omitempty"`
	// Enabled defaults to true on Create.
	Enabled *bool `json:"enabled,omitempty"`
}

// apply sets spec onto t and checks the result, resolving the target in
// workspace ws.
func (s *Service) apply(ctx context.Context, t *store.Trigger, sp Spec, creating bool) error {
	if sp.Name != nil {
		t.Name = strings.TrimSpace(*sp.Name)
	}
	if t.Name == "" {
		return &FieldError{Field: "name", Message: "name is empty; give the trigger a name unique in the workspace"}
	}
	if sp.Kind != nil {
		k := store.TriggerKind(strings.TrimSpace(*sp.Kind))
		if !creating && k != t.Kind {
			return &FieldError{Field: "kind", Message: fmt.Sprintf("kind cannot change (it is %s); delete the trigger and create another", t.Kind)}
		}
		t.Kind = k
	}
	if !t.Kind.Valid() {
		return &FieldError{Field: "kind", Message: fmt.Sprintf("kind %q is unknown; use schedule or webhook", t.Kind)}
	}
	if sp.Workflow != nil || sp.Agent != nil {
		wf, ag := "", ""
		if sp.Workflow != nil {
			wf = strings.TrimSpace(*sp.Workflow)
		}
		if sp.Agent != nil {
			ag = strings.TrimSpace(*sp.Agent)
		}
		switch {
		case wf != "" && ag != "":
			return &FieldError{Field: "agent", Message: "both workflow and agent are set; a trigger runs one target, set only one"}
		case wf != "":
			row, err := s.runs.FindWorkflow(ctx, t.WorkspaceID, wf)
			if errors.Is(err, store.ErrNotFound) {
				return &FieldError{Field: "workflow", Message: fmt.Sprintf("workflow %q is not a workflow of this workspace; give the id or name of a saved workflow", wf)}
			}
			if err != nil {
				return err
			}
			t.WorkflowID, t.Agent = row.ID, ""
		case ag != "":
			if err := s.checkAgent(ctx, t.WorkspaceID, ag); err != nil {
				return err
			}
			t.WorkflowID, t.Agent = "", ag
		default:
			t.WorkflowID, t.Agent = "", ""
		}
	}
	if t.WorkflowID == "" && t.Agent == "" {
		return &FieldError{Field: "workflow", Message: "no target; set workflow (a saved workflow's id or name) or agent (an agent's name)"}
	}
	if sp.Input != nil {
		in := sp.Input
		if len(in) > 0 && !json.Valid(in) {
			return &FieldError{Field: "input", Message: "input is not valid JSON"}
		}
		if string(in) == "null" {
			in = nil
		}
		t.Input = in
	}
	if sp.Schedule != nil {
		t.Schedule = strings.TrimSpace(*sp.Schedule)
	}
	if sp.Timezone != nil {
		t.Timezone = strings.TrimSpace(*sp.Timezone)
	}
	if sp.Misfire != nil {
		t.Misfire = store.MisfirePolicy(strings.TrimSpace(*sp.Misfire))
	}
	if t.Misfire == "" {
		t.Misfire = store.MisfireSkip
	}
	if !t.Misfire.Valid() {
		return &FieldError{Field: "misfire", Message: fmt.Sprintf("misfire %q is unknown; use skip (fire only ticks from now on) or catch_up_once (one run for all ticks missed while down)", t.Misfire)}
	}
	switch t.Kind {
	case store.TriggerSchedule:
		if _, err := ParseSchedule(t.Schedule, t.Timezone); err != nil {
			return err
		}
	case store.TriggerWebhook:
		if t.Schedule != "" || t.Timezone != "" {
			return &FieldError{Field: "schedule", Message: "a webhook trigger has no schedule or timezone; leave them out, or use kind schedule"}
		}
	}
	if sp.Enabled != nil {
		t.Enabled = *sp.Enabled
	} else if creating {
		t.Enabled = true
	}
	return nil
}

func (s *Service) checkAgent(ctx context.Context, workspaceID, name string) error {
	if s.opts.Agents == nil {
		return &FieldError{Field: "agent", Message: "this server cannot run agents from triggers; target a workflow instead"}
	}
	_, err := s.opts.Agents.GetAgent(ctx, workspaceID, name)
	if errors.Is(err, store.ErrNotFound) {
		return &FieldError{Field: "agent", Message: fmt.Sprintf("agent %q is not an agent of this workspace; give the name of one (GET /api/agents)", name)}
	}
	return err
}

// associatedData binds a sealed webhook secret to its trigger, so a
// ciphertext copied onto another row does not open.
func associatedData(workspaceID, triggerID string) []byte {
	return secret.Bind("agentcraft/trigger-secret/v1", workspaceID, triggerID)
}

// newSecret seals a fresh signing secret onto t and returns it in clear.
// The secret is the text itself (the HMAC key is its bytes), so that
// `openssl dgst -hmac "$SECRET"` signs with it.
func (s *Service) newSecret(t *store.Trigger) (string, error) {
	b := make([]byte, 32)
	rand.Read(b) // never fails since Go 1.24
	plain := "whsec_" + hex.EncodeToString(b)
	ct, err := s.box.Seal([]byte(plain), associatedData(t.WorkspaceID, t.ID))
	if err != nil {
		return "", fmt.Errorf("trigger: seal secret: %w", err)
	}
	t.SecretCiphertext, t.KeyID = ct, s.box.KeyID()
	return plain, nil
}

// Create validates sp and stores a new trigger in workspace ws. A webhook
// trigger gets a signing secret, returned here once and never again
// (RotateSecret makes a new one).
func (s *Service) Create(ctx context.Context, ws string, sp Spec) (store.Trigger, string, error) {
	t := store.Trigger{ID: store.NewID(), WorkspaceID: ws}
	if err := s.apply(ctx, &t, sp, true); err != nil {
		return store.Trigger{}, "", err
	}
	var plain string
	if t.Kind == store.TriggerWebhook {
		var err error
		if plain, err = s.newSecret(&t); err != nil {
			return store.Trigger{}, "", err
		}
	}
	got, err := s.st.Triggers().Create(ctx, t)
	if err != nil {
		return store.Trigger{}, "", err
	}
	s.audit(ctx, "trigger.create", got, nil)
	return got, plain, nil
}

// Get returns the workspace's trigger.
func (s *Service) Get(ctx context.Context, ws, id string) (store.Trigger, error) {
	return s.st.Triggers().Get(ctx, ws, id)
}

// List returns the workspace's triggers by name.
func (s *Service) List(ctx context.Context, ws string) ([]store.Trigger, error) {
	return s.st.Triggers().List(ctx, ws)
}

// Fires returns the trigger's latest fired ticks.
func (s *Service) Fires(ctx context.Context, ws, id string, limit int) ([]store.TriggerFire, error) {
	if _, err := s.Get(ctx, ws, id); err != nil {
		return nil, err
	}
	return s.st.Triggers().Fires(ctx, ws, id, limit)
}

// Update applies sp (nil fields kept) to the trigger and records
// trigger.update with the fields changed.
func (s *Service) Update(ctx context.Context, ws, id string, sp Spec) (store.Trigger, error) {
	t, err := s.Get(ctx, ws, id)
	if err != nil {
		return store.Trigger{}, err
	}
	if err := s.apply(ctx, &t, sp, false); err != nil {
		return store.Trigger{}, err
	}
	got, err := s.st.Triggers().Update(ctx, t)
	if err != nil {
		return store.Trigger{}, err
	}
	s.audit(ctx, "trigger.update", got, map[string]any{"fields": sp.fields()})
	return got, nil
}

// fields names the fields sp sets, for the audit record (never values:
// input may hold anything).
func (sp Spec) fields() []any {
	var out []any
	for _, f := range []struct {
		name string
		set  bool
	}{{"name", sp.Name != nil}, {"kind", sp.Kind != nil}, {"workflow", sp.Workflow != nil}, {"agent", sp.Agent != nil},
		{"input", sp.Input != nil}, {"schedule", sp.Schedule != nil}, {"timezone", sp.Timezone != nil}, {"misfire", sp.Misfire != nil},
		{"enabled", sp.Enabled != nil}} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// RotateSecret gives a webhook trigger a new signing secret, returned once;
// the old one stops verifying at once.
func (s *Service) RotateSecret(ctx context.Context, ws, id string) (store.Trigger, string, error) {
	t, err := s.Get(ctx, ws, id)
	if err != nil {
		return store.Trigger{}, "", err
	}
	if t.Kind != store.TriggerWebhook {
		return store.Trigger{}, "", &FieldError{Field: "kind", Message: "only a webhook trigger has a secret"}
	}
	plain, err := s.newSecret(&t)
	if err != nil {
		return store.Trigger{}, "", err
	}
	got, err := s.st.Triggers().Update(ctx, t)
	if err != nil {
		return store.Trigger{}, "", err
	}
	s.audit(ctx, "trigger.rotate_secret", got, nil)
	return got, plain, nil
}

// Delete removes the trigger with its fires and deliveries (its runs stay).
func (s *Service) Delete(ctx context.Context, ws, id string) error {
	t, err := s.Get(ctx, ws, id)
	if err != nil {
		return err
	}
	if err := s.st.Triggers().Delete(ctx, ws, id); err != nil {
		return err
	}
	s.audit(ctx, "trigger.delete", t, nil)
	return nil
}

func (s *Service) audit(ctx context.Context, action string, t store.Trigger, details map[string]any) {
	d := map[string]any{"name": t.Name, "kind": string(t.Kind)}
	for k, v := range details {
		d[k] = v
	}
	s.opts.Audit(ctx, store.AuditEvent{WorkspaceID: t.WorkspaceID, Action: action, Target: "trigger:" + t.ID, Details: audit.Details(d)})
}

// Actor is the actor a trigger's runs act as: "system:trigger:<id>".
func Actor(triggerID string) string { return "system:trigger:" + triggerID }

// start starts the trigger's run with input through the run seam: the
// workflow's newest version, or the agent as a one-node durable run. id
// names the run ("" for a new id); a run with that id existing already is
// store.ErrConflict.
func (s *Service) start(ctx context.Context, t store.Trigger, id string, input any) (store.Run, error) {
	req := controlplane.StartRequest{ID: id, WorkspaceID: t.WorkspaceID, TriggerID: t.ID, Input: controlplane.RunInput{Input: input}}
	if t.WorkflowID != "" {
		wf, err := s.runs.Workflow(ctx, t.WorkspaceID, t.WorkflowID)
		if err != nil {
			return store.Run{}, fmt.Errorf("trigger %q: workflow %s: %w", t.Name, t.WorkflowID, err)
		}
		req.WorkflowID, req.WorkflowVersion, req.Definition = wf.ID, wf.Version, wf.Definition
	} else {
		var au *store.AgentAutonomous
		if s.opts.Agents != nil {
			a, err := s.opts.Agents.GetAgent(ctx, t.WorkspaceID, t.Agent)
			if err != nil {
				return store.Run{}, fmt.Errorf("trigger %q: agent %q: %w", t.Name, t.Agent, err)
			}
			au = a.Params.Autonomous
		}
		def, err := json.Marshal(controlplane.AgentDefinition(t.Agent, au))
		if err != nil {
			return store.Run{}, err
		}
		req.Definition = def
	}
	return s.runs.Start(ctx, req)
}

// inputOf decodes a stored JSON input (nil for none).
func inputOf(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// approval parks the run until a person with the right role approves the
// step it gates.
func approval() workflow.Kind {
	return workflow.Kind{
		Type:               "approval",
		Title:              "Approval",
		Category:           workflow.CategoryHuman,
		WaitsForHuman:      true,
		Example:            map[string]any{"step": "create_event", "summary": "Create the event", "capability": "medium"},
		Doc:                "Asks a person with the role for the capability to approve the step it names; rejection or expiry ends the run.",
		Execute:            execApproval,
		IsExecutable:       true,
		RequiresImperative: true,
		Config: []workflow.ConfigKey{
			{Name: "step", Type: workflow.TypeString, Required: true, Doc: "id of the tool node this approval lets run"},
			{Name: "summary", Type: workflow.TypeTemplate, Required: true, Doc: "what will be done, in words, for the approver"},
			{Name: "capability", Type: workflow.TypeString, Enum: []string{"low", "medium", "high"}, Default: "medium", Doc: "the step's capability: who may approve it (approve_medium, approve_high)"},
			{Name: "ttl", Type: workflow.TypeDuration, Doc: "how long the approval may be decided; default: the workspace's approval TTL"},
		},
	}
}

// execApproval asks Services.Actions for the approval of the gated step
// (once per step: a resumed run finds the approval it asked for) and
// parks the run while it is pending. A decision made while the run was
// not parked (a crash between asking and parking) is read here, so the
// run neither waits for a decision already made nor asks again.
func execApproval(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
	if x.Services.Actions == nil {
		return workflow.Result{}, errors.New("approval nodes need the task service, which this server does not run")
	}
	step, _ := x.Node.Config["step"].(string)
	s, err := x.ConfigTemplate("summary", "")
	if err != nil {
		return workflow.Result{}, err
	}
	summary, _ := textOf(s)
	capability, _ := x.Node.Config["capability"].(string)
	if capability == "" {
		capability = "medium"
	}
	var ttl time.Duration
	if t, ok := x.Node.Config["ttl"].(string); ok {
		if ttl, err = time.ParseDuration(t); err != nil {
			return workflow.Result{}, fmt.Errorf("config.ttl: %w", err)
		}
	}
	st, err := x.Services.Actions.Approval(ctx, workflow.ApprovalRequest{WorkspaceID: x.WorkspaceID, RunID: x.RunID,
		NodeID: x.Node.ID, StepKey: siblingKey(x.Key, step), Summary: summary, Capability: capability, TTL: ttl})
	if err != nil {
		return workflow.Result{}, fmt.Errorf("approval of %s: %w", step, err)
	}
	switch st.Status {
	case workflow.ApprovalPending:
		return workflow.Result{Wait: &workflow.Wait{Prompt: summary, Deadline: st.ExpiresAt, ApprovalID: st.ID}}, nil
	case workflow.ApprovalApproved:
		return workflow.Result{Output: map[string]any{"approval_id": st.ID, "approved": true, "approver": st.Approver}}, nil
	}
	return workflow.Result{}, fmt.Errorf("approval %s of %s was %s", st.ID, step, st.Status)
}

// siblingKey is the execution key of node id in the same scope as key:
// an approval inside a loop's third pass gates that pass's step.
func siblingKey(key, id string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i+1] + id
	}
	return id
}

package controlplane_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// TestWorkflowCRUDRecordsAudit: every change to a workflow made through
// the service records its audit event, so no surface has to remember to.
func TestWorkflowCRUDRecordsAudit(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	var mu sync.Mutex
	var got []store.AuditEvent
	svc := controlplane.New(st, workflowtest.Engine(t, workflow.Services{}), controlplane.Options{
		Audit: func(_ context.Context, e store.AuditEvent) { mu.Lock(); got = append(got, e); mu.Unlock() },
	})
	ctx := t.Context()
	def, err := workflow.Parse([]byte(humanFlow))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := svc.CreateWorkflow(ctx, ws, def)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SaveWorkflow(ctx, ws, wf.ID, def); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RestoreWorkflow(ctx, ws, wf.ID, 1); err != nil {
		t.Fatal(err)
	}
	if found, err := svc.FindWorkflow(ctx, ws, wf.Name); err != nil || found.ID != wf.ID {
		t.Fatalf("FindWorkflow by name = %v, %v", found.ID, err)
	}
	if err := svc.DeleteWorkflow(ctx, ws, wf.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.FindWorkflow(ctx, ws, wf.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FindWorkflow after delete = %v, want ErrNotFound", err)
	}
	want := []struct {
		action  string
		details map[string]any
	}{
		{"workflow.create", map[string]any{"name": wf.Name, "version": float64(1)}},
		{"workflow.update", map[string]any{"name": wf.Name, "version": float64(2)}},
		{"workflow.restore", map[string]any{"name": wf.Name, "version": float64(3), "restored_version": float64(1)}},
		{"workflow.delete", nil},
	}
	if len(got) != len(want) {
		t.Fatalf("recorded %d events, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		e := got[i]
		if e.Action != w.action || e.Target != "workflow:"+wf.ID {
			t.Errorf("event %d = %s %s, want %s workflow:%s", i, e.Action, e.Target, w.action, wf.ID)
		}
		var d map[string]any
		if len(e.Details) > 0 {
			if err := json.Unmarshal(e.Details, &d); err != nil {
				t.Fatal(err)
			}
		}
		if len(d) != len(w.details) {
			t.Errorf("%s details = %s, want %v", e.Action, e.Details, w.details)
		}
		for k, v := range w.details {
			if d[k] != v {
				t.Errorf("%s details[%s] = %v, want %v", e.Action, k, d[k], v)
			}
		}
	}
}

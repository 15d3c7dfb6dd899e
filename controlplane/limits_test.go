package controlplane_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// chain is a workflow of n template nodes that each output the input.
func chain(n int, settings string) json.RawMessage {
	nodes := []string{`{"id":"start","type":"start"}`}
	var edges []string
	prev := "start"
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		nodes = append(nodes, fmt.Sprintf(`{"id":%q,"type":"code","config":{"mode":"template","template":"{{input}}"}}`, id))
		edges = append(edges, fmt.Sprintf(`{"id":"e%d","source":%q,"target":%q}`, i, prev, id))
		prev = id
	}
	nodes = append(nodes, `{"id":"end","type":"end"}`)
	edges = append(edges, fmt.Sprintf(`{"id":"last","source":%q,"target":"end"}`, prev))
	return json.RawMessage(fmt.Sprintf(`{"name":"chain","nodes":[%s],"edges":[%s],"settings":%s}`,
		strings.Join(nodes, ","), strings.Join(edges, ","), settings))
}

// TestCeilings: max_steps 100000000 once wrote 161k checkpoints in 15 s;
// a definition above the server's ceilings is refused before any run
// row exists, naming the setting.
func TestCeilings(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	eng := workflowtest.Engine(t, workflow.Services{})
	svc := controlplane.New(st, eng, controlplane.Options{Owner: "p1", SingleProcess: true})
	for _, tc := range []struct{ settings, path string }{
		{`{"max_steps": 100000000}`, "settings.max_steps"},
		{`{"timeout": "48h"}`, "settings.timeout"},
	} {
		_, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: chain(1, tc.settings)})
		var inv *workflow.InvalidError
		if !errors.As(err, &inv) || len(inv.Problems) != 1 || inv.Problems[0].Path != tc.path {
			t.Errorf("Start with settings %s = %v; want one problem at %s", tc.settings, err, tc.path)
		}
	}
	if runs, _ := st.Runs().List(t.Context(), ws, store.RunFilter{}); len(runs) != 0 {
		t.Errorf("refused starts recorded %d runs", len(runs))
	}
	// At the ceiling is fine; the ceilings can be raised or removed.
	run, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: chain(1, `{"max_steps": 10000, "timeout": "24h"}`)})
	if err != nil {
		t.Fatalf("Start at the default ceilings = %v", err)
	}
	waitStatus(t, st, ws, run.ID, store.RunSucceeded)
	open := controlplane.New(st, eng, controlplane.Options{Owner: "p2", MaxStepsCeiling: -1, TimeoutCeiling: 72 * time.Hour})
	if _, err := open.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: chain(1, `{"max_steps": 100000000, "timeout": "48h"}`)}); err != nil {
		t.Errorf("Start with the ceilings lifted = %v", err)
	}
	svc.Wait()
	open.Wait()
}

// TestStorageQuota: a run that would store more than the workspace's
// quota fails saying so, and the next Start is refused with
// ErrStorageQuota; another workspace is not affected.
func TestStorageQuota(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "db"))
	ws := workspace(t, st)
	eng := workflowtest.Engine(t, workflow.Services{})
	const quota = 40_000
	svc := controlplane.New(st, eng, controlplane.Options{Owner: "p1", SingleProcess: true, StorageQuota: quota})
	input := strings.Repeat("x", 5000)
	// 10 nodes × 5 kB outputs, each also in its node_finished event:
	// about 100 kB, past the 40 kB quota.
	run, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: chain(10, `{}`), Input: controlplane.RunInput{Input: input}})
	if err != nil {
		t.Fatal(err)
	}
	got := waitStatus(t, st, ws, run.ID, store.RunFailed, store.RunSucceeded)
	if got.Status != store.RunFailed || !strings.Contains(got.Error, "storage quota exceeded") {
		t.Fatalf("run = %s (%q); want failed on the storage quota", got.Status, got.Error)
	}
	used, err := st.Runs().StoredBytes(t.Context(), ws)
	if err != nil {
		t.Fatal(err)
	}
	if used > quota+20_000 {
		t.Errorf("the workspace stores %d bytes; the run should have stopped near the %d-byte quota", used, quota)
	}
	// Fill the rest with a small run, then nothing more starts.
	for used < quota {
		r, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: chain(1, `{}`), Input: controlplane.RunInput{Input: input}})
		if err != nil {
			break
		}
		waitStatus(t, st, ws, r.ID, store.RunFailed, store.RunSucceeded)
		if used, err = st.Runs().StoredBytes(t.Context(), ws); err != nil {
			t.Fatal(err)
		}
	}
	_, err = svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: ws, Definition: chain(1, `{}`)})
	if !errors.Is(err, controlplane.ErrStorageQuota) || !strings.Contains(err.Error(), "storage_quota_mib") {
		t.Errorf("Start over the quota = %v; want ErrStorageQuota naming workflows.storage_quota_mib", err)
	}
	if _, err := svc.Rerun(t.Context(), ws, run.ID, "c0"); !errors.Is(err, controlplane.ErrStorageQuota) {
		t.Errorf("Rerun over the quota = %v; want ErrStorageQuota", err)
	}
	other, err := st.Workspaces().GetOrCreate(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	r, err := svc.Start(t.Context(), controlplane.StartRequest{WorkspaceID: other.ID, Definition: chain(1, `{}`)})
	if err != nil {
		t.Fatalf("Start in another workspace = %v", err)
	}
	waitStatus(t, st, other.ID, r.ID, store.RunSucceeded)
	svc.Wait()
}

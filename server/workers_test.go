package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/store"
)

// TestListWorkers: GET /api/workers lists the registered workers, live or
// gone, with the leases they hold in the caller's workspace only; a lease
// owner with no row is listed as unregistered.
func TestListWorkers(t *testing.T) {
	e := newWorkflowEnv(t)
	ctx := t.Context()
	st := e.Store
	other, err := st.Workspaces().GetOrCreate(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	def := json.RawMessage(`{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"end","type":"end"}],"edges":[{"id":"e","source":"start","target":"end"}]}`)
	claim := func(ws, owner string) store.Run {
		r, err := st.Runs().Create(ctx, store.Run{WorkspaceID: ws, Definition: def})
		if err != nil {
			t.Fatal(err)
		}
		if r, err = st.Runs().Claim(ctx, ws, r.ID, owner, time.Minute, false); err != nil {
			t.Fatal(err)
		}
		return r
	}
	mine := claim(e.Workspace.ID, "w1")
	claim(other.ID, "w1")
	claim(other.ID, "old-binary") // another workspace's unregistered owner: not shown
	orphan := claim(e.Workspace.ID, "old-binary-2")
	started := time.Now().Add(-time.Hour)
	if _, err := st.Workers().Beat(ctx, store.Worker{ID: "w1", Kind: "worker", Host: "h", PID: os.Getpid(), StartedAt: started,
		Runs: []store.HeldRun{{WorkspaceID: e.Workspace.ID, RunID: mine.ID, Node: "n03"}, {WorkspaceID: other.ID, RunID: "x"}}}); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Workers []controlplane.WorkerStatus `json:"workers"`
	}
	e.c.json("GET", "/api/workers", "", http.StatusOK, &out)
	if len(out.Workers) != 2 {
		t.Fatalf("workers = %+v, want w1 and old-binary-2", out.Workers)
	}
	w1, orph := out.Workers[0], out.Workers[1]
	if w1.ID != "w1" || w1.Status != controlplane.WorkerLive || w1.Kind != "worker" || len(w1.Leases) != 1 || len(w1.Runs) != 1 {
		t.Fatalf("w1 = %+v, want live with the one lease and run of this workspace", w1)
	}
	if l := w1.Leases[0]; l.RunID != mine.ID || l.Node != "n03" || l.Until == nil || l.Expired {
		t.Errorf("w1's lease = %+v, want run %s at node n03, not expired", l, mine.ID)
	}
	if orph.ID != "old-binary-2" || orph.Status != controlplane.WorkerUnregistered || len(orph.Leases) != 1 || orph.Leases[0].RunID != orphan.ID {
		t.Errorf("lease owner without a row = %+v, want unregistered with its lease", orph)
	}
}

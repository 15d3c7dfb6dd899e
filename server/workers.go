package server

import (
	"net/http"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
)

// registerWorkers adds GET /api/workers, the processes that execute runs
// (the workers registry, as `agentcraft workers` prints it), for
// workspace admins:
//
//	GET /api/workers → {"workers": [{"id": "w1", "status": "live", "kind": "worker",
//	    "host": ..., "pid": ..., "version": ..., "started_at": ..., "seen_at": ...,
//	    "runs": [...], "leases": [{"run_id": ..., "node": ..., "until": ...}]}]}
//
// Workers serve every workspace; the runs and leases listed are only the
// caller's workspace's.
func (s *Server) registerWorkers() {
	s.handle("GET /api/workers", identity.PermAdminWorkspace, s.needRuns(s.listWorkers))
}

func (s *Server) listWorkers(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Runs.Workers(r.Context())
	if err != nil {
		s.logger.Error("workers_list_failed", "error", err)
		storeError(w, err)
		return
	}
	ws := workspace(r)
	out := make([]controlplane.WorkerStatus, 0, len(list))
	for _, wk := range list {
		runs := []store.HeldRun{}
		for _, h := range wk.Runs {
			if h.WorkspaceID == ws {
				runs = append(runs, h)
			}
		}
		leases := []controlplane.Lease{}
		for _, l := range wk.Leases {
			if l.WorkspaceID == ws {
				leases = append(leases, l)
			}
		}
		if wk.Status == controlplane.WorkerUnregistered && len(leases) == 0 {
			continue // another workspace's lease owner
		}
		wk.Runs, wk.Leases = runs, leases
		out = append(out, wk)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"workers": out})
}

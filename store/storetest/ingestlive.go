package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

// testIngestLeases covers Claim and Live, and the "partial" final state.
func testIngestLeases(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("ClaimLive", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		ka := mustKnowledgeBase(t, st, a.ID, "ka", time.Time{})
		kb := mustKnowledgeBase(t, st, b.ID, "kb", time.Time{})
		j1 := mustIngestJob(t, st, a.ID, ka.ID)
		j2 := mustIngestJob(t, st, b.ID, kb.ID)
		j3 := mustIngestJob(t, st, a.ID, ka.ID)
		jobs := st.IngestJobs()

		got, err := jobs.Claim(ctx, a.ID, j1.ID, "worker-1")
		if err != nil {
			t.Fatalf("Claim(j1) = %v", err)
		}
		if got.Status != store.IngestRunning || got.ID != j1.ID || len(got.Files) != 1 {
			t.Errorf("Claim(j1) = %+v, want the job running", got)
		}
		if _, err := jobs.Claim(ctx, b.ID, j1.ID, "worker-1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Claim of another workspace's job = %v, want ErrNotFound", err)
		}
		if _, err := jobs.Claim(ctx, a.ID, j1.ID, ""); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Claim with no owner = %v, want ErrInvalid", err)
		}
		// A second claim (a restart taking its job back) is allowed.
		if _, err := jobs.Claim(ctx, a.ID, j1.ID, "worker-2"); err != nil {
			t.Fatalf("Claim(j1) again = %v", err)
		}
		j3.Status = store.IngestPartial
		j3.Files[0].Status, j3.Files[0].Error = "failed", "boom"
		if _, err := jobs.Update(ctx, j3); err != nil {
			t.Fatalf("Update to partial = %v", err)
		}
		if cur, err := jobs.Claim(ctx, a.ID, j3.ID, "worker-1"); !errors.Is(err, store.ErrConflict) || cur.Status != store.IngestPartial {
			t.Errorf("Claim of a partial job = %v (status %q), want ErrConflict and the job as stored", err, cur.Status)
		}
		if _, err := jobs.Update(ctx, j3); !errors.Is(err, store.ErrConflict) {
			t.Errorf("Update of a partial job = %v, want ErrConflict (partial is final)", err)
		}

		live, err := jobs.Live(ctx)
		if err != nil {
			t.Fatalf("Live() = %v", err)
		}
		type row struct {
			WS, ID, Owner string
			Status        store.IngestStatus
		}
		var rows []row
		for _, l := range live {
			rows = append(rows, row{l.WorkspaceID, l.ID, l.Owner, l.Status})
		}
		want := []row{{a.ID, j1.ID, "worker-2", store.IngestRunning}, {b.ID, j2.ID, "", store.IngestQueued}}
		if diff := cmp.Diff(want, rows); diff != "" {
			t.Errorf("Live() (-want +got):\n%s", diff)
		}
	})
}

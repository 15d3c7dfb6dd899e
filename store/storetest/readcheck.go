package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// ReadCheckLimit caps how many runs per workspace ReadCheck reads.
const ReadCheckLimit = 100_000

// ReadCheck reads every aggregate of every workspace of st, only reading,
// and fails t on a read error or a broken invariant: what a restored
// backup must pass before anyone trusts it. It checks that
//
//   - every workspace lists its API keys, agents, providers, credentials,
//     workflows (each workflow's versions numbered 1..Version, each
//     definition valid JSON), skills, knowledge bases, tasks, usage and
//     audit log (newest first, every page);
//   - every run has a valid status, a final run a FinishedAt and no lease
//     holder, a live one no FinishedAt; Get returns it as List does; its
//     events are numbered upward from 1 without repeats and its
//     checkpoints have unique keys; outputs are valid JSON.
//
// It returns the runs it read, by workspace id, for the caller's own
// checks.
func ReadCheck(t testing.TB, st store.Store) map[string][]store.Run {
	t.Helper()
	ctx := t.Context()
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("ReadCheck: Ping: %v", err)
	}
	wss, err := st.Workspaces().List(ctx)
	if err != nil {
		t.Fatalf("ReadCheck: list workspaces: %v", err)
	}
	if len(wss) == 0 {
		t.Error("ReadCheck: the store has no workspace")
	}
	out := map[string][]store.Run{}
	for _, ws := range wss {
		if got, err := st.Workspaces().Get(ctx, ws.ID); err != nil || got.ID != ws.ID {
			t.Errorf("ReadCheck: workspace %s: Get = %+v, %v", ws.ID, got, err)
		}
		must := func(what string, err error) {
			t.Helper()
			if err != nil {
				t.Errorf("ReadCheck: workspace %s: %s: %v", ws.Name, what, err)
			}
		}
		_, err := st.APIKeys().List(ctx, ws.ID)
		must("api keys", err)
		_, err = st.Agents().List(ctx, ws.ID)
		must("agents", err)
		_, err = st.Providers().List(ctx, ws.ID)
		must("providers", err)
		_, err = st.Credentials().List(ctx, ws.ID)
		must("credentials", err)
		_, err = st.Skills().List(ctx, ws.ID)
		must("skills", err)
		_, err = st.KnowledgeBases().List(ctx, ws.ID)
		must("knowledge bases", err)
		_, err = st.Tasks().List(ctx, ws.ID, store.TaskFilter{})
		must("tasks", err)
		_, err = st.Usage().List(ctx, ws.ID, time.Unix(0, 0), 0)
		must("usage", err)

		wfs, err := st.Workflows().List(ctx, ws.ID)
		must("workflows", err)
		for _, wf := range wfs {
			vs, err := st.Workflows().Versions(ctx, ws.ID, wf.ID)
			must("versions of workflow "+wf.Name, err)
			if len(vs) != wf.Version {
				t.Errorf("ReadCheck: workflow %s has %d versions, its row says %d", wf.Name, len(vs), wf.Version)
			}
			seen := map[int]bool{}
			for _, v := range vs {
				if v.Version < 1 || v.Version > wf.Version || seen[v.Version] {
					t.Errorf("ReadCheck: workflow %s: version %d out of 1..%d or repeated", wf.Name, v.Version, wf.Version)
				}
				seen[v.Version] = true
			}
		}

		var prev *store.AuditEvent
		f := store.AuditFilter{WorkspaceID: ws.ID, Limit: store.MaxAuditLimit}
		for {
			page, err := st.AuditLog().List(ctx, f)
			if err != nil {
				must("audit log", err)
				break
			}
			for i := range page.Events {
				e := page.Events[i]
				if prev != nil && e.CreatedAt.After(prev.CreatedAt) {
					t.Errorf("ReadCheck: audit log of %s out of order: %s after %s", ws.Name, e.ID, prev.ID)
				}
				if e.Details != nil && !json.Valid(e.Details) {
					t.Errorf("ReadCheck: audit event %s has details that are not JSON", e.ID)
				}
				prev = &e
			}
			if page.Next == "" {
				break
			}
			f.Cursor = page.Next
		}

		runs, err := st.Runs().List(ctx, ws.ID, store.RunFilter{Limit: ReadCheckLimit})
		must("runs", err)
		for _, r := range runs {
			checkRun(t, st, ws.ID, r)
		}
		out[ws.ID] = runs
	}
	return out
}

func checkRun(t testing.TB, st store.Store, wsID string, r store.Run) {
	t.Helper()
	ctx := t.Context()
	bad := func(format string, args ...any) {
		t.Helper()
		t.Errorf("ReadCheck: run %s (%s): "+format, append([]any{r.ID, r.Status}, args...)...)
	}
	switch {
	case !r.Status.Valid():
		bad("status is not one of the run statuses")
	case r.Status.Final() && r.FinishedAt == nil:
		bad("final without finished_at")
	case !r.Status.Final() && r.FinishedAt != nil:
		bad("live with finished_at %v", r.FinishedAt)
	case r.Status.Final() && r.LeaseOwner != "":
		bad("final but leased to %q", r.LeaseOwner)
	}
	if r.Output != nil && !json.Valid(r.Output) {
		bad("output is not JSON")
	}
	got, err := st.Runs().Get(ctx, wsID, r.ID)
	if err != nil || got.Status != r.Status || got.ID != r.ID {
		bad("Get = %s %s, %v; List said %s", got.ID, got.Status, err, r.Status)
	}
	var last int64
	for {
		evs, err := st.Runs().Events(ctx, wsID, r.ID, last, 1000)
		if err != nil {
			bad("events: %v", err)
			break
		}
		for _, e := range evs {
			if e.Seq != last+1 {
				bad("event seq %d follows %d", e.Seq, last)
			}
			last = e.Seq
		}
		if len(evs) < 1000 {
			break
		}
	}
	cps, err := st.Runs().Checkpoints(ctx, wsID, r.ID)
	if err != nil {
		bad("checkpoints: %v", err)
	}
	keys := map[string]bool{}
	for _, cp := range cps {
		if keys[cp.Key] {
			bad("checkpoint key %q twice", cp.Key)
		}
		keys[cp.Key] = true
		if cp.Output != nil && !json.Valid(cp.Output) {
			bad("checkpoint %q output is not JSON", cp.Key)
		}
	}
}

func testReadCheck(t *testing.T, open func(t *testing.T) store.Store) {
	t.Parallel()
	st := open(t)
	ctx := t.Context()
	ws, err := st.Workspaces().GetOrCreate(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	done := mustRun(t, st, ws.ID)
	mustClaim(t, st, done, "w1", time.Minute)
	if err := st.Runs().Checkpoint(ctx, ws.ID, store.Checkpoint{RunID: done.ID, Key: "out", NodeID: "out", Output: json.RawMessage(`"hi"`)},
		[]store.RunEvent{{Seq: 1, Type: "node_finished"}, {Seq: 2, Type: "run_finished"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Runs().Transition(ctx, ws.ID, done.ID, []store.RunStatus{store.RunRunning}, store.RunSucceeded, store.RunUpdate{Output: json.RawMessage(`"hi"`)}); err != nil {
		t.Fatal(err)
	}
	live := mustRun(t, st, ws.ID)
	runs := ReadCheck(t, st)
	if len(runs[ws.ID]) != 2 {
		t.Fatalf("ReadCheck returned %d runs of the workspace, want 2 (%s and %s)", len(runs[ws.ID]), done.ID, live.ID)
	}
}

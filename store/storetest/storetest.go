// Package storetest is the conformance suite for store.Store drivers. A
// driver's test runs it against a fresh database per test:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"), nil)
//			... migrate, t.Cleanup(st.Close) ...
//			return st
//		})
//	}
//
// The suite covers every method of every aggregate: round trips (JSON fields
// included), not-found and conflict errors, validation, workspace isolation
// (a row of workspace A is invisible and untouchable from workspace B),
// revoked keys, upsert semantics, usage arithmetic and concurrent usage
// writes, workflow versions, run leases and transitions, insert-once
// checkpoints (raced by concurrent executors) and idempotent run events,
// users (normalized addresses, the compare-and-swap login state), members
// (the last owner kept, under concurrent demotions), sessions (idle and
// absolute expiry), invitations and sign-in links (used once, raced), and
// conversations whose concurrent appends never share a seq; tasks (status
// transitions and conflicts, events numbered in the transaction that
// causes them, a redelivered message making no second task), approvals
// (idempotent and raced decisions, expiry) and the evidence ledger of
// steps (idempotency keys raced by executors, output written once), and
// the outbox of notifications (due times, delivery reported once), and
// skills (files read lazily, kept or replaced on update, deleted with the
// skill, replaced whole under concurrent updates).
// Subtests run in parallel, each on its own store.
package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

// Run runs the suite. open must return a new, empty, migrated store that
// nothing else uses, and close it when t ends (t.Cleanup).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Store", func(t *testing.T) { testStore(t, open) })
	t.Run("Workspaces", func(t *testing.T) { testWorkspaces(t, open) })
	t.Run("APIKeys", func(t *testing.T) { testAPIKeys(t, open) })
	t.Run("Agents", func(t *testing.T) { testAgents(t, open) })
	t.Run("Providers", func(t *testing.T) { testProviders(t, open) })
	t.Run("Credentials", func(t *testing.T) { testCredentials(t, open) })
	t.Run("Usage", func(t *testing.T) { testUsage(t, open) })
	t.Run("Costs", func(t *testing.T) { testCosts(t, open) })
	t.Run("Workflows", func(t *testing.T) { testWorkflows(t, open) })
	t.Run("Runs", func(t *testing.T) { testRuns(t, open) })
	t.Run("KnowledgeBases", func(t *testing.T) { testKnowledgeBases(t, open) })
	t.Run("IngestJobs", func(t *testing.T) { testIngestJobs(t, open) })
	t.Run("IngestLeases", func(t *testing.T) { testIngestLeases(t, open) })
	t.Run("RunPages", func(t *testing.T) { testRunPages(t, open) })
	t.Run("Uploads", func(t *testing.T) { testUploads(t, open) })
	t.Run("AuditLog", func(t *testing.T) { testAuditLog(t, open) })
	t.Run("OAuthClients", func(t *testing.T) { testOAuthClients(t, open) })
	t.Run("ToolSettings", func(t *testing.T) { testToolSettings(t, open) })
	t.Run("MCPServers", func(t *testing.T) { testMCPServers(t, open) })
	t.Run("OpenAPIImports", func(t *testing.T) { testOpenAPIImports(t, open) })
	t.Run("Identity", func(t *testing.T) { testIdentity(t, open) })
	t.Run("Conversations", func(t *testing.T) { testConversations(t, open) })
	t.Run("Memories", func(t *testing.T) { testMemories(t, open) })
	t.Run("Tasks", func(t *testing.T) { testTasks(t, open) })
	t.Run("Approvals", func(t *testing.T) { testApprovals(t, open) })
	t.Run("Steps", func(t *testing.T) { testSteps(t, open) })
	t.Run("Notifications", func(t *testing.T) { testNotifications(t, open) })
	t.Run("Skills", func(t *testing.T) { testSkills(t, open) })
	t.Run("ReadCheck", func(t *testing.T) { testReadCheck(t, open) })
	t.Run("Workers", func(t *testing.T) { testWorkers(t, open) })
	t.Run("Triggers", func(t *testing.T) { testTriggers(t, open) })
}

func testStore(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Ping", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		if err := st.Ping(t.Context()); err != nil {
			t.Fatalf("Ping() = %v", err)
		}
	})
	t.Run("MigrateIsIdempotent", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		before := mustWorkspace(t, st, "before")
		for i := range 2 {
			if err := st.Migrate(ctx); err != nil {
				t.Fatalf("Migrate() #%d on a migrated store = %v", i+1, err)
			}
		}
		got, err := st.Workspaces().Get(ctx, before.ID)
		if err != nil {
			t.Fatalf("Get(%s) after re-migrating = %v", before.ID, err)
		}
		if diff := cmp.Diff(before, got); diff != "" {
			t.Errorf("workspace changed by re-migrating (-before +after):\n%s", diff)
		}
		if _, err := st.Workspaces().Create(ctx, store.Workspace{Name: "after"}); err != nil {
			t.Errorf("Create after re-migrating = %v", err)
		}
	})
}

// jsonEqual compares JSON documents by meaning: PostgreSQL's jsonb
// reformats whitespace and key order.
var jsonEqual = cmp.FilterValues(func(a, b json.RawMessage) bool { return true },
	cmp.Comparer(func(a, b json.RawMessage) bool {
		return cmp.Equal(decodeJSON(a), decodeJSON(b))
	}))

func decodeJSON(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(m, &v); err != nil {
		return "invalid JSON: " + string(m)
	}
	return v
}

func mustWorkspace(t *testing.T, st store.Store, name string) store.Workspace {
	t.Helper()
	w, err := st.Workspaces().Create(t.Context(), store.Workspace{Name: name})
	if err != nil {
		t.Fatalf("Create workspace %q: %v", name, err)
	}
	return w
}

// wantErr fails unless err matches want.
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s = %v, want %v", what, err, want)
	}
}

// checkStamp fails unless ts is a driver-stamped time taken between
// before and after.
func checkStamp(t *testing.T, what string, ts, before, after time.Time) {
	t.Helper()
	if ts.Location() != time.UTC {
		t.Errorf("%s = %v, want UTC", what, ts)
	}
	if ts.Before(before.Truncate(time.Microsecond)) || ts.After(after) {
		t.Errorf("%s = %v, want between %v and %v", what, ts, before, after)
	}
}

// cmpIgnore ignores the named fields of whatever struct has them.
func cmpIgnore(fields ...string) cmp.Option {
	ignore := make(map[string]bool, len(fields))
	for _, f := range fields {
		ignore[f] = true
	}
	return cmp.FilterPath(func(p cmp.Path) bool {
		sf, ok := p.Last().(cmp.StructField)
		return ok && ignore[sf.Name()]
	}, cmp.Ignore())
}

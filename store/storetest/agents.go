package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentcraftlab/agentcraft/store"
)

// ignoreStamps leaves out what the driver assigns.
var ignoreAgentStamps = cmpopts.IgnoreFields(store.Agent{}, "ID", "CreatedAt", "UpdatedAt")

func ptr[T any](v T) *T { return &v }

func testAgents(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetList", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		agents := st.Agents()

		in := store.Agent{
			WorkspaceID:  a.ID,
			Name:         "researcher",
			Model:        "openai/gpt-4o",
			Instructions: "Answer briefly.\n日本語の質問には日本語で答える。",
			Tools:        []string{"web_search", "calculator"},
			Params: store.AgentParams{
				Temperature: ptr(0.25),
				MaxTokens:   1024,
				MaxSteps:    8,
				Middleware:  json.RawMessage(`{"retry": {"max_attempts": 3}, "ratelimit": {"rps": 2.5, "burst": 5}, "pii": true}`),
			},
			Source: store.SourceAPI,
		}
		before := time.Now()
		created, err := agents.Create(ctx, in)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		after := time.Now()
		if diff := cmp.Diff(in, created, ignoreAgentStamps, jsonEqual); diff != "" {
			t.Errorf("Create mismatch (-in +created):\n%s", diff)
		}
		if created.ID == "" {
			t.Error("Create returned no ID")
		}
		checkStamp(t, "CreatedAt", created.CreatedAt, before, after)
		if !created.UpdatedAt.Equal(created.CreatedAt) {
			t.Errorf("new agent UpdatedAt = %v, want CreatedAt %v", created.UpdatedAt, created.CreatedAt)
		}

		// A zero temperature is a setting, not "unset".
		cold, err := agents.Create(ctx, store.Agent{WorkspaceID: a.ID, Name: "cold", Model: "anthropic/claude",
			Params: store.AgentParams{Temperature: ptr(0.0)}, Source: store.SourceConfig})
		if err != nil {
			t.Fatalf("Create(cold) = %v", err)
		}

		got, err := agents.Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if diff := cmp.Diff(created, got); diff != "" {
			t.Errorf("Get differs from what Create returned (-created +got):\n%s", diff)
		}
		got, err = agents.GetByName(ctx, a.ID, "cold")
		if err != nil {
			t.Fatalf("GetByName(cold) = %v", err)
		}
		if diff := cmp.Diff(cold, got); diff != "" {
			t.Errorf("GetByName(cold) mismatch (-created +got):\n%s", diff)
		}
		if got.Params.Temperature == nil || *got.Params.Temperature != 0 || got.Tools != nil {
			t.Errorf("GetByName(cold) temperature %v tools %#v, want 0 and nil", got.Params.Temperature, got.Tools)
		}
		list, err := agents.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List(a) = %v", err)
		}
		if diff := cmp.Diff([]store.Agent{cold, created}, list); diff != "" {
			t.Errorf("List(a) mismatch, want ordered by name (-want +got):\n%s", diff)
		}

		// Workspace isolation.
		_, err = agents.Get(ctx, b.ID, created.ID)
		wantErr(t, "Get(b, agent of a)", err, store.ErrNotFound)
		_, err = agents.GetByName(ctx, b.ID, "researcher")
		wantErr(t, "GetByName(b, name in a)", err, store.ErrNotFound)
		if list, err := agents.List(ctx, b.ID); err != nil || len(list) != 0 {
			t.Errorf("List(b) = %+v, %v; want none", list, err)
		}
		// The same name is free in another workspace.
		inB := in
		inB.WorkspaceID = b.ID
		if _, err := agents.Create(ctx, inB); err != nil {
			t.Errorf("Create(same name in b) = %v, want success", err)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		agents := st.Agents()
		ok := store.Agent{WorkspaceID: a.ID, Name: "x", Model: "openai/gpt-4o", Source: store.SourceAPI}
		if _, err := agents.Create(ctx, ok); err != nil {
			t.Fatalf("Create = %v", err)
		}
		_, err := agents.Create(ctx, ok)
		wantErr(t, "Create(duplicate name)", err, store.ErrConflict)

		orphan := ok
		orphan.WorkspaceID = store.NewID()
		_, err = agents.Create(ctx, orphan)
		wantErr(t, "Create(unknown workspace)", err, store.ErrNotFound)

		for name, mutate := range map[string]func(*store.Agent){
			"no workspace":    func(a *store.Agent) { a.WorkspaceID = "" },
			"no name":         func(a *store.Agent) { a.Name = "" },
			"no model":        func(a *store.Agent) { a.Model = "" },
			"bad source":      func(a *store.Agent) { a.Source = "file" },
			"negative tokens": func(a *store.Agent) { a.Params.MaxTokens = -1 },
			"negative steps":  func(a *store.Agent) { a.Params.MaxSteps = -1 },
			"bad middleware":  func(a *store.Agent) { a.Params.Middleware = json.RawMessage(`{"retry":`) },
			"temperature 5":   func(a *store.Agent) { a.Params.Temperature = new(5.0) },
			"temperature < 0": func(a *store.Agent) { a.Params.Temperature = new(-0.5) },
		} {
			bad := ok
			bad.Name = "y"
			mutate(&bad)
			_, err := agents.Create(ctx, bad)
			wantErr(t, "Create("+name+")", err, store.ErrInvalid)
			_, err = agents.Upsert(ctx, bad)
			wantErr(t, "Upsert("+name+")", err, store.ErrInvalid)
		}
		_, err = agents.Get(ctx, a.ID, store.NewID())
		wantErr(t, "Get(unknown)", err, store.ErrNotFound)
		_, err = agents.GetByName(ctx, a.ID, "missing")
		wantErr(t, "GetByName(unknown)", err, store.ErrNotFound)
	})

	t.Run("UpdateDelete", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		agents := st.Agents()
		one, err := agents.Create(ctx, store.Agent{WorkspaceID: a.ID, Name: "one", Model: "openai/gpt-4o",
			Tools: []string{"t1"}, Params: store.AgentParams{MaxSteps: 3}, Source: store.SourceAPI})
		if err != nil {
			t.Fatalf("Create(one) = %v", err)
		}
		two, err := agents.Create(ctx, store.Agent{WorkspaceID: a.ID, Name: "two", Model: "openai/gpt-4o", Source: store.SourceAPI})
		if err != nil {
			t.Fatalf("Create(two) = %v", err)
		}

		change := one
		change.Name = "uno"
		change.Model = "anthropic/claude-sonnet"
		change.Instructions = "new"
		change.Tools = nil
		change.Params = store.AgentParams{Temperature: ptr(1.5), Middleware: json.RawMessage(`{"a":[1,2]}`)}
		change.CreatedAt = time.Unix(0, 0) // ignored
		updated, err := agents.Update(ctx, change)
		if err != nil {
			t.Fatalf("Update = %v", err)
		}
		if diff := cmp.Diff(change, updated, ignoreAgentStamps, jsonEqual); diff != "" {
			t.Errorf("Update mismatch (-change +updated):\n%s", diff)
		}
		if updated.ID != one.ID || !updated.CreatedAt.Equal(one.CreatedAt) {
			t.Errorf("Update changed id/created_at: %s %v, want %s %v", updated.ID, updated.CreatedAt, one.ID, one.CreatedAt)
		}
		if updated.UpdatedAt.Before(one.UpdatedAt) {
			t.Errorf("UpdatedAt went backwards: %v before %v", updated.UpdatedAt, one.UpdatedAt)
		}
		got, err := agents.Get(ctx, a.ID, one.ID)
		if err != nil {
			t.Fatalf("Get after Update = %v", err)
		}
		if diff := cmp.Diff(updated, got); diff != "" {
			t.Errorf("Get after Update (-updated +got):\n%s", diff)
		}
		_, err = agents.GetByName(ctx, a.ID, "one")
		wantErr(t, "GetByName(old name)", err, store.ErrNotFound)

		rename := updated
		rename.Name = "two"
		_, err = agents.Update(ctx, rename)
		wantErr(t, "Update(rename onto taken name)", err, store.ErrConflict)

		// Workspace isolation: b cannot update or delete a's agent.
		foreign := updated
		foreign.WorkspaceID = b.ID
		foreign.Model = "evil/model"
		_, err = agents.Update(ctx, foreign)
		wantErr(t, "Update(agent of a through b)", err, store.ErrNotFound)
		wantErr(t, "Delete(agent of a through b)", agents.Delete(ctx, b.ID, one.ID), store.ErrNotFound)
		got, err = agents.Get(ctx, a.ID, one.ID)
		if err != nil {
			t.Fatalf("Get after refused foreign writes = %v", err)
		}
		if diff := cmp.Diff(updated, got); diff != "" {
			t.Errorf("agent changed by refused foreign writes (-want +got):\n%s", diff)
		}

		missing := updated
		missing.ID = store.NewID()
		_, err = agents.Update(ctx, missing)
		wantErr(t, "Update(unknown id)", err, store.ErrNotFound)

		if err := agents.Delete(ctx, a.ID, one.ID); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		_, err = agents.Get(ctx, a.ID, one.ID)
		wantErr(t, "Get(deleted)", err, store.ErrNotFound)
		wantErr(t, "Delete(deleted)", agents.Delete(ctx, a.ID, one.ID), store.ErrNotFound)
		list, err := agents.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List = %v", err)
		}
		if diff := cmp.Diff([]store.Agent{two}, list); diff != "" {
			t.Errorf("List after Delete (-want +got):\n%s", diff)
		}
	})

	t.Run("Upsert", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		agents := st.Agents()
		in := store.Agent{WorkspaceID: a.ID, Name: "from-config", Model: "openai/gpt-4o-mini",
			Instructions: "v1", Tools: []string{"search"}, Params: store.AgentParams{MaxTokens: 100}, Source: store.SourceConfig}
		first, err := agents.Upsert(ctx, in)
		if err != nil {
			t.Fatalf("Upsert(new) = %v", err)
		}
		if diff := cmp.Diff(in, first, ignoreAgentStamps, jsonEqual); diff != "" || first.ID == "" {
			t.Errorf("Upsert(new) mismatch, id %q (-in +got):\n%s", first.ID, diff)
		}
		got, err := agents.Get(ctx, a.ID, first.ID)
		if err != nil {
			t.Fatalf("Get after Upsert = %v", err)
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("Get after Upsert(new) (-upserted +got):\n%s", diff)
		}

		in.Model = "openai/gpt-4o"
		in.Instructions = "v2"
		in.Tools = []string{"search", "fetch"}
		in.Params = store.AgentParams{MaxTokens: 200, Middleware: json.RawMessage(`{"retry":{"max_attempts":1}}`)}
		in.ID = store.NewID() // ignored: the existing row keeps its id
		second, err := agents.Upsert(ctx, in)
		if err != nil {
			t.Fatalf("Upsert(existing) = %v", err)
		}
		if second.ID != first.ID || !second.CreatedAt.Equal(first.CreatedAt) {
			t.Errorf("Upsert(existing) id/created_at = %s %v, want kept %s %v", second.ID, second.CreatedAt, first.ID, first.CreatedAt)
		}
		if diff := cmp.Diff(in, second, ignoreAgentStamps, jsonEqual); diff != "" {
			t.Errorf("Upsert(existing) mismatch (-in +got):\n%s", diff)
		}
		if second.UpdatedAt.Before(first.UpdatedAt) {
			t.Errorf("UpdatedAt went backwards: %v before %v", second.UpdatedAt, first.UpdatedAt)
		}
		got, err = agents.GetByName(ctx, a.ID, "from-config")
		if err != nil {
			t.Fatalf("GetByName after Upsert = %v", err)
		}
		if diff := cmp.Diff(second, got); diff != "" {
			t.Errorf("GetByName after Upsert(existing) (-upserted +got):\n%s", diff)
		}
		if list, err := agents.List(ctx, a.ID); err != nil || len(list) != 1 {
			t.Errorf("List(a) after two upserts = %d agents, %v; want 1", len(list), err)
		}

		// The same name in another workspace is another agent.
		in.WorkspaceID = b.ID
		in.ID = ""
		inB, err := agents.Upsert(ctx, in)
		if err != nil {
			t.Fatalf("Upsert(b) = %v", err)
		}
		if inB.ID == first.ID {
			t.Errorf("Upsert in b reused the id of a's agent %s", first.ID)
		}
		got, err = agents.Get(ctx, a.ID, first.ID)
		if err != nil || got.WorkspaceID != a.ID {
			t.Errorf("a's agent after Upsert in b = %+v, %v", got, err)
		}
	})
}

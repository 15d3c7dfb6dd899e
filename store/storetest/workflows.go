package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func testWorkflows(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateSaveVersions", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		wfs := st.Workflows()

		v1 := json.RawMessage(`{"nodes": [{"id": "start", "type": "input"}], "edges": []}`)
		in := store.Workflow{WorkspaceID: a.ID, Name: "triage", Description: "sorts tickets", Definition: v1}
		before := time.Now()
		created, err := wfs.Create(ctx, in)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		after := time.Now()
		if created.ID == "" || created.Version != 1 || created.Name != "triage" || created.Description != "sorts tickets" {
			t.Errorf("Create = %+v, want an ID, version 1 and the given name and description", created)
		}
		if !cmp.Equal(v1, created.Definition, jsonEqual) {
			t.Errorf("Create definition = %s, want %s", created.Definition, v1)
		}
		checkStamp(t, "CreatedAt", created.CreatedAt, before, after)
		if !created.UpdatedAt.Equal(created.CreatedAt) {
			t.Errorf("new workflow UpdatedAt = %v, want CreatedAt %v", created.UpdatedAt, created.CreatedAt)
		}
		got, err := wfs.Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if diff := cmp.Diff(created, got, jsonEqual); diff != "" {
			t.Errorf("Get differs from Create (-created +got):\n%s", diff)
		}
		got, err = wfs.GetByName(ctx, a.ID, "triage")
		if err != nil {
			t.Fatalf("GetByName = %v", err)
		}
		if diff := cmp.Diff(created, got, jsonEqual); diff != "" {
			t.Errorf("GetByName differs from Create (-created +got):\n%s", diff)
		}
		other, err := wfs.Create(ctx, store.Workflow{WorkspaceID: a.ID, Name: "alpha", Definition: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatalf("Create(alpha) = %v", err)
		}

		// Save: a new version, renamed, with a new description.
		v2 := json.RawMessage(`{"nodes": [{"id": "start", "type": "input"}, {"id": "llm", "type": "agent"}], "edges": [["start", "llm"]]}`)
		change := created
		change.Name = "triage-v2"
		change.Description = ""
		change.Definition = v2
		change.Version = 42 // ignored: the store counts
		saved, err := wfs.Save(ctx, change)
		if err != nil {
			t.Fatalf("Save = %v", err)
		}
		if saved.Version != 2 || saved.Name != "triage-v2" || saved.Description != "" || saved.ID != created.ID {
			t.Errorf("Save = %+v, want version 2, name triage-v2, empty description, same id", saved)
		}
		if !saved.CreatedAt.Equal(created.CreatedAt) || saved.UpdatedAt.Before(created.UpdatedAt) {
			t.Errorf("Save stamps created %v updated %v; want created %v kept and updated not before %v",
				saved.CreatedAt, saved.UpdatedAt, created.CreatedAt, created.UpdatedAt)
		}
		got, err = wfs.Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get after Save = %v", err)
		}
		if diff := cmp.Diff(saved, got, jsonEqual); diff != "" {
			t.Errorf("Get after Save (-saved +got):\n%s", diff)
		}
		_, err = wfs.GetByName(ctx, a.ID, "triage")
		wantErr(t, "GetByName(old name)", err, store.ErrNotFound)

		v3 := json.RawMessage(`{"nodes": [], "edges": [], "note": "emptied"}`)
		change.Definition = v3
		saved3, err := wfs.Save(ctx, change)
		if err != nil || saved3.Version != 3 {
			t.Fatalf("third Save = %+v, %v; want version 3", saved3, err)
		}

		versions, err := wfs.Versions(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Versions = %v", err)
		}
		want := []store.WorkflowVersion{
			{WorkflowID: created.ID, Version: 3, Definition: v3, CreatedAt: saved3.UpdatedAt},
			{WorkflowID: created.ID, Version: 2, Definition: v2, CreatedAt: saved.UpdatedAt},
			{WorkflowID: created.ID, Version: 1, Definition: v1, CreatedAt: created.CreatedAt},
		}
		if diff := cmp.Diff(want, versions, jsonEqual); diff != "" {
			t.Errorf("Versions, want newest first (-want +got):\n%s", diff)
		}
		old, err := wfs.Version(ctx, a.ID, created.ID, 1)
		if err != nil {
			t.Fatalf("Version(1) = %v", err)
		}
		if diff := cmp.Diff(want[2], old, jsonEqual); diff != "" {
			t.Errorf("Version(1) is not the first definition (-want +got):\n%s", diff)
		}
		for _, n := range []int{0, 4, -1} {
			_, err = wfs.Version(ctx, a.ID, created.ID, n)
			wantErr(t, "Version(missing number)", err, store.ErrNotFound)
		}

		list, err := wfs.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List = %v", err)
		}
		if diff := cmp.Diff([]store.Workflow{other, saved3}, list, jsonEqual); diff != "" {
			t.Errorf("List, want ordered by name with the newest definitions (-want +got):\n%s", diff)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		wfs := st.Workflows()
		ok := store.Workflow{WorkspaceID: a.ID, Name: "x", Definition: json.RawMessage(`{"nodes":[]}`)}
		x, err := wfs.Create(ctx, ok)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		_, err = wfs.Create(ctx, ok)
		wantErr(t, "Create(duplicate name)", err, store.ErrConflict)
		orphan := ok
		orphan.WorkspaceID = store.NewID()
		orphan.Name = "orphan"
		_, err = wfs.Create(ctx, orphan)
		wantErr(t, "Create(unknown workspace)", err, store.ErrNotFound)

		for name, mutate := range map[string]func(*store.Workflow){
			"no workspace":   func(w *store.Workflow) { w.WorkspaceID = "" },
			"no name":        func(w *store.Workflow) { w.Name = "" },
			"no definition":  func(w *store.Workflow) { w.Definition = nil },
			"bad definition": func(w *store.Workflow) { w.Definition = json.RawMessage(`{"nodes":`) },
		} {
			bad := x
			bad.Name = "y"
			mutate(&bad)
			_, err := wfs.Create(ctx, bad)
			wantErr(t, "Create("+name+")", err, store.ErrInvalid)
			_, err = wfs.Save(ctx, bad)
			wantErr(t, "Save("+name+")", err, store.ErrInvalid)
		}

		y, err := wfs.Create(ctx, store.Workflow{WorkspaceID: a.ID, Name: "y", Definition: json.RawMessage(`[1]`)})
		if err != nil {
			t.Fatalf("Create(y) = %v", err)
		}
		// A refused rename writes no version: the transaction rolls back.
		rename := y
		rename.Name = "x"
		rename.Definition = json.RawMessage(`[2]`)
		_, err = wfs.Save(ctx, rename)
		wantErr(t, "Save(rename onto taken name)", err, store.ErrConflict)
		if got, err := wfs.Get(ctx, a.ID, y.ID); err != nil || got.Version != 1 || got.Name != "y" {
			t.Errorf("Get after refused Save = %+v, %v; want version 1 named y", got, err)
		}
		if vs, err := wfs.Versions(ctx, a.ID, y.ID); err != nil || len(vs) != 1 {
			t.Errorf("Versions after refused Save = %+v, %v; want only version 1", vs, err)
		}

		unknown := ok
		unknown.ID = store.NewID()
		_, err = wfs.Save(ctx, unknown)
		wantErr(t, "Save(unknown id)", err, store.ErrNotFound)
		_, err = wfs.Get(ctx, a.ID, store.NewID())
		wantErr(t, "Get(unknown)", err, store.ErrNotFound)
		_, err = wfs.GetByName(ctx, a.ID, "missing")
		wantErr(t, "GetByName(unknown)", err, store.ErrNotFound)
		_, err = wfs.Versions(ctx, a.ID, store.NewID())
		wantErr(t, "Versions(unknown)", err, store.ErrNotFound)
		_, err = wfs.Version(ctx, a.ID, store.NewID(), 1)
		wantErr(t, "Version(unknown)", err, store.ErrNotFound)
		wantErr(t, "Delete(unknown)", wfs.Delete(ctx, a.ID, store.NewID()), store.ErrNotFound)
	})

	t.Run("WorkspaceIsolation", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		wfs := st.Workflows()
		w, err := wfs.Create(ctx, store.Workflow{WorkspaceID: a.ID, Name: "shared-name", Definition: json.RawMessage(`{"v":1}`)})
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		_, err = wfs.Get(ctx, b.ID, w.ID)
		wantErr(t, "Get(b, workflow of a)", err, store.ErrNotFound)
		_, err = wfs.GetByName(ctx, b.ID, "shared-name")
		wantErr(t, "GetByName(b, name in a)", err, store.ErrNotFound)
		if list, err := wfs.List(ctx, b.ID); err != nil || len(list) != 0 {
			t.Errorf("List(b) = %+v, %v; want none", list, err)
		}
		foreign := w
		foreign.WorkspaceID = b.ID
		foreign.Definition = json.RawMessage(`{"v":"evil"}`)
		_, err = wfs.Save(ctx, foreign)
		wantErr(t, "Save(workflow of a through b)", err, store.ErrNotFound)
		_, err = wfs.Versions(ctx, b.ID, w.ID)
		wantErr(t, "Versions(b, workflow of a)", err, store.ErrNotFound)
		_, err = wfs.Version(ctx, b.ID, w.ID, 1)
		wantErr(t, "Version(b, workflow of a)", err, store.ErrNotFound)
		wantErr(t, "Delete(workflow of a through b)", wfs.Delete(ctx, b.ID, w.ID), store.ErrNotFound)

		got, err := wfs.Get(ctx, a.ID, w.ID)
		if err != nil {
			t.Fatalf("Get(a) = %v", err)
		}
		if diff := cmp.Diff(w, got, jsonEqual); diff != "" {
			t.Errorf("workflow of a changed through b (-before +after):\n%s", diff)
		}
		// The same name is free in another workspace.
		if _, err := wfs.Create(ctx, store.Workflow{WorkspaceID: b.ID, Name: "shared-name", Definition: json.RawMessage(`{}`)}); err != nil {
			t.Errorf("Create(same name in b) = %v, want success", err)
		}
	})

	t.Run("DeleteKeepsRuns", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		wfs := st.Workflows()
		w, err := wfs.Create(ctx, store.Workflow{WorkspaceID: a.ID, Name: "doomed", Definition: json.RawMessage(`{"v":1}`)})
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		if w, err = wfs.Save(ctx, w); err != nil {
			t.Fatalf("Save = %v", err)
		}
		run, err := st.Runs().Create(ctx, store.Run{WorkspaceID: a.ID, WorkflowID: w.ID, WorkflowVersion: w.Version,
			Definition: w.Definition, Input: json.RawMessage(`{"q":"hi"}`)})
		if err != nil {
			t.Fatalf("Create run = %v", err)
		}
		if err := st.Runs().Checkpoint(ctx, a.ID, store.Checkpoint{RunID: run.ID, Key: "start", NodeID: "start",
			Output: json.RawMessage(`"ok"`)}, nil); err != nil {
			t.Fatalf("Checkpoint = %v", err)
		}

		if err := wfs.Delete(ctx, a.ID, w.ID); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		_, err = wfs.Get(ctx, a.ID, w.ID)
		wantErr(t, "Get(deleted)", err, store.ErrNotFound)
		_, err = wfs.Versions(ctx, a.ID, w.ID)
		wantErr(t, "Versions(deleted)", err, store.ErrNotFound)
		_, err = wfs.Version(ctx, a.ID, w.ID, 1)
		wantErr(t, "Version(1 of deleted)", err, store.ErrNotFound)
		wantErr(t, "Delete(deleted)", wfs.Delete(ctx, a.ID, w.ID), store.ErrNotFound)

		got, err := st.Runs().Get(ctx, a.ID, run.ID)
		if err != nil {
			t.Fatalf("Get run of deleted workflow = %v", err)
		}
		if diff := cmp.Diff(run, got, jsonEqual); diff != "" {
			t.Errorf("run changed by deleting its workflow (-before +after):\n%s", diff)
		}
		if cps, err := st.Runs().Checkpoints(ctx, a.ID, run.ID); err != nil || len(cps) != 1 {
			t.Errorf("Checkpoints of run of deleted workflow = %+v, %v; want one", cps, err)
		}
		// A deleted workflow's name and versions start over.
		again, err := wfs.Create(ctx, store.Workflow{WorkspaceID: a.ID, Name: "doomed", Definition: json.RawMessage(`{"v":2}`)})
		if err != nil || again.Version != 1 {
			t.Errorf("Create(name of deleted) = %+v, %v; want version 1", again, err)
		}
	})
}

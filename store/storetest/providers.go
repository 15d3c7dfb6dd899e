package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentcraftlab/agentcraft/store"
)

var ignoreProviderStamps = cmpopts.IgnoreFields(store.Provider{}, "ID", "CreatedAt", "UpdatedAt")

func testProviders(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetList", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		providers := st.Providers()

		ollama := store.Provider{WorkspaceID: a.ID, Name: "ollama", Type: "openai", BaseURL: "http://127.0.0.1:11434/v1",
			Settings: json.RawMessage(`{"headers": {"X-Team": "ml"}, "timeout_seconds": 120, "models": ["llama3", "qwen2"]}`),
			Source:   store.SourceConfig}
		before := time.Now()
		created, err := providers.Create(ctx, ollama)
		if err != nil {
			t.Fatalf("Create(ollama) = %v", err)
		}
		after := time.Now()
		if diff := cmp.Diff(ollama, created, ignoreProviderStamps, jsonEqual); diff != "" || created.ID == "" {
			t.Errorf("Create(ollama) mismatch, id %q (-in +got):\n%s", created.ID, diff)
		}
		checkStamp(t, "CreatedAt", created.CreatedAt, before, after)
		// Settings left unset come back unset.
		anthropic, err := providers.Create(ctx, store.Provider{WorkspaceID: a.ID, Name: "anthropic", Type: "anthropic", Source: store.SourceAPI})
		if err != nil {
			t.Fatalf("Create(anthropic) = %v", err)
		}
		if anthropic.Settings != nil {
			t.Errorf("Create(no settings).Settings = %s, want nil", anthropic.Settings)
		}

		got, err := providers.Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if diff := cmp.Diff(created, got); diff != "" {
			t.Errorf("Get differs from what Create returned (-created +got):\n%s", diff)
		}
		got, err = providers.GetByName(ctx, a.ID, "anthropic")
		if err != nil {
			t.Fatalf("GetByName = %v", err)
		}
		if diff := cmp.Diff(anthropic, got); diff != "" {
			t.Errorf("GetByName mismatch (-created +got):\n%s", diff)
		}
		list, err := providers.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List = %v", err)
		}
		if diff := cmp.Diff([]store.Provider{anthropic, created}, list); diff != "" {
			t.Errorf("List mismatch, want ordered by name (-want +got):\n%s", diff)
		}

		_, err = providers.Get(ctx, b.ID, created.ID)
		wantErr(t, "Get(b, provider of a)", err, store.ErrNotFound)
		_, err = providers.GetByName(ctx, b.ID, "ollama")
		wantErr(t, "GetByName(b, name in a)", err, store.ErrNotFound)
		if list, err := providers.List(ctx, b.ID); err != nil || len(list) != 0 {
			t.Errorf("List(b) = %+v, %v; want none", list, err)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		providers := st.Providers()
		ok := store.Provider{WorkspaceID: a.ID, Name: "openai", Type: "openai", Source: store.SourceAPI}
		if _, err := providers.Create(ctx, ok); err != nil {
			t.Fatalf("Create = %v", err)
		}
		_, err := providers.Create(ctx, ok)
		wantErr(t, "Create(duplicate name)", err, store.ErrConflict)
		orphan := ok
		orphan.WorkspaceID = store.NewID()
		_, err = providers.Create(ctx, orphan)
		wantErr(t, "Create(unknown workspace)", err, store.ErrNotFound)
		for name, mutate := range map[string]func(*store.Provider){
			"no workspace": func(p *store.Provider) { p.WorkspaceID = "" },
			"no name":      func(p *store.Provider) { p.Name = "" },
			"no type":      func(p *store.Provider) { p.Type = "" },
			"bad source":   func(p *store.Provider) { p.Source = "" },
			"bad settings": func(p *store.Provider) { p.Settings = json.RawMessage(`not json`) },
		} {
			bad := ok
			bad.Name = "other"
			mutate(&bad)
			_, err := providers.Create(ctx, bad)
			wantErr(t, "Create("+name+")", err, store.ErrInvalid)
			_, err = providers.Upsert(ctx, bad)
			wantErr(t, "Upsert("+name+")", err, store.ErrInvalid)
		}
		_, err = providers.Get(ctx, a.ID, store.NewID())
		wantErr(t, "Get(unknown)", err, store.ErrNotFound)
		_, err = providers.GetByName(ctx, a.ID, "missing")
		wantErr(t, "GetByName(unknown)", err, store.ErrNotFound)
	})

	t.Run("UpdateDelete", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		providers := st.Providers()
		p1, err := providers.Create(ctx, store.Provider{WorkspaceID: a.ID, Name: "p1", Type: "openai",
			Settings: json.RawMessage(`{"x":1}`), Source: store.SourceAPI})
		if err != nil {
			t.Fatalf("Create(p1) = %v", err)
		}
		p2, err := providers.Create(ctx, store.Provider{WorkspaceID: a.ID, Name: "p2", Type: "openai", Source: store.SourceAPI})
		if err != nil {
			t.Fatalf("Create(p2) = %v", err)
		}

		change := p1
		change.Type = "anthropic"
		change.BaseURL = "https://llm.internal.example/v1"
		change.Settings = nil
		updated, err := providers.Update(ctx, change)
		if err != nil {
			t.Fatalf("Update = %v", err)
		}
		if diff := cmp.Diff(change, updated, ignoreProviderStamps); diff != "" {
			t.Errorf("Update mismatch (-change +updated):\n%s", diff)
		}
		if updated.ID != p1.ID || !updated.CreatedAt.Equal(p1.CreatedAt) || updated.UpdatedAt.Before(p1.UpdatedAt) {
			t.Errorf("Update stamps: id %s created %v updated %v; want id %s created %v, updated not before %v",
				updated.ID, updated.CreatedAt, updated.UpdatedAt, p1.ID, p1.CreatedAt, p1.UpdatedAt)
		}
		got, err := providers.Get(ctx, a.ID, p1.ID)
		if err != nil {
			t.Fatalf("Get after Update = %v", err)
		}
		if diff := cmp.Diff(updated, got); diff != "" {
			t.Errorf("Get after Update (-updated +got):\n%s", diff)
		}

		rename := updated
		rename.Name = "p2"
		_, err = providers.Update(ctx, rename)
		wantErr(t, "Update(rename onto taken name)", err, store.ErrConflict)
		foreign := updated
		foreign.WorkspaceID = b.ID
		_, err = providers.Update(ctx, foreign)
		wantErr(t, "Update(provider of a through b)", err, store.ErrNotFound)
		wantErr(t, "Delete(provider of a through b)", providers.Delete(ctx, b.ID, p1.ID), store.ErrNotFound)

		if err := providers.Delete(ctx, a.ID, p1.ID); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		_, err = providers.Get(ctx, a.ID, p1.ID)
		wantErr(t, "Get(deleted)", err, store.ErrNotFound)
		wantErr(t, "Delete(deleted)", providers.Delete(ctx, a.ID, p1.ID), store.ErrNotFound)
		list, err := providers.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List = %v", err)
		}
		if diff := cmp.Diff([]store.Provider{p2}, list); diff != "" {
			t.Errorf("List after Delete (-want +got):\n%s", diff)
		}
	})

	t.Run("Upsert", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		providers := st.Providers()
		in := store.Provider{WorkspaceID: a.ID, Name: "vllm", Type: "openai", BaseURL: "http://gpu-1:8000/v1", Source: store.SourceConfig}
		first, err := providers.Upsert(ctx, in)
		if err != nil {
			t.Fatalf("Upsert(new) = %v", err)
		}
		if diff := cmp.Diff(in, first, ignoreProviderStamps); diff != "" || first.ID == "" {
			t.Errorf("Upsert(new) mismatch, id %q (-in +got):\n%s", first.ID, diff)
		}
		in.BaseURL = "http://gpu-2:8000/v1"
		in.Settings = json.RawMessage(`{"max_concurrency":4}`)
		second, err := providers.Upsert(ctx, in)
		if err != nil {
			t.Fatalf("Upsert(existing) = %v", err)
		}
		if diff := cmp.Diff(in, second, ignoreProviderStamps, jsonEqual); diff != "" {
			t.Errorf("Upsert(existing) mismatch (-in +got):\n%s", diff)
		}
		if second.ID != first.ID || !second.CreatedAt.Equal(first.CreatedAt) {
			t.Errorf("Upsert(existing) id/created_at = %s %v, want kept %s %v", second.ID, second.CreatedAt, first.ID, first.CreatedAt)
		}
		got, err := providers.GetByName(ctx, a.ID, "vllm")
		if err != nil {
			t.Fatalf("GetByName = %v", err)
		}
		if diff := cmp.Diff(second, got); diff != "" {
			t.Errorf("GetByName after Upsert (-upserted +got):\n%s", diff)
		}
	})
}

package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func testMCPServers(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateListDelete", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		servers := st.MCPServers()

		before := time.Now()
		s1, err := servers.Create(ctx, store.MCPServer{WorkspaceID: a.ID, Name: "weather", URL: "https://weather.example/mcp",
			Ciphertext: []byte("sealed"), KeyID: "k1"})
		if err != nil {
			t.Fatalf("Create(weather) = %v", err)
		}
		after := time.Now()
		checkStamp(t, "CreatedAt", s1.CreatedAt, before, after)
		want := store.MCPServer{ID: s1.ID, WorkspaceID: a.ID, Name: "weather", URL: "https://weather.example/mcp",
			Ciphertext: []byte("sealed"), KeyID: "k1", CreatedAt: s1.CreatedAt}
		if diff := cmp.Diff(want, s1); diff != "" || s1.ID == "" {
			t.Errorf("Create(weather) mismatch, id %q (-want +got):\n%s", s1.ID, diff)
		}
		s2, err := servers.Create(ctx, store.MCPServer{WorkspaceID: a.ID, Name: "docs", URL: "http://docs.internal/mcp"})
		if err != nil {
			t.Fatalf("Create(docs, no credentials) = %v", err)
		}
		s3, err := servers.Create(ctx, store.MCPServer{WorkspaceID: b.ID, Name: "weather", URL: "https://other.example/mcp"})
		if err != nil {
			t.Fatalf("Create(b weather) = %v; the name is taken in a only", err)
		}

		list, err := servers.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List(a) = %v", err)
		}
		if diff := cmp.Diff([]store.MCPServer{s2, s1}, list); diff != "" {
			t.Errorf("List(a) mismatch, want ordered by name (-want +got):\n%s", diff)
		}
		all, err := servers.ListAll(ctx)
		if err != nil {
			t.Fatalf("ListAll = %v", err)
		}
		if len(all) != 3 {
			t.Errorf("ListAll = %d servers, want 3", len(all))
		}

		wantErr(t, "Delete(b, a's docs)", servers.Delete(ctx, b.ID, "docs"), store.ErrNotFound)
		if err := servers.Delete(ctx, a.ID, "weather"); err != nil {
			t.Fatalf("Delete(a weather) = %v", err)
		}
		wantErr(t, "Delete twice", servers.Delete(ctx, a.ID, "weather"), store.ErrNotFound)
		list, err = servers.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List(a) after delete = %v", err)
		}
		if diff := cmp.Diff([]store.MCPServer{s2}, list); diff != "" {
			t.Errorf("List(a) after delete (-want +got):\n%s", diff)
		}
		list, err = servers.List(ctx, b.ID)
		if err != nil || len(list) != 1 || list[0].ID != s3.ID {
			t.Errorf("List(b) = %+v, %v; want b's weather untouched", list, err)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		servers := st.MCPServers()
		ok := store.MCPServer{WorkspaceID: a.ID, Name: "one", URL: "https://one.example/mcp"}
		if _, err := servers.Create(ctx, ok); err != nil {
			t.Fatalf("Create = %v", err)
		}
		_, err := servers.Create(ctx, ok)
		wantErr(t, "Create(duplicate name)", err, store.ErrConflict)
		for name, mutate := range map[string]func(s *store.MCPServer){
			"no workspace":       func(s *store.MCPServer) { s.WorkspaceID = "" },
			"no name":            func(s *store.MCPServer) { s.Name = " " },
			"not http":           func(s *store.MCPServer) { s.URL = "file:///etc/passwd" },
			"ciphertext, no key": func(s *store.MCPServer) { s.Ciphertext = []byte("x") },
		} {
			s := ok
			s.Name = "x"
			mutate(&s)
			_, err := servers.Create(ctx, s)
			wantErr(t, "Create("+name+")", err, store.ErrInvalid)
		}
		orphan := ok
		orphan.WorkspaceID = store.NewID()
		_, err = servers.Create(ctx, orphan)
		wantErr(t, "Create(unknown workspace)", err, store.ErrNotFound)
	})
}

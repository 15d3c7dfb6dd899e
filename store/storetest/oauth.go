package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func testOAuthClients(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetList", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		clients := st.OAuthClients()

		before := time.Now()
		c1, err := clients.Create(ctx, store.OAuthClient{WorkspaceID: a.ID, Name: "claude", SecretHash: keyHash("s1"),
			Scopes: []string{"docsearch/read", "docsearch/search"}})
		if err != nil {
			t.Fatalf("Create(c1) = %v", err)
		}
		after := time.Now()
		want := store.OAuthClient{ID: c1.ID, WorkspaceID: a.ID, Name: "claude", SecretHash: keyHash("s1"),
			Scopes: []string{"docsearch/read", "docsearch/search"}, CreatedAt: c1.CreatedAt}
		if diff := cmp.Diff(want, c1); diff != "" || c1.ID == "" {
			t.Errorf("Create(c1) mismatch, id %q (-want +got):\n%s", c1.ID, diff)
		}
		checkStamp(t, "CreatedAt", c1.CreatedAt, before, after)
		c2, err := clients.Create(ctx, store.OAuthClient{WorkspaceID: a.ID, Name: "ci", SecretHash: keyHash("s2"), Scopes: []string{"agents/*"}})
		if err != nil {
			t.Fatalf("Create(c2) = %v", err)
		}
		c3, err := clients.Create(ctx, store.OAuthClient{ID: "client-b", WorkspaceID: b.ID, Name: "other", SecretHash: keyHash("s3"), Scopes: []string{"workflows/*"}})
		if err != nil {
			t.Fatalf("Create(c3 with id) = %v", err)
		}
		if c3.ID != "client-b" {
			t.Errorf("Create kept id %q, want client-b", c3.ID)
		}

		// Get finds a client whatever its workspace: the token endpoint
		// learns the workspace from it.
		for _, c := range []store.OAuthClient{c1, c2, c3} {
			got, err := clients.Get(ctx, c.ID)
			if err != nil {
				t.Fatalf("Get(%s) = %v", c.ID, err)
			}
			if diff := cmp.Diff(c, got); diff != "" {
				t.Errorf("Get(%s) mismatch (-created +got):\n%s", c.ID, diff)
			}
		}
		list, err := clients.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List(a) = %v", err)
		}
		if diff := cmp.Diff([]store.OAuthClient{c1, c2}, list); diff != "" {
			t.Errorf("List(a) mismatch, want oldest first (-want +got):\n%s", diff)
		}
		list, err = clients.List(ctx, b.ID)
		if err != nil {
			t.Fatalf("List(b) = %v", err)
		}
		if diff := cmp.Diff([]store.OAuthClient{c3}, list); diff != "" {
			t.Errorf("List(b) mismatch, want only b's client (-want +got):\n%s", diff)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		clients := st.OAuthClients()
		ok := store.OAuthClient{WorkspaceID: a.ID, Name: "one", SecretHash: keyHash("x"), Scopes: []string{"docsearch/read"}}
		if _, err := clients.Create(ctx, ok); err != nil {
			t.Fatalf("Create = %v", err)
		}
		dup := ok
		dup.Name = "dup"
		_, err := clients.Create(ctx, dup)
		wantErr(t, "Create(duplicate secret hash)", err, store.ErrConflict)

		for name, mutate := range map[string]func(c *store.OAuthClient){
			"no workspace":    func(c *store.OAuthClient) { c.WorkspaceID = "" },
			"no name":         func(c *store.OAuthClient) { c.Name = " " },
			"secret in clear": func(c *store.OAuthClient) { c.SecretHash = []byte("acs_the-secret-itself") },
			"no scopes":       func(c *store.OAuthClient) { c.Scopes = nil },
			"scope with space": func(c *store.OAuthClient) {
				c.Scopes = []string{"docsearch/read docsearch/search"}
			},
		} {
			c := ok
			c.SecretHash = keyHash("y-" + name)
			mutate(&c)
			_, err := clients.Create(ctx, c)
			wantErr(t, "Create("+name+")", err, store.ErrInvalid)
		}
		orphan := ok
		orphan.WorkspaceID, orphan.SecretHash = store.NewID(), keyHash("z")
		_, err = clients.Create(ctx, orphan)
		wantErr(t, "Create(unknown workspace)", err, store.ErrNotFound)
		_, err = clients.Get(ctx, store.NewID())
		wantErr(t, "Get(unknown)", err, store.ErrNotFound)
		wantErr(t, "Revoke(unknown)", clients.Revoke(ctx, a.ID, store.NewID()), store.ErrNotFound)
	})

	t.Run("Revoke", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		clients := st.OAuthClients()
		c, err := clients.Create(ctx, store.OAuthClient{WorkspaceID: a.ID, Name: "c", SecretHash: keyHash("1"), Scopes: []string{"agents/*"}})
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		wantErr(t, "Revoke(b, client of a)", clients.Revoke(ctx, b.ID, c.ID), store.ErrNotFound)
		if got, err := clients.Get(ctx, c.ID); err != nil || got.RevokedAt != nil {
			t.Fatalf("Get after a refused cross-workspace revoke = %+v, %v; want it live", got, err)
		}

		before := time.Now()
		if err := clients.Revoke(ctx, a.ID, c.ID); err != nil {
			t.Fatalf("Revoke = %v", err)
		}
		after := time.Now()
		got, err := clients.Get(ctx, c.ID)
		if err != nil {
			t.Fatalf("Get(revoked) = %v; Get must still return a revoked client", err)
		}
		if got.RevokedAt == nil {
			t.Fatal("RevokedAt is nil after Revoke")
		}
		checkStamp(t, "RevokedAt", *got.RevokedAt, before, after)
		first := *got.RevokedAt
		if err := clients.Revoke(ctx, a.ID, c.ID); err != nil {
			t.Fatalf("second Revoke = %v, want success", err)
		}
		got, _ = clients.Get(ctx, c.ID)
		if got.RevokedAt == nil || !got.RevokedAt.Equal(first) {
			t.Errorf("second Revoke moved RevokedAt from %v to %v", first, got.RevokedAt)
		}
		list, err := clients.List(ctx, a.ID)
		if err != nil || len(list) != 1 || list[0].RevokedAt == nil {
			t.Errorf("List after revoke = %+v, %v; want the revoked client listed", list, err)
		}
	})
}

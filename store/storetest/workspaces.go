package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func testWorkspaces(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetList", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		ws := open(t).Workspaces()

		before := time.Now()
		beta, err := ws.Create(ctx, store.Workspace{Name: "beta"})
		if err != nil {
			t.Fatalf("Create(beta) = %v", err)
		}
		after := time.Now()
		if beta.ID == "" || beta.Name != "beta" {
			t.Errorf("Create(beta) = %+v, want an ID and name beta", beta)
		}
		checkStamp(t, "CreatedAt", beta.CreatedAt, before, after)
		alpha, err := ws.Create(ctx, store.Workspace{Name: "alpha"})
		if err != nil {
			t.Fatalf("Create(alpha) = %v", err)
		}
		if alpha.ID == beta.ID {
			t.Errorf("two workspaces share id %s", alpha.ID)
		}

		got, err := ws.Get(ctx, beta.ID)
		if err != nil {
			t.Fatalf("Get(%s) = %v", beta.ID, err)
		}
		if diff := cmp.Diff(beta, got); diff != "" {
			t.Errorf("Get mismatch (-created +got):\n%s", diff)
		}
		got, err = ws.GetByName(ctx, "alpha")
		if err != nil {
			t.Fatalf("GetByName(alpha) = %v", err)
		}
		if diff := cmp.Diff(alpha, got); diff != "" {
			t.Errorf("GetByName mismatch (-created +got):\n%s", diff)
		}
		list, err := ws.List(ctx)
		if err != nil {
			t.Fatalf("List() = %v", err)
		}
		if diff := cmp.Diff([]store.Workspace{alpha, beta}, list); diff != "" {
			t.Errorf("List() mismatch, want ordered by name (-want +got):\n%s", diff)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		ws := open(t).Workspaces()
		mustCreate := func(name string) {
			if _, err := ws.Create(ctx, store.Workspace{Name: name}); err != nil {
				t.Fatalf("Create(%s) = %v", name, err)
			}
		}
		mustCreate("taken")
		_, err := ws.Create(ctx, store.Workspace{Name: "taken"})
		wantErr(t, "Create(duplicate name)", err, store.ErrConflict)
		_, err = ws.Create(ctx, store.Workspace{})
		wantErr(t, "Create(empty name)", err, store.ErrInvalid)
		_, err = ws.Get(ctx, store.NewID())
		wantErr(t, "Get(unknown)", err, store.ErrNotFound)
		_, err = ws.GetByName(ctx, "missing")
		wantErr(t, "GetByName(unknown)", err, store.ErrNotFound)
		_, err = ws.GetOrCreate(ctx, "")
		wantErr(t, "GetOrCreate(empty name)", err, store.ErrInvalid)
	})

	t.Run("GetOrCreate", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		ws := open(t).Workspaces()
		first, err := ws.GetOrCreate(ctx, "default")
		if err != nil {
			t.Fatalf("GetOrCreate(default) = %v", err)
		}
		again, err := ws.GetOrCreate(ctx, "default")
		if err != nil {
			t.Fatalf("GetOrCreate(default) again = %v", err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Errorf("second GetOrCreate returned another workspace (-first +second):\n%s", diff)
		}
		byName, err := ws.GetByName(ctx, "default")
		if err != nil {
			t.Fatalf("GetByName(default) = %v", err)
		}
		if diff := cmp.Diff(first, byName); diff != "" {
			t.Errorf("GetByName mismatch (-GetOrCreate +GetByName):\n%s", diff)
		}
	})

	t.Run("GetOrCreateConcurrent", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		ws := open(t).Workspaces()
		const n = 10
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			got   [n]store.Workspace
			errs  [n]error
		)
		for i := range n {
			wg.Go(func() {
				<-start
				got[i], errs[i] = ws.GetOrCreate(ctx, "shared")
			})
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("GetOrCreate #%d = %v", i, errs[i])
			}
			if got[i].ID != got[0].ID {
				t.Errorf("GetOrCreate #%d id = %s, #0 id = %s: want one workspace", i, got[i].ID, got[0].ID)
			}
		}
		list, err := ws.List(ctx)
		if err != nil {
			t.Fatalf("List() = %v", err)
		}
		if len(list) != 1 {
			t.Errorf("List() has %d workspaces after concurrent GetOrCreate, want 1: %+v", len(list), list)
		}
	})
}

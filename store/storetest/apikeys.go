package storetest

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func keyHash(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

func testAPIKeys(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetList", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		keys := st.APIKeys()

		before := time.Now()
		k1, err := keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Name: "ci", Prefix: "ac_k1", Hash: keyHash("ac_k1-secret")})
		if err != nil {
			t.Fatalf("Create(k1) = %v", err)
		}
		after := time.Now()
		want := store.APIKey{ID: k1.ID, WorkspaceID: a.ID, Name: "ci", Prefix: "ac_k1", Hash: keyHash("ac_k1-secret"), Role: store.RoleMember, CreatedAt: k1.CreatedAt}
		if diff := cmp.Diff(want, k1); diff != "" || k1.ID == "" {
			t.Errorf("Create(k1) mismatch, id %q (-want +got):\n%s", k1.ID, diff)
		}
		checkStamp(t, "CreatedAt", k1.CreatedAt, before, after)
		k2, err := keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Name: "laptop", Prefix: "ac_k2", Hash: keyHash("ac_k2-secret")})
		if err != nil {
			t.Fatalf("Create(k2) = %v", err)
		}

		got, err := keys.GetByHash(ctx, keyHash("ac_k1-secret"))
		if err != nil {
			t.Fatalf("GetByHash(k1) = %v", err)
		}
		if diff := cmp.Diff(k1, got); diff != "" {
			t.Errorf("GetByHash(k1) mismatch (-created +got):\n%s", diff)
		}
		got, err = keys.Get(ctx, a.ID, k2.ID)
		if err != nil {
			t.Fatalf("Get(a, k2) = %v", err)
		}
		if diff := cmp.Diff(k2, got); diff != "" {
			t.Errorf("Get(a, k2) mismatch (-created +got):\n%s", diff)
		}
		list, err := keys.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List(a) = %v", err)
		}
		if diff := cmp.Diff([]store.APIKey{k1, k2}, list); diff != "" {
			t.Errorf("List(a) mismatch, want oldest first (-want +got):\n%s", diff)
		}

		// Workspace isolation.
		_, err = keys.Get(ctx, b.ID, k1.ID)
		wantErr(t, "Get(b, key of a)", err, store.ErrNotFound)
		list, err = keys.List(ctx, b.ID)
		if err != nil || len(list) != 0 {
			t.Errorf("List(b) = %+v, %v; want no keys", list, err)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		keys := st.APIKeys()
		if _, err := keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Name: "one", Prefix: "ac_x", Hash: keyHash("x")}); err != nil {
			t.Fatalf("Create = %v", err)
		}
		_, err := keys.Create(ctx, store.APIKey{WorkspaceID: b.ID, Name: "dup", Prefix: "ac_x", Hash: keyHash("x")})
		wantErr(t, "Create(duplicate hash)", err, store.ErrConflict)
		_, err = keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Name: "plain", Prefix: "ac_y", Hash: []byte("ac_y-the-key-itself")})
		wantErr(t, "Create(hash not SHA-256)", err, store.ErrInvalid)
		_, err = keys.Create(ctx, store.APIKey{Name: "orphan", Prefix: "ac_z", Hash: keyHash("z")})
		wantErr(t, "Create(no workspace id)", err, store.ErrInvalid)
		_, err = keys.Create(ctx, store.APIKey{WorkspaceID: store.NewID(), Name: "orphan", Prefix: "ac_z", Hash: keyHash("z")})
		wantErr(t, "Create(unknown workspace)", err, store.ErrNotFound)
		_, err = keys.GetByHash(ctx, keyHash("never issued"))
		wantErr(t, "GetByHash(unknown)", err, store.ErrNotFound)
		_, err = keys.Get(ctx, a.ID, store.NewID())
		wantErr(t, "Get(unknown)", err, store.ErrNotFound)
		wantErr(t, "Revoke(unknown)", keys.Revoke(ctx, a.ID, store.NewID()), store.ErrNotFound)
		wantErr(t, "Touch(unknown)", keys.Touch(ctx, a.ID, store.NewID(), time.Now()), store.ErrNotFound)
	})

	t.Run("Revoke", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		keys := st.APIKeys()
		k1, err := keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Name: "k1", Prefix: "ac_1", Hash: keyHash("1")})
		if err != nil {
			t.Fatalf("Create(k1) = %v", err)
		}
		k2, err := keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Name: "k2", Prefix: "ac_2", Hash: keyHash("2")})
		if err != nil {
			t.Fatalf("Create(k2) = %v", err)
		}

		wantErr(t, "Revoke(b, key of a)", keys.Revoke(ctx, b.ID, k1.ID), store.ErrNotFound)
		if _, err := keys.GetByHash(ctx, keyHash("1")); err != nil {
			t.Fatalf("GetByHash(k1) after a refused cross-workspace revoke = %v, want the key", err)
		}

		before := time.Now()
		if err := keys.Revoke(ctx, a.ID, k1.ID); err != nil {
			t.Fatalf("Revoke(a, k1) = %v", err)
		}
		after := time.Now()
		_, err = keys.GetByHash(ctx, keyHash("1"))
		wantErr(t, "GetByHash(revoked k1)", err, store.ErrNotFound)
		if _, err := keys.GetByHash(ctx, keyHash("2")); err != nil {
			t.Errorf("GetByHash(k2) after revoking k1 = %v, want the key", err)
		}
		revoked, err := keys.Get(ctx, a.ID, k1.ID)
		if err != nil {
			t.Fatalf("Get(revoked k1) = %v", err)
		}
		if revoked.RevokedAt == nil {
			t.Fatalf("Get(revoked k1).RevokedAt = nil, want the revocation time")
		}
		checkStamp(t, "RevokedAt", *revoked.RevokedAt, before, after)

		// Revoking again succeeds and keeps the first time.
		if err := keys.Revoke(ctx, a.ID, k1.ID); err != nil {
			t.Fatalf("Revoke(a, k1) again = %v", err)
		}
		list, err := keys.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List(a) = %v", err)
		}
		if diff := cmp.Diff([]store.APIKey{revoked, k2}, list); diff != "" {
			t.Errorf("List(a) after revoking twice, want revoked key listed with its first revocation time (-want +got):\n%s", diff)
		}
	})

	t.Run("Touch", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		keys := st.APIKeys()
		k, err := keys.Create(ctx, store.APIKey{WorkspaceID: a.ID, Name: "k", Prefix: "ac_k", Hash: keyHash("k")})
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		lastUsed := func() *time.Time {
			t.Helper()
			got, err := keys.Get(ctx, a.ID, k.ID)
			if err != nil {
				t.Fatalf("Get = %v", err)
			}
			return got.LastUsedAt
		}

		t1 := time.Date(2025, 3, 4, 5, 6, 7, 891234567, time.FixedZone("JST", 9*3600))
		wantErr(t, "Touch(b, key of a)", keys.Touch(ctx, b.ID, k.ID, t1), store.ErrNotFound)
		if got := lastUsed(); got != nil {
			t.Errorf("LastUsedAt after a refused cross-workspace touch = %v, want nil", got)
		}

		if err := keys.Touch(ctx, a.ID, k.ID, t1); err != nil {
			t.Fatalf("Touch(t1) = %v", err)
		}
		want := t1.UTC().Truncate(time.Microsecond)
		if got := lastUsed(); got == nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("LastUsedAt after Touch(t1) = %v, want %v in UTC", got, want)
		}
		// An older touch (a slow request finishing late) is ignored.
		if err := keys.Touch(ctx, a.ID, k.ID, t1.Add(-time.Hour)); err != nil {
			t.Fatalf("Touch(t1-1h) = %v", err)
		}
		if got := lastUsed(); got == nil || !got.Equal(want) {
			t.Errorf("LastUsedAt after an older Touch = %v, want it to stay %v", got, want)
		}
		t2 := t1.Add(time.Minute)
		if err := keys.Touch(ctx, a.ID, k.ID, t2); err != nil {
			t.Fatalf("Touch(t2) = %v", err)
		}
		if got := lastUsed(); got == nil || !got.Equal(t2.Truncate(time.Microsecond)) {
			t.Errorf("LastUsedAt after Touch(t2) = %v, want %v", got, t2)
		}
		// The hot path returns the touch time too.
		got, err := keys.GetByHash(ctx, keyHash("k"))
		if err != nil {
			t.Fatalf("GetByHash = %v", err)
		}
		if got.LastUsedAt == nil || !got.LastUsedAt.Equal(t2.Truncate(time.Microsecond)) {
			t.Errorf("GetByHash().LastUsedAt = %v, want %v", got.LastUsedAt, t2)
		}
	})
}

package storetest

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

// mustUpload puts data as an upload named name expiring at expires.
func mustUpload(t *testing.T, st store.Store, workspaceID, name string, data []byte, expires time.Time) store.Upload {
	t.Helper()
	u, err := st.Uploads().Put(t.Context(), store.Upload{
		WorkspaceID: workspaceID, Name: name, ContentType: "application/octet-stream",
		Size: int64(len(data)), Data: data, ExpiresAt: expires,
	})
	if err != nil {
		t.Fatalf("Put upload %q: %v", name, err)
	}
	return u
}

func testUploads(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("PutGetInfoDelete", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		ups := st.Uploads()

		// Every byte value, zero bytes included, and a NUL-only tail.
		data := make([]byte, 0, 256+16)
		for i := range 256 {
			data = append(data, byte(i))
		}
		data = append(data, make([]byte, 16)...)
		expires := time.Now().Add(time.Hour)
		in := store.Upload{WorkspaceID: a.ID, Name: "scan.pdf", ContentType: "application/pdf",
			Size: int64(len(data)), Data: data, ExpiresAt: expires}
		before := time.Now()
		put, err := ups.Put(ctx, in)
		if err != nil {
			t.Fatalf("Put = %v", err)
		}
		after := time.Now()
		if put.ID == "" || put.Size != int64(len(data)) || !put.ExpiresAt.Equal(store.Timestamp(expires)) {
			t.Errorf("Put = %+v, want an ID, the size and the expiry", put)
		}
		checkStamp(t, "CreatedAt", put.CreatedAt, before, after)

		got, err := ups.Get(ctx, a.ID, put.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if !bytes.Equal(got.Data, data) {
			t.Errorf("Get data = %x, want %x", got.Data, data)
		}
		want := put
		want.Data = nil
		got.Data = nil
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Get differs from Put (-put +got):\n%s", diff)
		}
		info, err := ups.Info(ctx, a.ID, put.ID)
		if err != nil {
			t.Fatalf("Info = %v", err)
		}
		if diff := cmp.Diff(want, info); diff != "" {
			t.Errorf("Info, want Put's row without data (-want +got):\n%s", diff)
		}

		// A file of no bytes is an upload too.
		empty := mustUpload(t, st, a.ID, "empty.txt", nil, expires)
		got, err = ups.Get(ctx, a.ID, empty.ID)
		if err != nil {
			t.Fatalf("Get(empty) = %v", err)
		}
		if got.Size != 0 || got.Data == nil || len(got.Data) != 0 {
			t.Errorf("Get(empty) = size %d, data %#v; want size 0 and empty non-nil data", got.Size, got.Data)
		}

		if err := ups.Delete(ctx, a.ID, put.ID); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		_, err = ups.Get(ctx, a.ID, put.ID)
		wantErr(t, "Get(deleted)", err, store.ErrNotFound)
		_, err = ups.Info(ctx, a.ID, put.ID)
		wantErr(t, "Info(deleted)", err, store.ErrNotFound)
		err = ups.Delete(ctx, a.ID, put.ID)
		wantErr(t, "Delete(deleted)", err, store.ErrNotFound)
		if _, err := ups.Info(ctx, a.ID, empty.ID); err != nil {
			t.Errorf("Info(other upload) after Delete = %v", err)
		}
	})

	t.Run("Large", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		data := make([]byte, 5<<20)
		rng := rand.NewChaCha8([32]byte{1, 2, 3})
		rng.Read(data)
		for i := 0; i < len(data); i += 4096 {
			data[i] = 0 // NUL bytes throughout
		}
		put := mustUpload(t, st, a.ID, "big.bin", data, time.Now().Add(time.Hour))
		got, err := st.Uploads().Get(ctx, a.ID, put.ID)
		if err != nil {
			t.Fatalf("Get(5 MiB) = %v", err)
		}
		if got.Size != 5<<20 || !bytes.Equal(got.Data, data) {
			t.Errorf("Get(5 MiB) = size %d, %d bytes, equal %v; want the 5 MiB back byte for byte",
				got.Size, len(got.Data), bytes.Equal(got.Data, data))
		}
	})

	t.Run("Expiry", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		ups := st.Uploads()
		at := store.Timestamp(time.Now())
		gone := mustUpload(t, st, a.ID, "gone.txt", []byte("old"), at.Add(-time.Hour))
		mustUpload(t, st, b.ID, "gone-too.txt", []byte("old"), at.Add(-time.Minute))
		mustUpload(t, st, b.ID, "boundary.txt", []byte("now"), at)
		live := mustUpload(t, st, a.ID, "live.txt", []byte("new"), at.Add(time.Hour))

		// Expired, not yet swept: already invisible.
		_, err := ups.Get(ctx, a.ID, gone.ID)
		wantErr(t, "Get(expired)", err, store.ErrNotFound)
		_, err = ups.Info(ctx, a.ID, gone.ID)
		wantErr(t, "Info(expired)", err, store.ErrNotFound)

		n, err := ups.DeleteExpired(ctx, at.Add(-2*time.Hour))
		if err != nil || n != 0 {
			t.Errorf("DeleteExpired(before any expiry) = %d, %v; want 0", n, err)
		}
		n, err = ups.DeleteExpired(ctx, at)
		if err != nil || n != 3 {
			t.Errorf("DeleteExpired(now) = %d, %v; want 3 (both workspaces, the boundary included)", n, err)
		}
		n, err = ups.DeleteExpired(ctx, at)
		if err != nil || n != 0 {
			t.Errorf("DeleteExpired again = %d, %v; want 0", n, err)
		}
		err = ups.Delete(ctx, a.ID, gone.ID)
		wantErr(t, "Delete(swept)", err, store.ErrNotFound)
		got, err := ups.Get(ctx, a.ID, live.ID)
		if err != nil || string(got.Data) != "new" {
			t.Errorf("Get(live) after DeleteExpired = %q, %v; want it kept", got.Data, err)
		}
	})

	t.Run("WorkspaceIsolationAndValidation", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		ups := st.Uploads()
		expires := time.Now().Add(time.Hour)
		u := mustUpload(t, st, a.ID, "private.txt", []byte("secret"), expires)

		_, err := ups.Get(ctx, b.ID, u.ID)
		wantErr(t, "Get(B, A's upload)", err, store.ErrNotFound)
		_, err = ups.Info(ctx, b.ID, u.ID)
		wantErr(t, "Info(B, A's upload)", err, store.ErrNotFound)
		err = ups.Delete(ctx, b.ID, u.ID)
		wantErr(t, "Delete(B, A's upload)", err, store.ErrNotFound)
		if _, err := ups.Get(ctx, a.ID, u.ID); err != nil {
			t.Errorf("Get(A) after B's attempts = %v", err)
		}

		for _, tc := range []struct {
			name string
			u    store.Upload
			want error
		}{
			{"unknown workspace", store.Upload{WorkspaceID: store.NewID(), Name: "x", Size: 1, Data: []byte("x"), ExpiresAt: expires}, store.ErrNotFound},
			{"no workspace", store.Upload{Name: "x", Size: 1, Data: []byte("x"), ExpiresAt: expires}, store.ErrInvalid},
			{"no name", store.Upload{WorkspaceID: a.ID, Size: 1, Data: []byte("x"), ExpiresAt: expires}, store.ErrInvalid},
			{"no expiry", store.Upload{WorkspaceID: a.ID, Name: "x", Size: 1, Data: []byte("x")}, store.ErrInvalid},
			{"size mismatch", store.Upload{WorkspaceID: a.ID, Name: "x", Size: 2, Data: []byte("x"), ExpiresAt: expires}, store.ErrInvalid},
		} {
			_, err := ups.Put(ctx, tc.u)
			wantErr(t, "Put("+tc.name+")", err, tc.want)
		}
		// A taken id is a conflict, not an overwrite.
		dup := store.Upload{ID: u.ID, WorkspaceID: a.ID, Name: "other.txt", Size: 1, Data: []byte("x"), ExpiresAt: expires}
		_, err = ups.Put(ctx, dup)
		wantErr(t, "Put(taken id)", err, store.ErrConflict)
		got, err := ups.Get(ctx, a.ID, u.ID)
		if err != nil || string(got.Data) != "secret" {
			t.Errorf("Get after refused Put = %q, %v; want the original data", got.Data, err)
		}
	})
}

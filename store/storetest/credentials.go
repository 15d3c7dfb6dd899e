package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

// allBytes is a ciphertext holding every byte value, NUL and invalid UTF-8
// included, to catch a driver that stores bytes as text.
func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func testCredentials(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("PutGetListDelete", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		creds := st.Credentials()

		before := time.Now()
		first, err := creds.Put(ctx, store.Credential{WorkspaceID: a.ID, Provider: "openai", Ciphertext: allBytes(), KeyID: "key-1"})
		if err != nil {
			t.Fatalf("Put(openai) = %v", err)
		}
		after := time.Now()
		if first.ID == "" || !bytes.Equal(first.Ciphertext, allBytes()) || first.KeyID != "key-1" {
			t.Errorf("Put(openai) = %+v", first)
		}
		checkStamp(t, "CreatedAt", first.CreatedAt, before, after)
		got, err := creds.Get(ctx, a.ID, "openai")
		if err != nil {
			t.Fatalf("Get(openai) = %v", err)
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("Get(openai) mismatch (-put +got):\n%s", diff)
		}

		// Put again replaces the secret and keeps the row.
		second, err := creds.Put(ctx, store.Credential{WorkspaceID: a.ID, Provider: "openai", Ciphertext: []byte("sealed-2"), KeyID: "key-2"})
		if err != nil {
			t.Fatalf("Put(openai) again = %v", err)
		}
		if second.ID != first.ID || !second.CreatedAt.Equal(first.CreatedAt) || second.UpdatedAt.Before(first.UpdatedAt) {
			t.Errorf("Put(openai) again stamps: %+v; want id %s and created_at %v kept", second, first.ID, first.CreatedAt)
		}
		got, err = creds.Get(ctx, a.ID, "openai")
		if err != nil {
			t.Fatalf("Get(openai) after replace = %v", err)
		}
		if diff := cmp.Diff(second, got); diff != "" {
			t.Errorf("Get(openai) after replace (-put +got):\n%s", diff)
		}
		if string(got.Ciphertext) != "sealed-2" || got.KeyID != "key-2" {
			t.Errorf("Get(openai) after replace = %q %q, want sealed-2 key-2", got.Ciphertext, got.KeyID)
		}

		anthropic, err := creds.Put(ctx, store.Credential{WorkspaceID: a.ID, Provider: "anthropic", Ciphertext: []byte("c"), KeyID: "key-2"})
		if err != nil {
			t.Fatalf("Put(anthropic) = %v", err)
		}
		list, err := creds.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List(a) = %v", err)
		}
		anthropic.Ciphertext, second.Ciphertext = nil, nil
		if diff := cmp.Diff([]store.Credential{anthropic, second}, list); diff != "" {
			t.Errorf("List(a) mismatch, want by provider and without ciphertext (-want +got):\n%s", diff)
		}

		// Workspace isolation.
		_, err = creds.Get(ctx, b.ID, "openai")
		wantErr(t, "Get(b, credential of a)", err, store.ErrNotFound)
		if list, err := creds.List(ctx, b.ID); err != nil || len(list) != 0 {
			t.Errorf("List(b) = %+v, %v; want none", list, err)
		}
		wantErr(t, "Delete(b, credential of a)", creds.Delete(ctx, b.ID, "openai"), store.ErrNotFound)
		// b's own credential for the same provider is a separate row.
		inB, err := creds.Put(ctx, store.Credential{WorkspaceID: b.ID, Provider: "openai", Ciphertext: []byte("b"), KeyID: "key-2"})
		if err != nil {
			t.Fatalf("Put(b, openai) = %v", err)
		}
		if inB.ID == first.ID {
			t.Errorf("Put in b reused the row of a")
		}
		if got, err := creds.Get(ctx, a.ID, "openai"); err != nil || string(got.Ciphertext) != "sealed-2" {
			t.Errorf("a's credential after b's Put = %q, %v; want sealed-2", got.Ciphertext, err)
		}

		if err := creds.Delete(ctx, a.ID, "openai"); err != nil {
			t.Fatalf("Delete(openai) = %v", err)
		}
		_, err = creds.Get(ctx, a.ID, "openai")
		wantErr(t, "Get(deleted)", err, store.ErrNotFound)
		wantErr(t, "Delete(deleted)", creds.Delete(ctx, a.ID, "openai"), store.ErrNotFound)
		if _, err := creds.Get(ctx, b.ID, "openai"); err != nil {
			t.Errorf("Get(b, openai) after deleting a's = %v, want b's credential", err)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		creds := st.Credentials()
		for name, c := range map[string]store.Credential{
			"no workspace":  {Provider: "p", Ciphertext: []byte("c"), KeyID: "k"},
			"no provider":   {WorkspaceID: a.ID, Ciphertext: []byte("c"), KeyID: "k"},
			"no ciphertext": {WorkspaceID: a.ID, Provider: "p", KeyID: "k"},
			"no key id":     {WorkspaceID: a.ID, Provider: "p", Ciphertext: []byte("c")},
		} {
			_, err := creds.Put(ctx, c)
			wantErr(t, "Put("+name+")", err, store.ErrInvalid)
		}
		_, err := creds.Put(ctx, store.Credential{WorkspaceID: store.NewID(), Provider: "p", Ciphertext: []byte("c"), KeyID: "k"})
		wantErr(t, "Put(unknown workspace)", err, store.ErrNotFound)
		_, err = creds.Get(ctx, a.ID, "missing")
		wantErr(t, "Get(unknown)", err, store.ErrNotFound)
	})
}

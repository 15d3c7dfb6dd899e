package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func testOpenAPIImports(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("PutListDelete", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		imports := st.OpenAPIImports()

		before := time.Now()
		pet, err := imports.Put(ctx, store.OpenAPIImport{WorkspaceID: a.ID, Name: "petstore", Document: `{"openapi":"3.0.3"}`,
			BaseURL: "https://pets.example/v1", Ciphertext: []byte("sealed"), KeyID: "k1"})
		if err != nil {
			t.Fatalf("Put(petstore) = %v", err)
		}
		after := time.Now()
		checkStamp(t, "CreatedAt", pet.CreatedAt, before, after)
		checkStamp(t, "UpdatedAt", pet.UpdatedAt, before, after)
		want := store.OpenAPIImport{WorkspaceID: a.ID, Name: "petstore", Document: `{"openapi":"3.0.3"}`,
			BaseURL: "https://pets.example/v1", Ciphertext: []byte("sealed"), KeyID: "k1", CreatedAt: pet.CreatedAt, UpdatedAt: pet.UpdatedAt}
		if diff := cmp.Diff(want, pet); diff != "" {
			t.Errorf("Put(petstore) mismatch (-want +got):\n%s", diff)
		}
		zoo, err := imports.Put(ctx, store.OpenAPIImport{WorkspaceID: a.ID, Name: "zoo", Document: "openapi: 3.0.3\n"})
		if err != nil {
			t.Fatalf("Put(zoo, no credentials) = %v", err)
		}
		other, err := imports.Put(ctx, store.OpenAPIImport{WorkspaceID: b.ID, Name: "petstore", Document: "openapi: 3.1.0\n"})
		if err != nil {
			t.Fatalf("Put(b petstore) = %v; the name is taken in a only", err)
		}

		// Put again replaces the document, keeps CreatedAt and drops the
		// credentials it no longer carries.
		time.Sleep(2 * time.Millisecond)
		pet2, err := imports.Put(ctx, store.OpenAPIImport{WorkspaceID: a.ID, Name: "petstore", Document: "openapi: 3.0.4\n"})
		if err != nil {
			t.Fatalf("Put(petstore again) = %v", err)
		}
		if !pet2.CreatedAt.Equal(pet.CreatedAt) || !pet2.UpdatedAt.After(pet.UpdatedAt) {
			t.Errorf("Put(petstore again) created %v updated %v; want created %v kept and updated later than %v",
				pet2.CreatedAt, pet2.UpdatedAt, pet.CreatedAt, pet.UpdatedAt)
		}

		list, err := imports.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List(a) = %v", err)
		}
		if diff := cmp.Diff([]store.OpenAPIImport{pet2, zoo}, list); diff != "" {
			t.Errorf("List(a) mismatch, want the replaced petstore then zoo (-want +got):\n%s", diff)
		}
		all, err := imports.ListAll(ctx)
		if err != nil {
			t.Fatalf("ListAll = %v", err)
		}
		if len(all) != 3 {
			t.Errorf("ListAll = %d imports, want 3", len(all))
		}

		wantErr(t, "Delete(b, a's zoo)", imports.Delete(ctx, b.ID, "zoo"), store.ErrNotFound)
		if err := imports.Delete(ctx, a.ID, "petstore"); err != nil {
			t.Fatalf("Delete(a petstore) = %v", err)
		}
		wantErr(t, "Delete twice", imports.Delete(ctx, a.ID, "petstore"), store.ErrNotFound)
		list, err = imports.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List(a) after delete = %v", err)
		}
		if diff := cmp.Diff([]store.OpenAPIImport{zoo}, list); diff != "" {
			t.Errorf("List(a) after delete (-want +got):\n%s", diff)
		}
		list, err = imports.List(ctx, b.ID)
		if diff := cmp.Diff([]store.OpenAPIImport{other}, list); err != nil || diff != "" {
			t.Errorf("List(b) = %v, want b's petstore untouched (-want +got):\n%s", err, diff)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		imports := st.OpenAPIImports()
		ok := store.OpenAPIImport{WorkspaceID: a.ID, Name: "one", Document: "openapi: 3.0.3\n"}
		for name, mutate := range map[string]func(i *store.OpenAPIImport){
			"no workspace":       func(i *store.OpenAPIImport) { i.WorkspaceID = "" },
			"no name":            func(i *store.OpenAPIImport) { i.Name = " " },
			"no document":        func(i *store.OpenAPIImport) { i.Document = "\n" },
			"ciphertext, no key": func(i *store.OpenAPIImport) { i.Ciphertext = []byte("x") },
		} {
			i := ok
			mutate(&i)
			_, err := imports.Put(ctx, i)
			wantErr(t, "Put("+name+")", err, store.ErrInvalid)
		}
		orphan := ok
		orphan.WorkspaceID = store.NewID()
		_, err := imports.Put(ctx, orphan)
		wantErr(t, "Put(unknown workspace)", err, store.ErrNotFound)
		if list, err := imports.List(ctx, a.ID); err != nil || len(list) != 0 {
			t.Errorf("List(a) = %v, %v; want nothing stored by refused puts", list, err)
		}
	})
}

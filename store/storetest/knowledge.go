package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

// mustKnowledgeBase creates a persistent base named name, or a temporary
// one when expires is set.
func mustKnowledgeBase(t *testing.T, st store.Store, workspaceID, name string, expires time.Time) store.KnowledgeBase {
	t.Helper()
	kb, err := st.KnowledgeBases().Create(t.Context(), store.KnowledgeBase{
		WorkspaceID: workspaceID, Name: name, IndexName: workspaceID + "_kb_" + name, ExpiresAt: expires,
	})
	if err != nil {
		t.Fatalf("Create knowledge base %q: %v", name, err)
	}
	return kb
}

func kbNames(kbs []store.KnowledgeBase) []string {
	names := make([]string, 0, len(kbs))
	for _, kb := range kbs {
		names = append(names, kb.Name)
	}
	return names
}

func testKnowledgeBases(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetListUpdate", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		kbs := st.KnowledgeBases()

		settings := json.RawMessage(`{"chunk_size": 800, "overlap": 100}`)
		in := store.KnowledgeBase{WorkspaceID: a.ID, Name: "handbook", Description: "HR policies",
			IndexName: a.ID + "_kb_handbook", Settings: settings, Documents: 2, Chunks: 40}
		before := time.Now()
		created, err := kbs.Create(ctx, in)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		after := time.Now()
		if created.ID == "" || created.Temporary() || created.Documents != 2 || created.Chunks != 40 || created.IndexName != in.IndexName {
			t.Errorf("Create = %+v, want an ID, persistent, the given counts and index", created)
		}
		checkStamp(t, "CreatedAt", created.CreatedAt, before, after)
		if !created.UpdatedAt.Equal(created.CreatedAt) {
			t.Errorf("new base UpdatedAt = %v, want CreatedAt %v", created.UpdatedAt, created.CreatedAt)
		}
		got, err := kbs.Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if diff := cmp.Diff(created, got, jsonEqual); diff != "" {
			t.Errorf("Get differs from Create (-created +got):\n%s", diff)
		}
		got, err = kbs.GetByName(ctx, a.ID, "handbook")
		if err != nil {
			t.Fatalf("GetByName = %v", err)
		}
		if diff := cmp.Diff(created, got, jsonEqual); diff != "" {
			t.Errorf("GetByName differs from Create (-created +got):\n%s", diff)
		}

		// List: persistent bases by name; temporary ones are left out.
		mustKnowledgeBase(t, st, a.ID, "zebra", time.Time{})
		mustKnowledgeBase(t, st, a.ID, "Alpha", time.Time{})
		temp := mustKnowledgeBase(t, st, a.ID, "chat-upload", time.Now().Add(time.Hour))
		if !temp.Temporary() {
			t.Errorf("base with ExpiresAt: Temporary() = false")
		}
		list, err := kbs.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List = %v", err)
		}
		if diff := cmp.Diff([]string{"Alpha", "handbook", "zebra"}, kbNames(list)); diff != "" {
			t.Errorf("List names, want persistent bases by name (-want +got):\n%s", diff)
		}
		_, err = kbs.GetByName(ctx, a.ID, "chat-upload")
		wantErr(t, "GetByName(temporary base)", err, store.ErrNotFound)
		gotTemp, err := kbs.Get(ctx, a.ID, temp.ID)
		if err != nil {
			t.Fatalf("Get(temporary) = %v", err)
		}
		if diff := cmp.Diff(temp, gotTemp, jsonEqual); diff != "" {
			t.Errorf("Get(temporary) differs from Create (-created +got):\n%s", diff)
		}

		// Update rewrites name and description only.
		change := created
		change.Name = "employee-handbook"
		change.Description = ""
		change.Settings = json.RawMessage(`{"chunk_size": 400}`)
		change.IndexName = "ignored"
		change.Documents, change.Chunks = 99, 99
		updated, err := kbs.Update(ctx, change)
		if err != nil {
			t.Fatalf("Update = %v", err)
		}
		want := created
		want.Name, want.Description = change.Name, ""
		want.UpdatedAt = updated.UpdatedAt
		if diff := cmp.Diff(want, updated, jsonEqual); diff != "" {
			t.Errorf("Update, want name and description changed only (-want +got):\n%s", diff)
		}
		if updated.UpdatedAt.Before(created.UpdatedAt) {
			t.Errorf("Update UpdatedAt = %v, before the previous %v", updated.UpdatedAt, created.UpdatedAt)
		}
		got, err = kbs.Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get after Update = %v", err)
		}
		if diff := cmp.Diff(updated, got, jsonEqual); diff != "" {
			t.Errorf("Get after Update (-updated +got):\n%s", diff)
		}
		_, err = kbs.GetByName(ctx, a.ID, "handbook")
		wantErr(t, "GetByName(old name)", err, store.ErrNotFound)

		change.Name = "zebra"
		_, err = kbs.Update(ctx, change)
		wantErr(t, "Update(name of another base)", err, store.ErrConflict)
		missing := change
		missing.ID = store.NewID()
		missing.Name = "fresh"
		_, err = kbs.Update(ctx, missing)
		wantErr(t, "Update(unknown id)", err, store.ErrNotFound)
	})

	t.Run("NamesUniqueAmongPersistentBases", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		kbs := st.KnowledgeBases()
		mustKnowledgeBase(t, st, a.ID, "docs", time.Time{})
		_, err := kbs.Create(ctx, store.KnowledgeBase{WorkspaceID: a.ID, Name: "docs", IndexName: "other"})
		wantErr(t, "Create(persistent name taken)", err, store.ErrConflict)

		// The name is free in another workspace, and temporary bases may
		// share it, with each other and with the persistent one.
		mustKnowledgeBase(t, st, b.ID, "docs", time.Time{})
		exp := time.Now().Add(time.Hour)
		t1 := mustKnowledgeBase(t, st, a.ID, "docs", exp)
		t2 := mustKnowledgeBase(t, st, a.ID, "docs", exp)
		if t1.ID == t2.ID {
			t.Errorf("two temporary bases got the same id %s", t1.ID)
		}
		// Renaming a temporary base to a taken name is no conflict either.
		other := mustKnowledgeBase(t, st, a.ID, "scratch", exp)
		other.Name = "docs"
		if _, err := kbs.Update(ctx, other); err != nil {
			t.Errorf("Update(temporary base to a persistent base's name) = %v", err)
		}
		got, err := kbs.GetByName(ctx, a.ID, "docs")
		if err != nil || got.Temporary() {
			t.Errorf("GetByName(docs) = %+v, %v; want the persistent base", got, err)
		}
	})

	t.Run("Validation", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		kbs := st.KnowledgeBases()
		ok := mustKnowledgeBase(t, st, a.ID, "ok", time.Time{})
		for _, tc := range []struct {
			name string
			edit func(*store.KnowledgeBase)
		}{
			{"no workspace", func(kb *store.KnowledgeBase) { kb.WorkspaceID = "" }},
			{"no name", func(kb *store.KnowledgeBase) { kb.Name = "" }},
			{"no index", func(kb *store.KnowledgeBase) { kb.IndexName = "" }},
			{"negative documents", func(kb *store.KnowledgeBase) { kb.Documents = -1 }},
			{"negative chunks", func(kb *store.KnowledgeBase) { kb.Chunks = -1 }},
			{"bad settings", func(kb *store.KnowledgeBase) { kb.Settings = json.RawMessage(`{"chunk_size":`) }},
		} {
			kb := store.KnowledgeBase{WorkspaceID: a.ID, Name: "x", IndexName: "ix"}
			tc.edit(&kb)
			_, err := kbs.Create(ctx, kb)
			wantErr(t, "Create("+tc.name+")", err, store.ErrInvalid)
			kb = ok
			tc.edit(&kb)
			_, err = kbs.Update(ctx, kb)
			wantErr(t, "Update("+tc.name+")", err, store.ErrInvalid)
		}
		_, err := kbs.Create(ctx, store.KnowledgeBase{WorkspaceID: store.NewID(), Name: "x", IndexName: "ix"})
		wantErr(t, "Create(unknown workspace)", err, store.ErrNotFound)
		got, err := kbs.Get(ctx, a.ID, ok.ID)
		if err != nil || got.Name != "ok" {
			t.Errorf("Get after refused updates = %+v, %v; want the base unchanged", got, err)
		}
	})

	t.Run("WorkspaceIsolation", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		kbs := st.KnowledgeBases()
		kb := mustKnowledgeBase(t, st, a.ID, "secret", time.Time{})

		_, err := kbs.Get(ctx, b.ID, kb.ID)
		wantErr(t, "Get(B, A's base)", err, store.ErrNotFound)
		_, err = kbs.GetByName(ctx, b.ID, "secret")
		wantErr(t, "GetByName(B, A's name)", err, store.ErrNotFound)
		list, err := kbs.List(ctx, b.ID)
		if err != nil || len(list) != 0 {
			t.Errorf("List(B) = %v, %v; want none", kbNames(list), err)
		}
		steal := kb
		steal.WorkspaceID = b.ID
		steal.Name = "stolen"
		_, err = kbs.Update(ctx, steal)
		wantErr(t, "Update(B, A's base)", err, store.ErrNotFound)
		err = kbs.PutSource(ctx, b.ID, store.KnowledgeSource{KnowledgeBaseID: kb.ID, Name: "x.txt", Documents: 1, Chunks: 1})
		wantErr(t, "PutSource(B, A's base)", err, store.ErrNotFound)
		_, err = kbs.ListSources(ctx, b.ID, kb.ID)
		wantErr(t, "ListSources(B, A's base)", err, store.ErrNotFound)
		err = kbs.Delete(ctx, b.ID, kb.ID)
		wantErr(t, "Delete(B, A's base)", err, store.ErrNotFound)

		got, err := kbs.Get(ctx, a.ID, kb.ID)
		if err != nil {
			t.Fatalf("Get(A) after B's attempts = %v", err)
		}
		if diff := cmp.Diff(kb, got, jsonEqual); diff != "" {
			t.Errorf("A's base changed by B (-before +after):\n%s", diff)
		}
	})

	t.Run("Sources", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		kbs := st.KnowledgeBases()
		kb := mustKnowledgeBase(t, st, a.ID, "docs", time.Time{})
		other := mustKnowledgeBase(t, st, a.ID, "other", time.Time{})

		counts := func(what string, docs, chunks int) {
			t.Helper()
			got, err := kbs.Get(ctx, a.ID, kb.ID)
			if err != nil {
				t.Fatalf("Get after %s = %v", what, err)
			}
			if got.Documents != docs || got.Chunks != chunks {
				t.Errorf("after %s: %d documents, %d chunks; want %d, %d", what, got.Documents, got.Chunks, docs, chunks)
			}
		}
		put := func(src store.KnowledgeSource) {
			t.Helper()
			if err := kbs.PutSource(ctx, a.ID, src); err != nil {
				t.Fatalf("PutSource(%s) = %v", src.Name, err)
			}
		}
		manual := store.KnowledgeSource{KnowledgeBaseID: kb.ID, Name: "manual.pdf", Documents: 1, Chunks: 12,
			Record: json.RawMessage(`{"parts": {"manual.pdf": 12}}`)}
		put(manual)
		put(store.KnowledgeSource{KnowledgeBaseID: kb.ID, Name: "faq.txt", Documents: 2, Chunks: 3})
		put(store.KnowledgeSource{KnowledgeBaseID: other.ID, Name: "faq.txt", Documents: 5, Chunks: 50})
		counts("two sources", 3, 15)

		got, err := kbs.GetSource(ctx, a.ID, kb.ID, "manual.pdf")
		if err != nil {
			t.Fatalf("GetSource = %v", err)
		}
		manual.UpdatedAt = got.UpdatedAt
		if diff := cmp.Diff(manual, got, jsonEqual); diff != "" {
			t.Errorf("GetSource (-put +got):\n%s", diff)
		}
		if got.UpdatedAt.IsZero() {
			t.Error("GetSource: UpdatedAt not stamped")
		}

		// Putting a name again replaces it, and the counts follow.
		put(store.KnowledgeSource{KnowledgeBaseID: kb.ID, Name: "manual.pdf", Documents: 1, Chunks: 4})
		counts("replacing manual.pdf", 3, 7)
		list, err := kbs.ListSources(ctx, a.ID, kb.ID)
		if err != nil {
			t.Fatalf("ListSources = %v", err)
		}
		var names []string
		for _, src := range list {
			names = append(names, fmt.Sprintf("%s:%d/%d:%s", src.Name, src.Documents, src.Chunks, src.Record))
		}
		if diff := cmp.Diff([]string{"faq.txt:2/3:", "manual.pdf:1/4:"}, names); diff != "" {
			t.Errorf("ListSources, by name (-want +got):\n%s", diff)
		}

		if err := kbs.DeleteSource(ctx, a.ID, kb.ID, "faq.txt"); err != nil {
			t.Fatalf("DeleteSource = %v", err)
		}
		counts("deleting faq.txt", 1, 4)
		wantErr(t, "DeleteSource(twice)", kbs.DeleteSource(ctx, a.ID, kb.ID, "faq.txt"), store.ErrNotFound)
		_, err = kbs.GetSource(ctx, a.ID, kb.ID, "faq.txt")
		wantErr(t, "GetSource(deleted)", err, store.ErrNotFound)
		if got, _ := kbs.GetSource(ctx, a.ID, other.ID, "faq.txt"); got.Chunks != 50 {
			t.Errorf("the other base's faq.txt = %+v, want it untouched", got)
		}

		// Another workspace reaches none of it.
		_, err = kbs.GetSource(ctx, b.ID, kb.ID, "manual.pdf")
		wantErr(t, "GetSource(B, A's base)", err, store.ErrNotFound)
		wantErr(t, "DeleteSource(B, A's base)", kbs.DeleteSource(ctx, b.ID, kb.ID, "manual.pdf"), store.ErrNotFound)
		err = kbs.PutSource(ctx, a.ID, store.KnowledgeSource{KnowledgeBaseID: store.NewID(), Name: "x", Documents: 1})
		wantErr(t, "PutSource(unknown base)", err, store.ErrNotFound)
		for _, bad := range []store.KnowledgeSource{
			{KnowledgeBaseID: kb.ID, Documents: 1},
			{KnowledgeBaseID: kb.ID, Name: "x", Chunks: -1},
			{KnowledgeBaseID: kb.ID, Name: "x", Record: json.RawMessage(`{"parts"`)},
		} {
			wantErr(t, fmt.Sprintf("PutSource(%+v)", bad), kbs.PutSource(ctx, a.ID, bad), store.ErrInvalid)
		}
		counts("refused puts", 1, 4)

		// Ingest workers in several processes record their files at once:
		// no source and no count may be lost.
		const workers, perWorker = 8, 5
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error // guarded by mu
		)
		start := make(chan struct{})
		for w := range workers {
			wg.Go(func() {
				<-start
				for i := range perWorker {
					src := store.KnowledgeSource{KnowledgeBaseID: kb.ID, Name: fmt.Sprintf("w%d-%d.txt", w, i), Documents: 1, Chunks: 3}
					if err := kbs.PutSource(ctx, a.ID, src); err != nil {
						mu.Lock()
						errs = append(errs, fmt.Errorf("worker %d put %d: %w", w, i, err))
						mu.Unlock()
						return
					}
				}
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			t.Error(err)
		}
		counts("concurrent puts", 1+workers*perWorker, 4+3*workers*perWorker)
		if list, err := kbs.ListSources(ctx, a.ID, kb.ID); err != nil || len(list) != 1+workers*perWorker {
			t.Errorf("ListSources after concurrent puts = %d sources, %v; want %d", len(list), err, 1+workers*perWorker)
		}

		// Deleting the base deletes its sources.
		if err := kbs.Delete(ctx, a.ID, kb.ID); err != nil {
			t.Fatal(err)
		}
		_, err = kbs.GetSource(ctx, a.ID, kb.ID, "manual.pdf")
		wantErr(t, "GetSource(deleted base)", err, store.ErrNotFound)
	})

	t.Run("DeleteCascadesIngestJobs", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		kbs := st.KnowledgeBases()
		kb := mustKnowledgeBase(t, st, a.ID, "docs", time.Time{})
		keep := mustKnowledgeBase(t, st, a.ID, "keep", time.Time{})
		job := mustIngestJob(t, st, a.ID, kb.ID)
		kept := mustIngestJob(t, st, a.ID, keep.ID)

		if err := kbs.Delete(ctx, a.ID, kb.ID); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		_, err := kbs.Get(ctx, a.ID, kb.ID)
		wantErr(t, "Get(deleted base)", err, store.ErrNotFound)
		_, err = st.IngestJobs().Get(ctx, a.ID, job.ID)
		wantErr(t, "Get(job of deleted base)", err, store.ErrNotFound)
		err = kbs.Delete(ctx, a.ID, kb.ID)
		wantErr(t, "Delete(deleted base)", err, store.ErrNotFound)
		if _, err := st.IngestJobs().Get(ctx, a.ID, kept.ID); err != nil {
			t.Errorf("Get(job of another base) after Delete = %v", err)
		}
		// The name is free again.
		mustKnowledgeBase(t, st, a.ID, "docs", time.Time{})
	})

	t.Run("Expired", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		kbs := st.KnowledgeBases()
		at := store.Timestamp(time.Now())
		// Created out of order, in two workspaces.
		second := mustKnowledgeBase(t, st, b.ID, "second", at.Add(-2*time.Hour))
		third := mustKnowledgeBase(t, st, a.ID, "third", at.Add(-time.Minute))
		first := mustKnowledgeBase(t, st, a.ID, "first", at.Add(-3*time.Hour))
		boundary := mustKnowledgeBase(t, st, b.ID, "boundary", at)
		mustKnowledgeBase(t, st, a.ID, "future", at.Add(time.Microsecond))
		mustKnowledgeBase(t, st, a.ID, "persistent", time.Time{})

		got, err := kbs.Expired(ctx, at, 0)
		if err != nil {
			t.Fatalf("Expired = %v", err)
		}
		want := []store.KnowledgeBase{first, second, third, boundary}
		if diff := cmp.Diff(want, got, jsonEqual); diff != "" {
			t.Errorf("Expired, want expired temporary bases of every workspace, oldest first (-want +got):\n%s", diff)
		}
		got, err = kbs.Expired(ctx, at, 2)
		if err != nil {
			t.Fatalf("Expired(limit 2) = %v", err)
		}
		if diff := cmp.Diff([]string{"first", "second"}, kbNames(got)); diff != "" {
			t.Errorf("Expired(limit 2) (-want +got):\n%s", diff)
		}
		got, err = kbs.Expired(ctx, at.Add(-4*time.Hour), 0)
		if err != nil || len(got) != 0 {
			t.Errorf("Expired(before any expiry) = %v, %v; want none", kbNames(got), err)
		}
		// Deleting what Expired found is how the sweeper works.
		for _, kb := range want {
			if err := kbs.Delete(ctx, kb.WorkspaceID, kb.ID); err != nil {
				t.Errorf("Delete(%s) = %v", kb.Name, err)
			}
		}
		got, err = kbs.Expired(ctx, at, 0)
		if err != nil || len(got) != 0 {
			t.Errorf("Expired after deleting = %v, %v; want none", kbNames(got), err)
		}
	})
}

// mustIngestJob creates a queued job of one file in the base.
func mustIngestJob(t *testing.T, st store.Store, workspaceID, kbID string) store.IngestJob {
	t.Helper()
	j, err := st.IngestJobs().Create(t.Context(), store.IngestJob{
		WorkspaceID: workspaceID, KnowledgeBaseID: kbID,
		Files: []store.IngestFile{{UploadID: store.NewID(), Name: "a.pdf"}},
	})
	if err != nil {
		t.Fatalf("Create ingest job: %v", err)
	}
	return j
}

func testIngestJobs(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetUpdate", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		kb := mustKnowledgeBase(t, st, a.ID, "docs", time.Time{})
		jobs := st.IngestJobs()

		files := []store.IngestFile{
			{UploadID: store.NewID(), Name: "guide.pdf"},
			{UploadID: store.NewID(), Name: "notes.md"},
			{UploadID: store.NewID(), Name: "photo.png"},
		}
		before := time.Now()
		created, err := jobs.Create(ctx, store.IngestJob{WorkspaceID: a.ID, KnowledgeBaseID: kb.ID, Files: files})
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		after := time.Now()
		if created.ID == "" || created.Status != store.IngestQueued || created.KnowledgeBaseID != kb.ID {
			t.Errorf("Create = %+v, want an ID, status queued and the base", created)
		}
		checkStamp(t, "CreatedAt", created.CreatedAt, before, after)
		if !created.UpdatedAt.Equal(created.CreatedAt) {
			t.Errorf("new job UpdatedAt = %v, want CreatedAt %v", created.UpdatedAt, created.CreatedAt)
		}
		got, err := jobs.Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if diff := cmp.Diff(created, got); diff != "" {
			t.Errorf("Get differs from Create (-created +got):\n%s", diff)
		}

		// A worker takes it and reports progress file by file.
		progress := got
		progress.Status = store.IngestRunning
		progress.Files[0].Status, progress.Files[0].Documents, progress.Files[0].Chunks = "ok", 1, 12
		progress.Files[1].Status, progress.Files[1].Error = "failed", "notes.md: unreadable"
		progress.FilesDone, progress.Chunks = 2, 12
		progress.KnowledgeBaseID = kb.ID
		updated, err := jobs.Update(ctx, progress)
		if err != nil {
			t.Fatalf("Update(running) = %v", err)
		}
		want := progress
		want.UpdatedAt = updated.UpdatedAt
		if diff := cmp.Diff(want, updated); diff != "" {
			t.Errorf("Update(running) (-want +got):\n%s", diff)
		}
		if updated.UpdatedAt.Before(created.UpdatedAt) || !updated.CreatedAt.Equal(created.CreatedAt) {
			t.Errorf("Update stamps created %v updated %v; want created %v kept, updated not before %v",
				updated.CreatedAt, updated.UpdatedAt, created.CreatedAt, created.UpdatedAt)
		}
		got, err = jobs.Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get after Update = %v", err)
		}
		if diff := cmp.Diff(updated, got); diff != "" {
			t.Errorf("Get after Update (-updated +got):\n%s", diff)
		}

		progress.Status = store.IngestSucceeded
		progress.Files[2].Status = "skipped"
		progress.FilesDone = 3
		progress.Error = "1 of 3 files failed"
		done, err := jobs.Update(ctx, progress)
		if err != nil {
			t.Fatalf("Update(succeeded) = %v", err)
		}
		if done.Status != store.IngestSucceeded || done.FilesDone != 3 || done.Error != progress.Error || done.Files[2].Status != "skipped" {
			t.Errorf("Update(succeeded) = %+v", done)
		}

		// Final: a late writer cannot overwrite the outcome.
		late := progress
		late.Status = store.IngestFailed
		late.Error = "lease lost"
		_, err = jobs.Update(ctx, late)
		wantErr(t, "Update(job already succeeded)", err, store.ErrConflict)
		got, err = jobs.Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get after refused Update = %v", err)
		}
		if diff := cmp.Diff(done, got); diff != "" {
			t.Errorf("refused Update changed the job (-want +got):\n%s", diff)
		}

		missing := progress
		missing.ID = store.NewID()
		missing.Status = store.IngestRunning
		_, err = jobs.Update(ctx, missing)
		wantErr(t, "Update(unknown job)", err, store.ErrNotFound)
	})

	t.Run("CreateFinalAndFailed", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		kb := mustKnowledgeBase(t, st, a.ID, "docs", time.Time{})
		in := store.IngestJob{WorkspaceID: a.ID, KnowledgeBaseID: kb.ID, Status: store.IngestFailed,
			Files:     []store.IngestFile{{UploadID: "u1", Name: "x.bin", Status: "failed", Error: "unsupported type"}},
			FilesDone: 1, Error: "no file could be read"}
		created, err := st.IngestJobs().Create(ctx, in)
		if err != nil {
			t.Fatalf("Create(failed) = %v", err)
		}
		got, err := st.IngestJobs().Get(ctx, a.ID, created.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		want := in
		want.ID, want.CreatedAt, want.UpdatedAt = created.ID, created.CreatedAt, created.UpdatedAt
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Get(failed job) (-want +got):\n%s", diff)
		}
		_, err = st.IngestJobs().Update(ctx, got)
		wantErr(t, "Update(job created failed)", err, store.ErrConflict)
	})

	t.Run("NotFoundAndValidation", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		kb := mustKnowledgeBase(t, st, a.ID, "docs", time.Time{})
		jobs := st.IngestJobs()
		files := []store.IngestFile{{UploadID: "u", Name: "a.txt"}}

		for _, tc := range []struct {
			name string
			job  store.IngestJob
			want error
		}{
			{"unknown base", store.IngestJob{WorkspaceID: a.ID, KnowledgeBaseID: store.NewID(), Files: files}, store.ErrNotFound},
			{"another workspace's base", store.IngestJob{WorkspaceID: b.ID, KnowledgeBaseID: kb.ID, Files: files}, store.ErrNotFound},
			{"unknown workspace", store.IngestJob{WorkspaceID: store.NewID(), KnowledgeBaseID: kb.ID, Files: files}, store.ErrNotFound},
			{"no workspace", store.IngestJob{KnowledgeBaseID: kb.ID, Files: files}, store.ErrInvalid},
			{"no base", store.IngestJob{WorkspaceID: a.ID, Files: files}, store.ErrInvalid},
			{"no files", store.IngestJob{WorkspaceID: a.ID, KnowledgeBaseID: kb.ID}, store.ErrInvalid},
			{"unknown status", store.IngestJob{WorkspaceID: a.ID, KnowledgeBaseID: kb.ID, Files: files, Status: "paused"}, store.ErrInvalid},
		} {
			_, err := jobs.Create(ctx, tc.job)
			wantErr(t, "Create("+tc.name+")", err, tc.want)
		}
		list, err := jobs.List(ctx, a.ID, kb.ID, 0)
		if err != nil || len(list) != 0 {
			t.Errorf("List after refused creates = %d jobs, %v; want none", len(list), err)
		}

		job := mustIngestJob(t, st, a.ID, kb.ID)
		_, err = jobs.Get(ctx, b.ID, job.ID)
		wantErr(t, "Get(B, A's job)", err, store.ErrNotFound)
		_, err = jobs.Get(ctx, a.ID, store.NewID())
		wantErr(t, "Get(unknown job)", err, store.ErrNotFound)
		steal := job
		steal.WorkspaceID = b.ID
		steal.Status = store.IngestFailed
		_, err = jobs.Update(ctx, steal)
		wantErr(t, "Update(B, A's job)", err, store.ErrNotFound)
		_, err = jobs.List(ctx, b.ID, kb.ID, 0)
		wantErr(t, "List(B, A's base)", err, store.ErrNotFound)
		_, err = jobs.List(ctx, a.ID, store.NewID(), 0)
		wantErr(t, "List(unknown base)", err, store.ErrNotFound)

		bad := job
		bad.Status = "paused"
		_, err = jobs.Update(ctx, bad)
		wantErr(t, "Update(unknown status)", err, store.ErrInvalid)
		bad = job
		bad.Files = nil
		_, err = jobs.Update(ctx, bad)
		wantErr(t, "Update(no files)", err, store.ErrInvalid)
		got, err := jobs.Get(ctx, a.ID, job.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if diff := cmp.Diff(job, got); diff != "" {
			t.Errorf("refused updates changed the job (-want +got):\n%s", diff)
		}

		// The base is deleted under a running job: its update finds nothing.
		if err := st.KnowledgeBases().Delete(ctx, a.ID, kb.ID); err != nil {
			t.Fatalf("Delete base = %v", err)
		}
		job.Status = store.IngestRunning
		_, err = jobs.Update(ctx, job)
		wantErr(t, "Update(job of a deleted base)", err, store.ErrNotFound)
	})

	t.Run("ListNewestFirst", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		kb := mustKnowledgeBase(t, st, a.ID, "docs", time.Time{})
		other := mustKnowledgeBase(t, st, a.ID, "other", time.Time{})
		jobs := st.IngestJobs()

		list, err := jobs.List(ctx, a.ID, kb.ID, 0)
		if err != nil || len(list) != 0 {
			t.Errorf("List(no jobs yet) = %d jobs, %v; want none and no error", len(list), err)
		}
		var created []store.IngestJob
		for range 5 {
			created = append(created, mustIngestJob(t, st, a.ID, kb.ID))
		}
		mustIngestJob(t, st, a.ID, other.ID)
		list, err = jobs.List(ctx, a.ID, kb.ID, 0)
		if err != nil {
			t.Fatalf("List = %v", err)
		}
		want := []store.IngestJob{created[4], created[3], created[2], created[1], created[0]}
		if diff := cmp.Diff(want, list); diff != "" {
			t.Errorf("List, want the base's jobs newest first (-want +got):\n%s", diff)
		}
		list, err = jobs.List(ctx, a.ID, kb.ID, 2)
		if err != nil {
			t.Fatalf("List(limit 2) = %v", err)
		}
		if diff := cmp.Diff(want[:2], list); diff != "" {
			t.Errorf("List(limit 2) (-want +got):\n%s", diff)
		}
	})
}

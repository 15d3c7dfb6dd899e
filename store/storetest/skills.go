package storetest

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func testSkills(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		skills := st.Skills()

		binary := []byte{0, 1, 2, 0xff, 0xfe}
		before := time.Now()
		got, err := skills.Create(ctx, store.Skill{WorkspaceID: a.ID, Name: "meeting-notes", Description: "Turn a transcript into minutes.",
			Instructions: "# Minutes\n\nWrite decisions first.\n", License: "MIT", Compatibility: "any", AllowedTools: "calculator current_time",
			Metadata: map[string]string{"author": "ops", "version": "1.0"},
			Files: []store.SkillFile{
				{Path: "templates/minutes.md", Data: []byte("## Decisions\n")},
				{Path: "assets/logo.bin", Data: binary},
				{Path: "empty.txt", Data: nil},
			}})
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		after := time.Now()
		checkStamp(t, "CreatedAt", got.CreatedAt, before, after)
		want := store.Skill{WorkspaceID: a.ID, Name: "meeting-notes", Description: "Turn a transcript into minutes.",
			Instructions: "# Minutes\n\nWrite decisions first.\n", License: "MIT", Compatibility: "any", AllowedTools: "calculator current_time",
			Metadata: map[string]string{"author": "ops", "version": "1.0"},
			// Ordered by path, sizes set, no data.
			Files:     []store.SkillFile{{Path: "assets/logo.bin", Size: 5}, {Path: "empty.txt", Size: 0}, {Path: "templates/minutes.md", Size: 13}},
			CreatedAt: got.CreatedAt, UpdatedAt: got.UpdatedAt}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Create mismatch (-want +got):\n%s", diff)
		}
		read, err := skills.Get(ctx, a.ID, "meeting-notes")
		if diff := cmp.Diff(want, read); err != nil || diff != "" {
			t.Errorf("Get = %v (-want +got):\n%s", err, diff)
		}
		f, err := skills.ReadFile(ctx, a.ID, "meeting-notes", "assets/logo.bin")
		if err != nil || !bytes.Equal(f.Data, binary) || f.Size != 5 {
			t.Errorf("ReadFile(assets/logo.bin) = %+v, %v; want the binary bytes back", f, err)
		}
		if f, err := skills.ReadFile(ctx, a.ID, "meeting-notes", "empty.txt"); err != nil || f.Data == nil || len(f.Data) != 0 {
			t.Errorf("ReadFile(empty.txt) = %+v, %v; want empty, non-nil data", f, err)
		}
		_, err = skills.ReadFile(ctx, a.ID, "meeting-notes", "missing.md")
		wantErr(t, "ReadFile(missing)", err, store.ErrNotFound)
		_, err = skills.ReadFile(ctx, b.ID, "meeting-notes", "empty.txt")
		wantErr(t, "ReadFile(b, a's skill)", err, store.ErrNotFound)

		// A skill without metadata or files reads back with nil metadata
		// and an empty file list.
		plain, err := skills.Create(ctx, store.Skill{WorkspaceID: a.ID, Name: "plain", Description: "d", Instructions: "i"})
		if err != nil {
			t.Fatalf("Create(plain) = %v", err)
		}
		if plain.Metadata != nil || plain.Files == nil || len(plain.Files) != 0 {
			t.Errorf("Create(plain) metadata %v files %#v; want nil metadata and an empty file list", plain.Metadata, plain.Files)
		}

		list, err := skills.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List = %v", err)
		}
		var names []string
		for _, s := range list {
			names = append(names, s.Name)
			if s.Files != nil {
				t.Errorf("List: %s has files %v; List reads none", s.Name, s.Files)
			}
		}
		if diff := cmp.Diff([]string{"meeting-notes", "plain"}, names); diff != "" {
			t.Errorf("List names (-want +got):\n%s", diff)
		}
		if list[0].Instructions != want.Instructions || list[0].Metadata["author"] != "ops" {
			t.Errorf("List[0] = %+v, want the instructions and metadata", list[0])
		}
		if list, err := skills.List(ctx, b.ID); err != nil || len(list) != 0 {
			t.Errorf("List(b) = %v, %v; want nothing from a", list, err)
		}
	})

	t.Run("Update", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		skills := st.Skills()
		orig, err := skills.Create(ctx, store.Skill{WorkspaceID: a.ID, Name: "style", Description: "v1", Instructions: "one",
			Metadata: map[string]string{"v": "1"}, Files: []store.SkillFile{{Path: "a.md", Data: []byte("A")}}})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		// Nil files keep the stored ones.
		up, err := skills.Update(ctx, store.Skill{WorkspaceID: a.ID, Name: "style", Description: "v2", Instructions: "two"})
		if err != nil {
			t.Fatalf("Update(keep files) = %v", err)
		}
		if !up.CreatedAt.Equal(orig.CreatedAt) || !up.UpdatedAt.After(orig.UpdatedAt) {
			t.Errorf("Update created %v updated %v; want created %v kept, updated later than %v", up.CreatedAt, up.UpdatedAt, orig.CreatedAt, orig.UpdatedAt)
		}
		if up.Description != "v2" || up.Instructions != "two" || up.Metadata != nil {
			t.Errorf("Update = %+v; want v2, two and the metadata removed", up)
		}
		if diff := cmp.Diff([]store.SkillFile{{Path: "a.md", Size: 1}}, up.Files); diff != "" {
			t.Errorf("Update with nil files changed them (-want +got):\n%s", diff)
		}
		// Non-nil files replace them.
		up, err = skills.Update(ctx, store.Skill{WorkspaceID: a.ID, Name: "style", Description: "v3", Instructions: "three",
			Files: []store.SkillFile{{Path: "b.md", Data: []byte("BB")}}})
		if err != nil {
			t.Fatalf("Update(replace files) = %v", err)
		}
		if diff := cmp.Diff([]store.SkillFile{{Path: "b.md", Size: 2}}, up.Files); diff != "" {
			t.Errorf("Update replacing files (-want +got):\n%s", diff)
		}
		_, err = skills.ReadFile(ctx, a.ID, "style", "a.md")
		wantErr(t, "ReadFile(replaced a.md)", err, store.ErrNotFound)
		// An empty list removes them.
		up, err = skills.Update(ctx, store.Skill{WorkspaceID: a.ID, Name: "style", Description: "v4", Instructions: "four", Files: []store.SkillFile{}})
		if err != nil || len(up.Files) != 0 {
			t.Errorf("Update(no files) = %+v, %v; want no files", up.Files, err)
		}
		_, err = skills.Update(ctx, store.Skill{WorkspaceID: b.ID, Name: "style", Description: "x", Instructions: "x"})
		wantErr(t, "Update(b, a's skill)", err, store.ErrNotFound)
		_, err = skills.Update(ctx, store.Skill{WorkspaceID: a.ID, Name: "nope", Description: "x", Instructions: "x", Files: []store.SkillFile{{Path: "p", Data: []byte("x")}}})
		wantErr(t, "Update(unknown)", err, store.ErrNotFound)
		if got, err := skills.Get(ctx, a.ID, "style"); err != nil || got.Description != "v4" {
			t.Errorf("Get after updates = %+v, %v", got, err)
		}
	})

	t.Run("DeleteAndErrors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		skills := st.Skills()
		ok := store.Skill{WorkspaceID: a.ID, Name: "notes", Description: "d", Instructions: "i", Files: []store.SkillFile{{Path: "x.md", Data: []byte("x")}}}
		if _, err := skills.Create(ctx, ok); err != nil {
			t.Fatal(err)
		}
		_, err := skills.Create(ctx, ok)
		wantErr(t, "Create(taken name)", err, store.ErrConflict)
		other := ok
		other.WorkspaceID = b.ID
		if _, err := skills.Create(ctx, other); err != nil {
			t.Errorf("Create(same name in b) = %v; names are unique per workspace", err)
		}
		for name, mutate := range map[string]func(s *store.Skill){
			"no workspace":   func(s *store.Skill) { s.WorkspaceID = "" },
			"no name":        func(s *store.Skill) { s.Name = " " },
			"no description": func(s *store.Skill) { s.Description = "" },
			"empty path":     func(s *store.Skill) { s.Files = []store.SkillFile{{Path: ""}} },
			"repeated path":  func(s *store.Skill) { s.Files = []store.SkillFile{{Path: "a"}, {Path: "a"}} },
		} {
			s := ok
			s.Name = "fresh"
			mutate(&s)
			_, err := skills.Create(ctx, s)
			wantErr(t, "Create("+name+")", err, store.ErrInvalid)
		}
		orphan := ok
		orphan.WorkspaceID, orphan.Name = store.NewID(), "orphan"
		_, err = skills.Create(ctx, orphan)
		wantErr(t, "Create(unknown workspace)", err, store.ErrNotFound)

		wantErr(t, "Delete(unknown)", skills.Delete(ctx, b.ID, "missing"), store.ErrNotFound)
		if err := skills.Delete(ctx, a.ID, "notes"); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		wantErr(t, "Delete twice", skills.Delete(ctx, a.ID, "notes"), store.ErrNotFound)
		_, err = skills.Get(ctx, a.ID, "notes")
		wantErr(t, "Get after delete", err, store.ErrNotFound)
		_, err = skills.ReadFile(ctx, a.ID, "notes", "x.md")
		wantErr(t, "ReadFile after delete (files go with the skill)", err, store.ErrNotFound)
		// Recreating the name starts without the old files.
		again := ok
		again.Files = nil
		got, err := skills.Create(ctx, again)
		if err != nil || len(got.Files) != 0 {
			t.Errorf("Create after delete = %+v, %v; want no files left over", got.Files, err)
		}
		if got, err := skills.Get(ctx, b.ID, "notes"); err != nil || len(got.Files) != 1 {
			t.Errorf("Get(b notes) = %+v, %v; want b's copy untouched", got, err)
		}
	})

	t.Run("ConcurrentUpdates", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		skills := st.Skills()
		if _, err := skills.Create(ctx, store.Skill{WorkspaceID: a.ID, Name: "race", Description: "d", Instructions: "i"}); err != nil {
			t.Fatal(err)
		}
		// Each writer replaces the files with its own set; whichever wins,
		// the skill ends with one writer's set, never a mixture.
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				files := []store.SkillFile{{Path: "w" + string(rune('0'+i)) + "-1"}, {Path: "w" + string(rune('0'+i)) + "-2"}}
				if _, err := skills.Update(ctx, store.Skill{WorkspaceID: a.ID, Name: "race", Description: "d", Instructions: "i", Files: files}); err != nil {
					t.Errorf("Update #%d = %v", i, err)
				}
			})
		}
		wg.Wait()
		got, err := skills.Get(ctx, a.ID, "race")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Files) != 2 || got.Files[0].Path[:2] != got.Files[1].Path[:2] {
			t.Errorf("files after concurrent replacements = %v; want one writer's two files", got.Files)
		}
	})
}

package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func testToolSettings(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("SetList", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		settings := st.ToolSettings()

		if list, err := settings.List(ctx, a.ID); err != nil || len(list) != 0 {
			t.Fatalf("List(new workspace) = %+v, %v; want no rows", list, err)
		}
		before := time.Now()
		off, err := settings.Set(ctx, store.ToolSetting{WorkspaceID: a.ID, Tool: "calculator", Enabled: false})
		if err != nil {
			t.Fatalf("Set(calculator off) = %v", err)
		}
		after := time.Now()
		checkStamp(t, "UpdatedAt", off.UpdatedAt, before, after)
		on, err := settings.Set(ctx, store.ToolSetting{WorkspaceID: a.ID, Tool: "files__read_file", Enabled: true})
		if err != nil {
			t.Fatalf("Set(files__read_file on) = %v", err)
		}
		other, err := settings.Set(ctx, store.ToolSetting{WorkspaceID: b.ID, Tool: "calculator", Enabled: true})
		if err != nil {
			t.Fatalf("Set(b calculator on) = %v", err)
		}

		list, err := settings.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List(a) = %v", err)
		}
		if diff := cmp.Diff([]store.ToolSetting{off, on}, list); diff != "" {
			t.Errorf("List(a) mismatch, want ordered by tool (-want +got):\n%s", diff)
		}
		list, err = settings.List(ctx, b.ID)
		if err != nil {
			t.Fatalf("List(b) = %v", err)
		}
		if diff := cmp.Diff([]store.ToolSetting{other}, list); diff != "" {
			t.Errorf("List(b) mismatch, want only b's setting (-want +got):\n%s", diff)
		}

		// Set again replaces the row rather than adding one.
		time.Sleep(time.Millisecond)
		again, err := settings.Set(ctx, store.ToolSetting{WorkspaceID: a.ID, Tool: "calculator", Enabled: true})
		if err != nil {
			t.Fatalf("Set(calculator on) = %v", err)
		}
		if !again.UpdatedAt.After(off.UpdatedAt) {
			t.Errorf("second Set UpdatedAt = %v, want after %v", again.UpdatedAt, off.UpdatedAt)
		}
		list, err = settings.List(ctx, a.ID)
		if err != nil {
			t.Fatalf("List(a) after update = %v", err)
		}
		if diff := cmp.Diff([]store.ToolSetting{again, on}, list); diff != "" {
			t.Errorf("List(a) after update mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		settings := st.ToolSettings()
		_, err := settings.Set(ctx, store.ToolSetting{Tool: "calculator"})
		wantErr(t, "Set(no workspace)", err, store.ErrInvalid)
		_, err = settings.Set(ctx, store.ToolSetting{WorkspaceID: a.ID, Tool: " "})
		wantErr(t, "Set(no tool)", err, store.ErrInvalid)
		_, err = settings.Set(ctx, store.ToolSetting{WorkspaceID: store.NewID(), Tool: "calculator"})
		wantErr(t, "Set(unknown workspace)", err, store.ErrNotFound)
	})
}

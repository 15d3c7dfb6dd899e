package storetest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func testAuditLog(t *testing.T, open func(t *testing.T) store.Store) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 654321000, time.UTC)
	ev := func(ws store.Workspace, at time.Time, actor, action, target, details string) store.AuditEvent {
		e := store.AuditEvent{WorkspaceID: ws.ID, Actor: actor, Action: action, Target: target, CreatedAt: at}
		if details != "" {
			e.Details = json.RawMessage(details)
		}
		return e
	}
	list := func(t *testing.T, st store.Store, f store.AuditFilter) store.AuditPage {
		t.Helper()
		page, err := st.AuditLog().List(t.Context(), f)
		if err != nil {
			t.Fatalf("List(%+v) = %v", f, err)
		}
		return page
	}

	t.Run("AppendList", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		first := ev(a, t0, "apikey:k1", "agent.create", "agent:support", `{"model": "openai/gpt-4o"}`)
		first.ID = store.NewID()
		second := ev(a, time.Time{}, "system", "pii.detected", "", `{"direction": "input", "entities": {"Global.Email": 1}, "count": 1}`)
		before := time.Now()
		if err := st.AuditLog().Append(ctx, first, second); err != nil {
			t.Fatalf("Append = %v", err)
		}
		after := time.Now()
		page := list(t, st, store.AuditFilter{WorkspaceID: a.ID})
		if len(page.Events) != 2 || page.Next != "" {
			t.Fatalf("List = %d events, next %q; want 2 and no next page", len(page.Events), page.Next)
		}
		got := page.Events[0] // stamped now, so newer than t0
		if got.ID == "" {
			t.Errorf("Append assigned no ID")
		}
		checkStamp(t, "stamped CreatedAt", got.CreatedAt, before, after)
		second.ID, second.CreatedAt = got.ID, got.CreatedAt
		if diff := cmp.Diff([]store.AuditEvent{second, first}, page.Events, jsonEqual); diff != "" {
			t.Errorf("List mismatch, want newest first (-want +got):\n%s", diff)
		}
		// No details stay none.
		bare := ev(a, t0.Add(-time.Hour), "cli", "apikey.revoke", "apikey:k1", "")
		if err := st.AuditLog().Append(ctx, bare); err != nil {
			t.Fatalf("Append(no details) = %v", err)
		}
		page = list(t, st, store.AuditFilter{WorkspaceID: a.ID, Action: "apikey.revoke"})
		if len(page.Events) != 1 || page.Events[0].Details != nil {
			t.Errorf("event without details listed as %+v, want one with nil Details", page.Events)
		}
		if err := st.AuditLog().Append(ctx); err != nil {
			t.Errorf("Append() with no events = %v, want nil", err)
		}
	})

	t.Run("Filters", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		events := []store.AuditEvent{
			ev(a, t0, "apikey:k1", "guard.block", "agent:support", `{"rule": "weapons"}`),
			ev(a, t0.Add(1*time.Second), "apikey:k1", "guard.warn", "agent:support", ""),
			ev(a, t0.Add(2*time.Second), "apikey:k2", "guard.log", "", ""),
			ev(a, t0.Add(3*time.Second), "apikey:k2", "guardian.create", "", ""),
			ev(a, t0.Add(4*time.Second), "cli", "credential.put", "provider:openai", ""),
			ev(a, t0.Add(5*time.Second), "cli", "guard", "", ""),
		}
		for i := range events {
			events[i].ID = store.NewID()
		}
		if err := st.AuditLog().Append(ctx, events...); err != nil {
			t.Fatalf("Append = %v", err)
		}
		pick := func(idx ...int) []store.AuditEvent {
			out := []store.AuditEvent{}
			for _, i := range idx {
				out = append(out, events[i])
			}
			return out
		}
		tests := []struct {
			name string
			f    store.AuditFilter
			want []store.AuditEvent
		}{
			{"all", store.AuditFilter{}, pick(5, 4, 3, 2, 1, 0)},
			{"action exact", store.AuditFilter{Action: "guard.warn"}, pick(1)},
			{"action exact is not a prefix", store.AuditFilter{Action: "guard"}, pick(5)},
			{"action prefix", store.AuditFilter{Action: "guard."}, pick(2, 1, 0)},
			{"action unknown", store.AuditFilter{Action: "kb.delete"}, pick()},
			{"actor", store.AuditFilter{Actor: "apikey:k2"}, pick(3, 2)},
			{"target", store.AuditFilter{Target: "agent:support"}, pick(1, 0)},
			{"since inclusive", store.AuditFilter{Since: t0.Add(4 * time.Second)}, pick(5, 4)},
			{"until exclusive", store.AuditFilter{Until: t0.Add(2 * time.Second)}, pick(1, 0)},
			{"since and until", store.AuditFilter{Since: t0.Add(time.Second), Until: t0.Add(3 * time.Second)}, pick(2, 1)},
			{"combined", store.AuditFilter{Action: "guard.", Actor: "apikey:k1", Target: "agent:support", Since: t0.Add(time.Second)}, pick(1)},
			{"limit", store.AuditFilter{Limit: 2}, pick(5, 4)},
		}
		for _, tt := range tests {
			tt.f.WorkspaceID = a.ID
			page := list(t, st, tt.f)
			if diff := cmp.Diff(tt.want, page.Events, jsonEqual); diff != "" {
				t.Errorf("%s: List mismatch (-want +got):\n%s", tt.name, diff)
			}
		}
	})

	t.Run("Paging", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		// 250 events, several to a timestamp, so that paging must break
		// ties by id; appended in batches out of time order.
		var events []store.AuditEvent
		for i := range 250 {
			e := ev(a, t0.Add(time.Duration(i/4)*time.Millisecond), "system", "agent.update", fmt.Sprintf("agent:a%03d", i), fmt.Sprintf(`{"i": %d}`, i))
			events = append(events, e)
		}
		for lo := 0; lo < len(events); lo += 50 {
			batch := events[lo:min(lo+50, len(events))]
			// Reverse each batch: insertion order must not matter.
			rev := make([]store.AuditEvent, len(batch))
			for i, e := range batch {
				rev[len(batch)-1-i] = e
			}
			if err := st.AuditLog().Append(ctx, rev...); err != nil {
				t.Fatalf("Append batch at %d = %v", lo, err)
			}
		}
		if page := list(t, st, store.AuditFilter{WorkspaceID: a.ID}); len(page.Events) != store.DefaultAuditLimit || page.Next == "" {
			t.Errorf("List with no limit = %d events, next %q; want %d and a next page", len(page.Events), page.Next, store.DefaultAuditLimit)
		}
		if page := list(t, st, store.AuditFilter{WorkspaceID: a.ID, Limit: 5000}); len(page.Events) != 250 || page.Next != "" {
			t.Errorf("List with limit 5000 = %d events, next %q; want all 250 and no next page", len(page.Events), page.Next)
		}

		seen := map[string]bool{}
		var got []store.AuditEvent
		f := store.AuditFilter{WorkspaceID: a.ID, Limit: 7}
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatalf("paging did not end after %d pages", pages)
			}
			page := list(t, st, f)
			if len(page.Events) > f.Limit {
				t.Fatalf("page %d has %d events, want at most %d", pages, len(page.Events), f.Limit)
			}
			for _, e := range page.Events {
				if seen[e.ID] {
					t.Errorf("event %s (%s) listed twice", e.ID, e.Target)
				}
				seen[e.ID] = true
				got = append(got, e)
			}
			// Events appended while paging are newer than every page
			// still to come: they must not show up in those pages.
			if err := st.AuditLog().Append(ctx, ev(a, time.Time{}, "system", "agent.create", "agent:late", "")); err != nil {
				t.Fatalf("Append while paging = %v", err)
			}
			if page.Next == "" {
				break
			}
			f.Cursor = page.Next
		}
		if len(got) != 250 {
			t.Fatalf("paging listed %d events, want 250 (no gaps, no late appends)", len(got))
		}
		for i := 1; i < len(got); i++ {
			p, c := got[i-1], got[i]
			if c.CreatedAt.After(p.CreatedAt) || c.CreatedAt.Equal(p.CreatedAt) && c.ID >= p.ID {
				t.Fatalf("events %d and %d out of order: (%v, %s) then (%v, %s)", i-1, i, p.CreatedAt, p.ID, c.CreatedAt, c.ID)
			}
		}
		for _, e := range got {
			if e.Target == "agent:late" {
				t.Errorf("an event appended while paging appeared in a later page")
			}
		}
	})

	t.Run("WorkspaceIsolation", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		if err := st.AuditLog().Append(ctx,
			ev(a, t0, "system", "agent.create", "agent:x", ""),
			ev(b, t0, "system", "agent.create", "agent:y", "")); err != nil {
			t.Fatalf("Append = %v", err)
		}
		for _, ws := range []store.Workspace{a, b} {
			page := list(t, st, store.AuditFilter{WorkspaceID: ws.ID})
			if len(page.Events) != 1 || page.Events[0].WorkspaceID != ws.ID {
				t.Errorf("List(%s) = %+v, want only its own event", ws.Name, page.Events)
			}
		}
		// A cursor from workspace a does not reveal a's events to b.
		for range 3 {
			if err := st.AuditLog().Append(ctx, ev(a, time.Time{}, "system", "agent.update", "agent:x", "")); err != nil {
				t.Fatal(err)
			}
		}
		pa := list(t, st, store.AuditFilter{WorkspaceID: a.ID, Limit: 1})
		pb := list(t, st, store.AuditFilter{WorkspaceID: b.ID, Cursor: pa.Next})
		for _, e := range pb.Events {
			if e.WorkspaceID != b.ID {
				t.Errorf("List(b, a's cursor) returned event of workspace %s", e.WorkspaceID)
			}
		}
		if page := list(t, st, store.AuditFilter{WorkspaceID: "no-such-workspace"}); len(page.Events) != 0 {
			t.Errorf("List(unknown workspace) = %d events, want none", len(page.Events))
		}
	})

	t.Run("MalformedCursor", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		for _, c := range []string{
			"not a cursor!",
			base64.RawURLEncoding.EncodeToString([]byte("12345")),
			base64.RawURLEncoding.EncodeToString([]byte("abc:id")),
			base64.RawURLEncoding.EncodeToString([]byte("-5:id")),
			base64.RawURLEncoding.EncodeToString([]byte("12345:")),
		} {
			_, err := st.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: a.ID, Cursor: c})
			wantErr(t, fmt.Sprintf("List(cursor %q)", c), err, store.ErrInvalid)
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		good := ev(a, t0, "system", "agent.create", "agent:x", `{"k": 1}`)
		bad := []struct {
			name string
			e    store.AuditEvent
			want error
		}{
			{"no workspace", ev(store.Workspace{}, t0, "system", "agent.create", "", ""), store.ErrInvalid},
			{"no action", ev(a, t0, "system", "", "", ""), store.ErrInvalid},
			{"no actor", ev(a, t0, "", "agent.create", "", ""), store.ErrInvalid},
			{"details not JSON", ev(a, t0, "system", "agent.create", "", `{"k":`), store.ErrInvalid},
			{"details an array", ev(a, t0, "system", "agent.create", "", `[1, 2]`), store.ErrInvalid},
			{"unknown workspace", ev(store.Workspace{ID: "no-such-workspace"}, t0, "system", "agent.create", "", ""), store.ErrNotFound},
		}
		for _, tt := range bad {
			// Alongside a good event: all are stored or none.
			err := st.AuditLog().Append(ctx, good, tt.e)
			wantErr(t, "Append(good, "+tt.name+")", err, tt.want)
		}
		if page := list(t, st, store.AuditFilter{WorkspaceID: a.ID}); len(page.Events) != 0 {
			t.Errorf("after refused appends List = %d events, want none (all or nothing)", len(page.Events))
		}
		dup := good
		dup.ID = store.NewID()
		if err := st.AuditLog().Append(ctx, dup); err != nil {
			t.Fatalf("Append = %v", err)
		}
		wantErr(t, "Append(same id again)", st.AuditLog().Append(ctx, dup), store.ErrConflict)
	})
}

package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/store"
)

func mustConversation(t *testing.T, st store.Store, c store.Conversation) store.Conversation {
	t.Helper()
	got, err := st.Conversations().Create(t.Context(), c)
	if err != nil {
		t.Fatalf("Create conversation %+v: %v", c, err)
	}
	return got
}

func userText(s string) store.Message { return store.Message{Role: store.MessageUser, Content: s} }

func testConversations(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetRenameSummarizeDelete", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		cs := st.Conversations()
		before := time.Now()
		c, err := cs.Create(ctx, store.Conversation{WorkspaceID: a.ID, Title: "Trip", Owner: "user:u1", Agent: "helper",
			ExternalRef: "openwebui:chat-1"})
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		after := time.Now()
		if c.ID == "" || c.LastSeq != 0 || c.SummarizedThrough != 0 {
			t.Errorf("Create = %+v, want an id, no messages and no summary", c)
		}
		checkStamp(t, "CreatedAt", c.CreatedAt, before, after)
		if !c.UpdatedAt.Equal(c.CreatedAt) {
			t.Errorf("UpdatedAt = %v, want CreatedAt %v", c.UpdatedAt, c.CreatedAt)
		}
		got, err := cs.Get(ctx, a.ID, c.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("Get differs from Create (-create +get):\n%s", diff)
		}
		got, err = cs.GetByExternalRef(ctx, a.ID, "user:u1", "openwebui:chat-1")
		if err != nil || got.ID != c.ID {
			t.Errorf("GetByExternalRef = %s, %v; want %s", got.ID, err, c.ID)
		}
		_, err = cs.GetByExternalRef(ctx, a.ID, "user:u1", "openwebui:other")
		wantErr(t, "GetByExternalRef(unknown)", err, store.ErrNotFound)
		_, err = cs.GetByExternalRef(ctx, a.ID, "user:u2", "openwebui:chat-1")
		wantErr(t, "GetByExternalRef(another owner's ref)", err, store.ErrNotFound)
		// A ref is unique per owner in the workspace: the same owner may
		// not take it twice, another owner has a thread of their own by
		// it; no ref at all may repeat.
		_, err = cs.Create(ctx, store.Conversation{WorkspaceID: a.ID, Owner: "user:u1", ExternalRef: "openwebui:chat-1"})
		wantErr(t, "Create(taken ref)", err, store.ErrConflict)
		other, err := cs.Create(ctx, store.Conversation{WorkspaceID: a.ID, Owner: "user:u2", ExternalRef: "openwebui:chat-1"})
		if err != nil || other.ID == c.ID {
			t.Fatalf("Create(same ref, another owner) = %+v, %v; want a conversation of its own", other, err)
		}
		if got, err := cs.GetByExternalRef(ctx, a.ID, "user:u2", "openwebui:chat-1"); err != nil || got.ID != other.ID {
			t.Errorf("GetByExternalRef(u2) = %s, %v; want %s", got.ID, err, other.ID)
		}
		mustConversation(t, st, store.Conversation{WorkspaceID: a.ID, Owner: "user:u1"})
		mustConversation(t, st, store.Conversation{WorkspaceID: a.ID, Owner: "user:u1"})

		renamed, err := cs.Rename(ctx, a.ID, c.ID, "Trip to Kyoto")
		if err != nil {
			t.Fatalf("Rename = %v", err)
		}
		if renamed.Title != "Trip to Kyoto" || renamed.Agent != "helper" || renamed.UpdatedAt.Before(c.UpdatedAt) {
			t.Errorf("Rename = %+v, want the new title, the rest kept, updated_at moved", renamed)
		}

		// A summary may not cover messages that do not exist.
		_, err = cs.Summarize(ctx, a.ID, c.ID, "too far", 1)
		wantErr(t, "Summarize(through 1 of 0 messages)", err, store.ErrInvalid)
		if _, err := cs.Append(ctx, a.ID, c.ID, userText("one"), userText("two"), userText("three")); err != nil {
			t.Fatal(err)
		}
		sum, err := cs.Summarize(ctx, a.ID, c.ID, "The user counted.", 2)
		if err != nil {
			t.Fatalf("Summarize = %v", err)
		}
		if sum.Summary != "The user counted." || sum.SummarizedThrough != 2 || sum.LastSeq != 3 || sum.Title != "Trip to Kyoto" {
			t.Errorf("Summarize = %+v, want summary through 2 of 3, title kept", sum)
		}
		if got, _ := cs.Get(ctx, a.ID, c.ID); got.Summary != sum.Summary || got.SummarizedThrough != 2 {
			t.Errorf("Get after Summarize = %+v", got)
		}

		if err := cs.Delete(ctx, a.ID, c.ID); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		_, err = cs.Get(ctx, a.ID, c.ID)
		wantErr(t, "Get(deleted)", err, store.ErrNotFound)
		_, err = cs.Messages(ctx, store.MessageQuery{WorkspaceID: a.ID, ConversationID: c.ID})
		wantErr(t, "Messages(deleted)", err, store.ErrNotFound)
		err = cs.Delete(ctx, a.ID, c.ID)
		wantErr(t, "Delete(deleted)", err, store.ErrNotFound)
		// The ref is free again.
		mustConversation(t, st, store.Conversation{WorkspaceID: a.ID, Owner: "user:u1", ExternalRef: "openwebui:chat-1"})
	})

	t.Run("ListByOwnerPaged", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		var mine []string
		for i := range 7 {
			c := mustConversation(t, st, store.Conversation{WorkspaceID: a.ID, Owner: "apikey:k1", Title: fmt.Sprint(i)})
			mine = append(mine, c.ID)
			mustConversation(t, st, store.Conversation{WorkspaceID: a.ID, Owner: "apikey:k2", Title: fmt.Sprint(i)})
		}
		slices.Reverse(mine) // newest first
		var got []string
		cursor, pages := "", 0
		for {
			page, err := st.Conversations().List(ctx, store.ConversationFilter{WorkspaceID: a.ID, Owner: "apikey:k1", Limit: 3, Cursor: cursor})
			if err != nil {
				t.Fatalf("List page %d = %v", pages, err)
			}
			pages++
			for _, c := range page.Conversations {
				if c.Owner != "apikey:k1" {
					t.Errorf("List(k1) returned %s of owner %s", c.ID, c.Owner)
				}
				got = append(got, c.ID)
			}
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
		if diff := cmp.Diff(mine, got); diff != "" || pages != 3 {
			t.Errorf("List(k1) in pages of 3 = %d pages (-want +got):\n%s", pages, diff)
		}
		_, err := st.Conversations().List(ctx, store.ConversationFilter{WorkspaceID: a.ID})
		wantErr(t, "List(no owner)", err, store.ErrInvalid)
		_, err = st.Conversations().List(ctx, store.ConversationFilter{WorkspaceID: a.ID, Owner: "apikey:k1", Cursor: "not-a-cursor"})
		wantErr(t, "List(bad cursor)", err, store.ErrInvalid)
	})

	t.Run("AppendAndMessages", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		cs := st.Conversations()
		c := mustConversation(t, st, store.Conversation{WorkspaceID: a.ID, Owner: "user:u1"})
		calls := json.RawMessage(`[{"id":"c1","name":"calculator","arguments":"{\"expression\":\"2+2\"}"}]`)
		in := []store.Message{
			{Role: store.MessageSystem, Content: "Be brief."},
			userText("What is 2+2?"),
			{Role: store.MessageAssistant, ToolCalls: calls},
			{Role: store.MessageTool, Content: "4", ToolCallID: "c1"},
			{Role: store.MessageAssistant, Content: "4, with ünïcödé kept"},
		}
		before := time.Now()
		out, err := cs.Append(ctx, a.ID, c.ID, in...)
		if err != nil {
			t.Fatalf("Append = %v", err)
		}
		after := time.Now()
		for i, m := range out {
			if m.Seq != int64(i+1) || m.ConversationID != c.ID {
				t.Errorf("Append message %d = seq %d conversation %s, want seq %d of %s", i, m.Seq, m.ConversationID, i+1, c.ID)
			}
			checkStamp(t, "message CreatedAt", m.CreatedAt, before, after)
		}
		got, err := cs.Messages(ctx, store.MessageQuery{WorkspaceID: a.ID, ConversationID: c.ID})
		if err != nil {
			t.Fatalf("Messages = %v", err)
		}
		if diff := cmp.Diff(out, got, jsonEqual); diff != "" {
			t.Errorf("Messages differ from Append (-append +messages):\n%s", diff)
		}
		cur, _ := cs.Get(ctx, a.ID, c.ID)
		if cur.LastSeq != 5 || cur.UpdatedAt.Before(c.UpdatedAt) {
			t.Errorf("conversation after Append = last_seq %d updated %v, want 5 and moved", cur.LastSeq, cur.UpdatedAt)
		}
		more, err := cs.Append(ctx, a.ID, c.ID, userText("And 3+3?"))
		if err != nil || len(more) != 1 || more[0].Seq != 6 {
			t.Fatalf("second Append = %+v, %v; want seq 6", more, err)
		}

		seqs := func(q store.MessageQuery) []int64 {
			t.Helper()
			q.WorkspaceID, q.ConversationID = a.ID, c.ID
			ms, err := cs.Messages(ctx, q)
			if err != nil {
				t.Fatalf("Messages(%+v) = %v", q, err)
			}
			var s []int64
			for _, m := range ms {
				s = append(s, m.Seq)
			}
			return s
		}
		for _, tc := range []struct {
			q    store.MessageQuery
			want []int64
		}{
			{store.MessageQuery{After: 4}, []int64{5, 6}},
			{store.MessageQuery{Limit: 2}, []int64{1, 2}},
			{store.MessageQuery{After: 1, Limit: 2}, []int64{2, 3}},
			{store.MessageQuery{Limit: 2, Tail: true}, []int64{5, 6}},
			{store.MessageQuery{After: 5, Limit: 3, Tail: true}, []int64{6}},
			{store.MessageQuery{After: 6}, nil},
		} {
			if diff := cmp.Diff(tc.want, seqs(tc.q)); diff != "" {
				t.Errorf("Messages(%+v) seqs (-want +got):\n%s", tc.q, diff)
			}
		}

		for _, tc := range []struct {
			name string
			msgs []store.Message
		}{
			{"none", nil},
			{"bad role", []store.Message{{Role: "robot", Content: "x"}}},
			{"tool without call id", []store.Message{{Role: store.MessageTool, Content: "x"}}},
			{"tool calls not an array", []store.Message{{Role: store.MessageAssistant, ToolCalls: json.RawMessage(`{"id":1}`)}}},
			{"one bad among good", []store.Message{userText("fine"), {Role: "", Content: "x"}}},
			{"NUL byte", []store.Message{userText("a\x00b")}},
			{"invalid UTF-8", []store.Message{userText("a\xffb")}},
		} {
			_, err := cs.Append(ctx, a.ID, c.ID, tc.msgs...)
			wantErr(t, "Append("+tc.name+")", err, store.ErrInvalid)
		}
		if cur, _ := cs.Get(ctx, a.ID, c.ID); cur.LastSeq != 6 {
			t.Errorf("last_seq after refused appends = %d, want 6", cur.LastSeq)
		}
		_, err = cs.Append(ctx, a.ID, store.NewID(), userText("x"))
		wantErr(t, "Append(unknown conversation)", err, store.ErrNotFound)
	})

	t.Run("ConcurrentAppendsNeverShareASeq", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		c := mustConversation(t, st, store.Conversation{WorkspaceID: a.ID, Owner: "user:u1"})
		const writers, each = 8, 5
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					if _, err := st.Conversations().Append(ctx, a.ID, c.ID, userText(fmt.Sprintf("w%d-%d", w, i)), userText("pair")); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent Append = %v", err)
		}
		ms, err := st.Conversations().Messages(ctx, store.MessageQuery{WorkspaceID: a.ID, ConversationID: c.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 2*writers*each {
			t.Fatalf("messages after concurrent appends = %d, want %d", len(ms), 2*writers*each)
		}
		for i, m := range ms {
			if m.Seq != int64(i+1) {
				t.Fatalf("message %d has seq %d: seqs are not 1..n", i, m.Seq)
			}
			// Each append's pair stays together.
			if i%2 == 1 && m.Content != "pair" {
				t.Fatalf("message seq %d = %q: an append's messages were interleaved with another's", m.Seq, m.Content)
			}
		}
	})

	t.Run("WorkspaceIsolationAndValidation", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		cs := st.Conversations()
		c := mustConversation(t, st, store.Conversation{WorkspaceID: a.ID, Owner: "user:u1", ExternalRef: "ref-1", Title: "private"})
		if _, err := cs.Append(ctx, a.ID, c.ID, userText("secret")); err != nil {
			t.Fatal(err)
		}
		_, err := cs.Get(ctx, b.ID, c.ID)
		wantErr(t, "Get(B, A's)", err, store.ErrNotFound)
		_, err = cs.GetByExternalRef(ctx, b.ID, "user:u1", "ref-1")
		wantErr(t, "GetByExternalRef(B, A's ref)", err, store.ErrNotFound)
		page, err := cs.List(ctx, store.ConversationFilter{WorkspaceID: b.ID, Owner: "user:u1"})
		if err != nil || len(page.Conversations) != 0 {
			t.Errorf("List(B, same owner) = %+v, %v; want nothing", page, err)
		}
		_, err = cs.Rename(ctx, b.ID, c.ID, "mine now")
		wantErr(t, "Rename(B, A's)", err, store.ErrNotFound)
		_, err = cs.Summarize(ctx, b.ID, c.ID, "leaked", 0)
		wantErr(t, "Summarize(B, A's)", err, store.ErrNotFound)
		_, err = cs.Append(ctx, b.ID, c.ID, userText("injected"))
		wantErr(t, "Append(B, A's)", err, store.ErrNotFound)
		_, err = cs.Messages(ctx, store.MessageQuery{WorkspaceID: b.ID, ConversationID: c.ID})
		wantErr(t, "Messages(B, A's)", err, store.ErrNotFound)
		err = cs.Delete(ctx, b.ID, c.ID)
		wantErr(t, "Delete(B, A's)", err, store.ErrNotFound)
		// The same ref in another workspace is another conversation.
		mustConversation(t, st, store.Conversation{WorkspaceID: b.ID, Owner: "user:u1", ExternalRef: "ref-1"})
		got, err := cs.Get(ctx, a.ID, c.ID)
		if err != nil || got.Title != "private" || got.LastSeq != 1 {
			t.Errorf("A's conversation after B's attempts = %+v, %v; want it untouched", got, err)
		}
		ms, _ := cs.Messages(ctx, store.MessageQuery{WorkspaceID: a.ID, ConversationID: c.ID})
		if len(ms) != 1 || ms[0].Content != "secret" {
			t.Errorf("A's messages after B's attempts = %+v", ms)
		}

		long := strings.Repeat("x", store.MaxConversationTitle+1)
		for _, tc := range []struct {
			name string
			c    store.Conversation
			want error
		}{
			{"unknown workspace", store.Conversation{WorkspaceID: store.NewID(), Owner: "user:u1"}, store.ErrNotFound},
			{"no workspace", store.Conversation{Owner: "user:u1"}, store.ErrInvalid},
			{"no owner", store.Conversation{WorkspaceID: a.ID}, store.ErrInvalid},
			{"long title", store.Conversation{WorkspaceID: a.ID, Owner: "user:u1", Title: long}, store.ErrInvalid},
			{"summary at birth", store.Conversation{WorkspaceID: a.ID, Owner: "user:u1", Summary: "x"}, store.ErrInvalid},
			{"taken id", store.Conversation{ID: c.ID, WorkspaceID: a.ID, Owner: "user:u1"}, store.ErrConflict},
		} {
			_, err := cs.Create(ctx, tc.c)
			wantErr(t, "Create("+tc.name+")", err, tc.want)
		}
		_, err = cs.Rename(ctx, a.ID, c.ID, long)
		wantErr(t, "Rename(long title)", err, store.ErrInvalid)
		_, err = cs.Summarize(ctx, a.ID, c.ID, "x", -1)
		wantErr(t, "Summarize(-1)", err, store.ErrInvalid)
	})
}

func mustMemory(t *testing.T, st store.Store, m store.Memory) store.Memory {
	t.Helper()
	got, err := st.Memories().Create(t.Context(), m)
	if err != nil {
		t.Fatalf("Create memory %+v: %v", m, err)
	}
	return got
}

func testMemories(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateGetUpdateDelete", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		ms := st.Memories()
		before := time.Now()
		m, err := ms.Create(ctx, store.Memory{WorkspaceID: a.ID, Scope: store.MemoryUser, Visibility: store.MemoryPersonal,
			Owner: "user:u1", Text: "Prefers window seats", Source: "run:r1"})
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		after := time.Now()
		checkStamp(t, "CreatedAt", m.CreatedAt, before, after)
		got, err := ms.Get(ctx, a.ID, m.ID)
		if err != nil {
			t.Fatalf("Get = %v", err)
		}
		if diff := cmp.Diff(m, got); diff != "" {
			t.Errorf("Get differs from Create (-create +get):\n%s", diff)
		}
		up, err := ms.Update(ctx, a.ID, m.ID, "Prefers aisle seats")
		if err != nil {
			t.Fatalf("Update = %v", err)
		}
		if up.Text != "Prefers aisle seats" || up.Owner != m.Owner || up.Source != m.Source || !up.CreatedAt.Equal(m.CreatedAt) || up.UpdatedAt.Before(m.UpdatedAt) {
			t.Errorf("Update = %+v, want the new text and the rest kept", up)
		}
		_, err = ms.Update(ctx, a.ID, m.ID, "  ")
		wantErr(t, "Update(blank)", err, store.ErrInvalid)
		if err := ms.Delete(ctx, a.ID, m.ID); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		_, err = ms.Get(ctx, a.ID, m.ID)
		wantErr(t, "Get(deleted)", err, store.ErrNotFound)
		err = ms.Delete(ctx, a.ID, m.ID)
		wantErr(t, "Delete(deleted)", err, store.ErrNotFound)
		_, err = ms.Update(ctx, a.ID, m.ID, "x")
		wantErr(t, "Update(deleted)", err, store.ErrNotFound)
	})

	t.Run("ConversationMemoriesGoWithTheConversation", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		c := mustConversation(t, st, store.Conversation{WorkspaceID: a.ID, Owner: "user:u1"})
		m := mustMemory(t, st, store.Memory{WorkspaceID: a.ID, Scope: store.MemoryConversation, Visibility: store.MemoryPersonal,
			Owner: "user:u1", ConversationID: c.ID, Text: "We are planning Kyoto"})
		_, err := st.Memories().Create(ctx, store.Memory{WorkspaceID: b.ID, Scope: store.MemoryConversation, Visibility: store.MemoryPersonal,
			Owner: "user:u1", ConversationID: c.ID, Text: "into A's conversation from B"})
		wantErr(t, "Create(B, on A's conversation)", err, store.ErrNotFound)
		_, err = st.Memories().Create(ctx, store.Memory{WorkspaceID: a.ID, Scope: store.MemoryConversation, Visibility: store.MemoryPersonal,
			Owner: "user:u1", ConversationID: store.NewID(), Text: "nowhere"})
		wantErr(t, "Create(unknown conversation)", err, store.ErrNotFound)
		if err := st.Conversations().Delete(ctx, a.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		_, err = st.Memories().Get(ctx, a.ID, m.ID)
		wantErr(t, "Get(memory of a deleted conversation)", err, store.ErrNotFound)
	})

	t.Run("ListFiltersCountAndPages", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a := mustWorkspace(t, st, "a")
		c := mustConversation(t, st, store.Conversation{WorkspaceID: a.ID, Owner: "user:u1"})
		add := func(scope store.MemoryScope, vis store.MemoryVisibility, owner, conv, text string) store.Memory {
			return mustMemory(t, st, store.Memory{WorkspaceID: a.ID, Scope: scope, Visibility: vis, Owner: owner, ConversationID: conv, Text: text})
		}
		ws := add(store.MemoryWorkspace, store.MemoryGroup, "user:u2", "", "office closes at 6")
		p1 := add(store.MemoryUser, store.MemoryPersonal, "user:u1", "", "u1 likes tea")
		g2 := add(store.MemoryUser, store.MemoryGroup, "user:u2", "", "u2 is on call")
		p2 := add(store.MemoryUser, store.MemoryPersonal, "user:u2", "", "u2's secret")
		cv := add(store.MemoryConversation, store.MemoryPersonal, "user:u1", c.ID, "this chat is about tea")

		ids := func(f store.MemoryFilter) []string {
			t.Helper()
			f.WorkspaceID = a.ID
			page, err := st.Memories().List(ctx, f)
			if err != nil {
				t.Fatalf("List(%+v) = %v", f, err)
			}
			var out []string
			for _, m := range page.Memories {
				out = append(out, m.Text)
			}
			n, err := st.Memories().Count(ctx, f)
			if err != nil || n != len(out) {
				t.Errorf("Count(%+v) = %d, %v; want %d, List's length", f, n, err, len(out))
			}
			return out
		}
		texts := func(ms ...store.Memory) []string {
			var out []string
			for _, m := range ms {
				out = append(out, m.Text)
			}
			return out
		}
		for _, tc := range []struct {
			name string
			f    store.MemoryFilter
			want []string
		}{
			{"all", store.MemoryFilter{}, texts(cv, p2, g2, p1, ws)},
			{"scope user", store.MemoryFilter{Scope: store.MemoryUser}, texts(p2, g2, p1)},
			{"personal", store.MemoryFilter{Visibility: store.MemoryPersonal}, texts(cv, p2, p1)},
			{"owner u2", store.MemoryFilter{Owner: "user:u2"}, texts(p2, g2, ws)},
			{"conversation", store.MemoryFilter{ConversationID: c.ID}, texts(cv)},
			{"visible to u1", store.MemoryFilter{VisibleTo: "user:u1"}, texts(cv, g2, p1, ws)},
			{"visible to u3", store.MemoryFilter{VisibleTo: "user:u3"}, texts(g2, ws)},
			{"u1's user memories", store.MemoryFilter{Scope: store.MemoryUser, VisibleTo: "user:u1"}, texts(g2, p1)},
		} {
			if diff := cmp.Diff(tc.want, ids(tc.f)); diff != "" {
				t.Errorf("List(%s) (-want +got):\n%s", tc.name, diff)
			}
		}

		var paged []string
		cursor := ""
		for range 10 {
			page, err := st.Memories().List(ctx, store.MemoryFilter{WorkspaceID: a.ID, Limit: 2, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, texts(page.Memories...)...)
			if cursor = page.Next; cursor == "" {
				break
			}
		}
		if diff := cmp.Diff(texts(cv, p2, g2, p1, ws), paged); diff != "" {
			t.Errorf("List in pages of 2 (-want +got):\n%s", diff)
		}
	})

	t.Run("WorkspaceIsolationAndValidation", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		st := open(t)
		a, b := mustWorkspace(t, st, "a"), mustWorkspace(t, st, "b")
		ms := st.Memories()
		m := mustMemory(t, st, store.Memory{WorkspaceID: a.ID, Scope: store.MemoryWorkspace, Visibility: store.MemoryGroup, Owner: "user:u1", Text: "A's plan"})
		_, err := ms.Get(ctx, b.ID, m.ID)
		wantErr(t, "Get(B, A's)", err, store.ErrNotFound)
		_, err = ms.Update(ctx, b.ID, m.ID, "B's now")
		wantErr(t, "Update(B, A's)", err, store.ErrNotFound)
		err = ms.Delete(ctx, b.ID, m.ID)
		wantErr(t, "Delete(B, A's)", err, store.ErrNotFound)
		page, err := ms.List(ctx, store.MemoryFilter{WorkspaceID: b.ID})
		if err != nil || len(page.Memories) != 0 {
			t.Errorf("List(B) = %+v, %v; want nothing of A's", page, err)
		}
		if n, err := ms.Count(ctx, store.MemoryFilter{WorkspaceID: b.ID}); err != nil || n != 0 {
			t.Errorf("Count(B) = %d, %v; want 0", n, err)
		}
		if got, err := ms.Get(ctx, a.ID, m.ID); err != nil || got.Text != "A's plan" {
			t.Errorf("A's memory after B's attempts = %+v, %v", got, err)
		}

		ok := store.Memory{WorkspaceID: a.ID, Scope: store.MemoryUser, Visibility: store.MemoryPersonal, Owner: "user:u1", Text: "x"}
		with := func(f func(*store.Memory)) store.Memory { m := ok; f(&m); return m }
		for _, tc := range []struct {
			name string
			m    store.Memory
			want error
		}{
			{"unknown workspace", with(func(m *store.Memory) { m.WorkspaceID = store.NewID() }), store.ErrNotFound},
			{"no workspace", with(func(m *store.Memory) { m.WorkspaceID = "" }), store.ErrInvalid},
			{"no owner", with(func(m *store.Memory) { m.Owner = "" }), store.ErrInvalid},
			{"blank text", with(func(m *store.Memory) { m.Text = " \n" }), store.ErrInvalid},
			{"NUL in text", with(func(m *store.Memory) { m.Text = "a\x00b" }), store.ErrInvalid},
			{"long text", with(func(m *store.Memory) { m.Text = strings.Repeat("x", store.MaxMemoryText+1) }), store.ErrInvalid},
			{"bad scope", with(func(m *store.Memory) { m.Scope = "team" }), store.ErrInvalid},
			{"bad visibility", with(func(m *store.Memory) { m.Visibility = "public" }), store.ErrInvalid},
			{"personal workspace memory", with(func(m *store.Memory) { m.Scope = store.MemoryWorkspace }), store.ErrInvalid},
			{"conversation memory without conversation", with(func(m *store.Memory) { m.Scope = store.MemoryConversation }), store.ErrInvalid},
			{"user memory with conversation", with(func(m *store.Memory) { m.ConversationID = store.NewID() }), store.ErrInvalid},
			{"taken id", with(func(m *store.Memory) { m.ID = mustID(t, st, a.ID) }), store.ErrConflict},
		} {
			_, err := ms.Create(ctx, tc.m)
			wantErr(t, "Create("+tc.name+")", err, tc.want)
		}
	})
}

// mustID creates a memory and returns its id, for a create that reuses it.
func mustID(t *testing.T, st store.Store, workspaceID string) string {
	t.Helper()
	return mustMemory(t, st, store.Memory{WorkspaceID: workspaceID, Scope: store.MemoryUser, Visibility: store.MemoryGroup, Owner: "user:u9", Text: "taken"}).ID
}

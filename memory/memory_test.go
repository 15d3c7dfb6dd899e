package memory_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/memory"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/search"
	searchmem "github.com/agentcraftlab/agentcraft/search/memory"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

func openStore(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.MemoryPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func workspace(t testing.TB, st store.Store, name string) string {
	t.Helper()
	ws, err := st.Workspaces().Create(context.Background(), store.Workspace{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return ws.ID
}

// key is a principal acting through API key id.
func key(ws, id string) run.Principal {
	return run.Principal{WorkspaceID: ws, Actor: run.ActorAPIKey, ActorID: id}
}

// summarizer is a model that answers every request with a numbered
// summary and records what it was asked.
type summarizer struct {
	mu   sync.Mutex // guards reqs
	reqs []llm.Request
	fail error
}

func (s *summarizer) Generate(_ context.Context, req llm.Request) (llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if s.fail != nil {
		return llm.Response{}, s.fail
	}
	return llm.Response{Message: llm.Text(llm.RoleAssistant, fmt.Sprintf("summary #%d", len(s.reqs)))}, nil
}

func (s *summarizer) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	resp, err := s.Generate(ctx, req)
	if err != nil {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
	}
	return llm.Events(resp)
}

func texts(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+": "+m.Text())
	}
	return out
}

func TestOwner(t *testing.T) {
	for _, tc := range []struct {
		p    run.Principal
		want string
	}{
		{run.Principal{WorkspaceID: "w", UserID: "u1", Actor: run.ActorAPIKey, ActorID: "k1"}, "user:u1"},
		{run.Principal{WorkspaceID: "w", UserID: "u1", EndUser: "ignored"}, "user:u1"},
		{key("w", "k1"), "apikey:k1"},
		{run.Principal{Actor: run.ActorAPIKey, ActorID: "k1", EndUser: "alice@example.com"}, "apikey:k1/end-user:alice@example.com"},
		{run.Principal{Actor: run.ActorOAuthClient, ActorID: "c1"}, "oauth:c1"},
		{run.Principal{}, "system:agentcraft"},
	} {
		if got := memory.Owner(tc.p); got != tc.want {
			t.Errorf("Owner(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestConversationsBelongToTheirOwner(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	ws := workspace(t, st, "a")
	convs := memory.NewConversations(st, nil)
	a, b := key(ws, "k1"), key(ws, "k2")
	cv, err := convs.Create(ctx, a, memory.NewConversation{Title: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := convs.Get(ctx, a, cv.ID); err != nil {
		t.Errorf("Get(owner) = %v", err)
	}
	for name, err := range map[string]error{
		"Get":    func() error { _, err := convs.Get(ctx, b, cv.ID); return err }(),
		"Rename": func() error { _, err := convs.Rename(ctx, b, cv.ID, "theirs"); return err }(),
		"Messages": func() error {
			_, err := convs.Messages(ctx, b, cv.ID, 0, 0)
			return err
		}(),
		"Begin": func() error {
			_, _, err := convs.Begin(ctx, b, cv.ID, []llm.Message{llm.Text(llm.RoleUser, "hi")}, run.History{})
			return err
		}(),
		"Delete": convs.Delete(ctx, b, cv.ID),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s by another key = %v, want ErrNotFound", name, err)
		}
	}
	page, err := convs.List(ctx, b, 0, "")
	if err != nil || len(page.Conversations) != 0 {
		t.Errorf("List(other key) = %+v, %v; want none", page, err)
	}
	if got, _ := convs.Get(ctx, a, cv.ID); got.Title != "mine" {
		t.Errorf("title after the other key's rename = %q", got.Title)
	}

	// Attach creates once per ref and owner, and never hands over
	// another's: the other owner gets a thread of their own.
	c1, err := convs.Attach(ctx, a, "openwebui:x", "helper")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := convs.Attach(ctx, a, "openwebui:x", "helper")
	if err != nil || c2.ID != c1.ID {
		t.Errorf("second Attach = %s, %v; want %s", c2.ID, err, c1.ID)
	}
	if c3, err := convs.Attach(ctx, b, "openwebui:x", "helper"); err != nil || c3.ID == c1.ID || c3.Owner == c1.Owner {
		t.Errorf("Attach(other key, same ref) = %+v, %v; want a conversation of its own", c3, err)
	}
}

// turn runs one exchange through Begin and Finish as the run seam does,
// answering answer, and returns what was sent.
func turn(t *testing.T, convs *memory.Conversations, p run.Principal, id string, h run.History, answer string, in ...llm.Message) []llm.Message {
	t.Helper()
	send, fresh, err := convs.Begin(t.Context(), p, id, in, h)
	if err != nil {
		t.Fatalf("Begin = %v", err)
	}
	if err := convs.Finish(t.Context(), p, id, append(fresh, llm.Text(llm.RoleAssistant, answer))); err != nil {
		t.Fatalf("Finish = %v", err)
	}
	return send
}

func TestHistoryCompactsPastTheBudget(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	ws := workspace(t, st, "a")
	convs := memory.NewConversations(st, nil)
	p := key(ws, "k1")
	cv, err := convs.Create(ctx, p, memory.NewConversation{})
	if err != nil {
		t.Fatal(err)
	}
	sum := &summarizer{}
	// Each turn is ~30 tokens; a budget of 100 holds about three.
	h := run.History{BudgetTokens: 100, Summarizer: sum, ModelID: "m"}
	long := strings.Repeat("word ", 20)
	var sent [][]llm.Message
	for i := range 6 {
		sent = append(sent, turn(t, convs, p, cv.ID, h, fmt.Sprintf("answer %d", i), llm.Text(llm.RoleUser, fmt.Sprintf("question %d %s", i, long))))
	}
	// Before the budget is reached every turn goes verbatim.
	if got := len(sent[1]); got != 3 {
		t.Errorf("second request sent %d messages, want 3 (q0, a0, q1): %q", got, texts(sent[1]))
	}
	if len(sum.reqs) == 0 {
		t.Fatal("no compaction after six turns over a budget of 100 tokens")
	}
	cur, _ := convs.Get(ctx, p, cv.ID)
	if cur.Summary == "" || cur.SummarizedThrough == 0 {
		t.Fatalf("after compaction the conversation = %+v, want a summary and the seq it covers", cur)
	}
	last := sent[len(sent)-1]
	if last[0].Role != llm.RoleSystem || !strings.Contains(last[0].Text(), "summary #") {
		t.Errorf("last request starts with %q, want the summary as a system message", texts(last[:1]))
	}
	if got := last[len(last)-1].Text(); !strings.HasPrefix(got, "question 5") {
		t.Errorf("last request ends with %q, want the new question", got)
	}
	if last[1].Role != llm.RoleUser {
		t.Errorf("the verbatim turns start with %s, want a user message", last[1].Role)
	}
	total := 0
	for _, m := range last {
		total += memory.EstimateTokens(m.Text())
	}
	if total > 100 {
		t.Errorf("last request is about %d tokens, over the budget of 100", total)
	}
	// The summary request carried the previous summary once there was one.
	if len(sum.reqs) > 1 && !strings.Contains(sum.reqs[len(sum.reqs)-1].Messages[1].Text(), "Summary so far:\nsummary #") {
		t.Errorf("a later compaction did not carry the previous summary: %q", sum.reqs[len(sum.reqs)-1].Messages[1].Text())
	}
	// Every message is still stored: compaction only changes what is sent.
	all, err := convs.Messages(ctx, p, cv.ID, 0, 0)
	if err != nil || len(all) != 12 {
		t.Errorf("stored messages = %d, %v; want all 12", len(all), err)
	}

	// A failed summary leaves the stored summary and still bounds the request.
	sum.fail = errors.New("provider down")
	before, _ := convs.Get(ctx, p, cv.ID)
	for i := 6; i < 9; i++ {
		turn(t, convs, p, cv.ID, h, "a", llm.Text(llm.RoleUser, fmt.Sprintf("question %d %s", i, long)))
	}
	after, _ := convs.Get(ctx, p, cv.ID)
	if after.Summary != before.Summary || after.SummarizedThrough != before.SummarizedThrough {
		t.Errorf("a failed compaction changed the summary: %+v → %+v", before, after)
	}
}

func TestBeginWithClientHistory(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	ws := workspace(t, st, "a")
	convs := memory.NewConversations(st, nil)
	p := key(ws, "k1")
	cv, _ := convs.Create(ctx, p, memory.NewConversation{})
	h := run.History{ClientHistory: true}
	u := func(s string) llm.Message { return llm.Text(llm.RoleUser, s) }
	as := func(s string) llm.Message { return llm.Text(llm.RoleAssistant, s) }
	sys := llm.Text(llm.RoleSystem, "client system")

	// First request: nothing stored, everything is new.
	got := turn(t, convs, p, cv.ID, h, "a1", sys, u("q1"))
	want := []string{"system: client system", "user: q1"}
	if diff := cmp.Diff(want, texts(got)); diff != "" {
		t.Errorf("first request sent (-want +got):\n%s", diff)
	}
	// The client resends its history: only q2 is new; Open WebUI's
	// <details> block in the assistant turn does not break the match.
	got = turn(t, convs, p, cv.ID, h, "a2", sys, u("q1"), as("<details type=\"reasoning\">thinking</details>\na1"), u("q2"))
	want = []string{"system: client system", "user: q1", "assistant: a1", "user: q2"}
	if diff := cmp.Diff(want, texts(got)); diff != "" {
		t.Errorf("continuing request sent (-want +got):\n%s", diff)
	}
	// Regenerate a2: the client's branch goes as given; q2 is stored again
	// so the thread reads q2, a2, q2, a2'.
	got = turn(t, convs, p, cv.ID, h, "a2 again", sys, u("q1"), as("a1"), u("q2"))
	want = []string{"system: client system", "user: q1", "assistant: a1", "user: q2"}
	if diff := cmp.Diff(want, texts(got)); diff != "" {
		t.Errorf("regenerating request sent (-want +got):\n%s", diff)
	}
	stored, _ := convs.Messages(ctx, p, cv.ID, 0, 0)
	var seq []string
	for _, m := range stored {
		seq = append(seq, m.Content)
	}
	if diff := cmp.Diff([]string{"q1", "a1", "q2", "a2", "q2", "a2 again"}, seq); diff != "" {
		t.Errorf("stored thread (-want +got):\n%s", diff)
	}
	// A client that knows none of the thread (it began elsewhere) gets the
	// stored history before its message.
	got = turn(t, convs, p, cv.ID, h, "a3", u("q3"))
	if n := len(got); n != 7 || got[n-1].Text() != "q3" || got[0].Text() != "q1" {
		t.Errorf("request of a client new to the thread = %q, want the 6 stored turns then q3", texts(got))
	}
}

func newMemories(t testing.TB, st store.Store) (*memory.Memories, *searchmem.Engine) {
	t.Helper()
	eng, err := searchmem.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := memory.NewMemories(st, eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m, eng
}

func recallTexts(t *testing.T, m *memory.Memories, p run.Principal, q string, o memory.RecallOptions) []string {
	t.Helper()
	hits, err := m.Recall(t.Context(), p, q, o)
	if err != nil {
		t.Fatalf("Recall(%q) = %v", q, err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Text)
	}
	return out
}

func TestRecallSeesOnlyWhatTheCallerMay(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	ws, other := workspace(t, st, "a"), workspace(t, st, "b")
	m, _ := newMemories(t, st)
	a, b := key(ws, "k1"), key(ws, "k2")
	remember := func(p run.Principal, n memory.Note) store.Memory {
		t.Helper()
		row, err := m.Remember(ctx, p, n, nil)
		if err != nil {
			t.Fatalf("Remember(%+v) = %v", n, err)
		}
		return row
	}
	remember(a, memory.Note{Text: "A's passport number is in the blue folder"})
	remember(a, memory.Note{Text: "A's shared note: the blue folder is in room 4", Visibility: store.MemoryGroup})
	remember(b, memory.Note{Text: "B keeps the blue folder keys", Scope: store.MemoryWorkspace})
	remember(key(other, "k1"), memory.Note{Text: "the blue folder of workspace b", Scope: store.MemoryWorkspace})

	got := recallTexts(t, m, a, "blue folder", memory.RecallOptions{TopK: 10})
	if len(got) != 3 || !slicesContain(got, "A's passport number is in the blue folder") {
		t.Errorf("Recall(A) = %q, want A's personal memory and the two workspace-visible ones", got)
	}
	got = recallTexts(t, m, b, "blue folder passport", memory.RecallOptions{TopK: 10})
	for _, s := range got {
		if strings.Contains(s, "passport") {
			t.Errorf("Recall(B) returned A's personal memory %q", s)
		}
		if strings.Contains(s, "workspace b") {
			t.Errorf("Recall(B) returned another workspace's memory %q", s)
		}
	}
	if len(got) != 2 {
		t.Errorf("Recall(B) = %q, want the two workspace-visible memories", got)
	}

	// Conversation memories come only with their conversation, and only
	// for its owner.
	convs := memory.NewConversations(st, &memory.ConversationOptions{Memories: m})
	cv, _ := convs.Create(ctx, a, memory.NewConversation{})
	remember(a, memory.Note{Scope: store.MemoryConversation, ConversationID: cv.ID, Text: "in this chat the blue folder means the budget"})
	if got := recallTexts(t, m, a, "budget", memory.RecallOptions{}); len(got) != 0 {
		t.Errorf("Recall(A, outside the conversation) = %q, want nothing", got)
	}
	if got := recallTexts(t, m, a, "budget", memory.RecallOptions{ConversationID: cv.ID}); len(got) != 1 {
		t.Errorf("Recall(A, in the conversation) = %q, want its memory", got)
	}
	if _, err := m.Recall(ctx, b, "budget", memory.RecallOptions{ConversationID: cv.ID}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Recall(B, in A's conversation) = %v, want ErrNotFound", err)
	}
	if _, err := m.Remember(ctx, b, memory.Note{Scope: store.MemoryConversation, ConversationID: cv.ID, Text: "injected"}, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Remember(B, into A's conversation) = %v, want ErrNotFound", err)
	}
	// Deleting the conversation drops its memories and their index.
	if err := convs.Delete(ctx, a, cv.ID); err != nil {
		t.Fatal(err)
	}
	page, _ := m.List(ctx, a, memory.ListFilter{Scope: store.MemoryConversation})
	if len(page.Memories) != 0 {
		t.Errorf("conversation memories after deleting it = %+v", page.Memories)
	}
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestForgetUpdateAndOwnership(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	ws := workspace(t, st, "a")
	m, _ := newMemories(t, st)
	a, b := key(ws, "k1"), key(ws, "k2")
	mine, err := m.Remember(ctx, a, memory.Note{Text: "likes green tea"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	shared, _ := m.Remember(ctx, a, memory.Note{Scope: store.MemoryWorkspace, Text: "the team meets on Mondays"}, nil)

	if _, err := m.Get(ctx, b, mine.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(B, A's personal) = %v, want ErrNotFound", err)
	}
	if _, err := m.Get(ctx, b, shared.ID); err != nil {
		t.Errorf("Get(B, group memory) = %v", err)
	}
	if err := m.Forget(ctx, b, mine.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Forget(B, A's personal) = %v, want ErrNotFound", err)
	}
	if err := m.Forget(ctx, b, shared.ID); !errors.Is(err, memory.ErrNotOwner) {
		t.Errorf("Forget(B, A's group memory) = %v, want ErrNotOwner", err)
	}
	if _, err := m.Update(ctx, b, shared.ID, "the team never meets"); !errors.Is(err, memory.ErrNotOwner) {
		t.Errorf("Update(B, A's group memory) = %v, want ErrNotOwner", err)
	}
	if _, err := m.Update(ctx, a, mine.ID, "likes oolong tea"); err != nil {
		t.Fatal(err)
	}
	if got := recallTexts(t, m, a, "tea", memory.RecallOptions{}); !cmp.Equal(got, []string{"likes oolong tea"}) {
		t.Errorf("Recall after Update = %q, want the new text only", got)
	}
	if err := m.Forget(ctx, a, mine.ID); err != nil {
		t.Fatal(err)
	}
	if got := recallTexts(t, m, a, "tea", memory.RecallOptions{}); len(got) != 0 {
		t.Errorf("Recall after Forget = %q, want nothing", got)
	}
	page, _ := m.List(ctx, b, memory.ListFilter{})
	if len(page.Memories) != 1 || page.Memories[0].ID != shared.ID {
		t.Errorf("List(B) = %+v, want the group memory only", page.Memories)
	}
}

func TestIndexRebuiltFromTheStore(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	ws := workspace(t, st, "a")
	m, _ := newMemories(t, st)
	a := key(ws, "k1")
	for i := range 3 {
		if _, err := m.Remember(ctx, a, memory.Note{Text: fmt.Sprintf("fact %d about the harbour", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A restarted process: the in-memory engine is empty, the store is not.
	fresh, eng := newMemories(t, st)
	if got := recallTexts(t, fresh, a, "harbour", memory.RecallOptions{}); len(got) != 3 {
		t.Errorf("Recall on an empty engine = %q, want the 3 stored memories", got)
	}
	if n := eng.Len("memory/" + ws + "/user/apikey:k1"); n != 3 {
		t.Errorf("rebuilt index holds %d documents, want 3", n)
	}
}

func TestPIIPolicy(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	ws := workspace(t, st, "a")
	m, _ := newMemories(t, st)
	a := key(ws, "k1")
	const text = "Call me at alice@example.com"
	for _, tc := range []struct {
		mode     string
		want     string
		blocked  bool
		piiLayer string // the agent's PII mode; "" none
	}{
		{mode: "", want: text},
		{mode: "", piiLayer: "mask", want: text},
		{mode: "", piiLayer: "redact", want: "Call me at ***"},
		{mode: store.MemoryPIIKeep, piiLayer: "redact", want: text},
		{mode: store.MemoryPIIRedact, want: "Call me at ***"},
		{mode: store.MemoryPIIBlock, blocked: true},
	} {
		name := tc.mode + "/" + tc.piiLayer
		var layer *middleware.PIISettings
		if tc.piiLayer != "" {
			layer = &middleware.PIISettings{Mode: tc.piiLayer}
		}
		mask, err := m.PIIMasker(tc.mode, layer)
		if err != nil {
			t.Fatalf("%s: PIIMasker = %v", name, err)
		}
		row, err := m.Remember(ctx, a, memory.Note{Text: text}, mask)
		if tc.blocked {
			if !errors.Is(err, memory.ErrPIIBlocked) || !strings.Contains(err.Error(), "EMAIL") || strings.Contains(err.Error(), "alice") {
				t.Errorf("%s: Remember = %v, want ErrPIIBlocked naming the type, not the value", name, err)
			}
			continue
		}
		if err != nil || row.Text != tc.want {
			t.Errorf("%s: Remember stored %q, %v; want %q", name, row.Text, err, tc.want)
		}
	}
	// Text without personal data passes the block policy.
	mask, _ := m.PIIMasker(store.MemoryPIIBlock, nil)
	if _, err := m.Remember(ctx, a, memory.Note{Text: "prefers mornings"}, mask); err != nil {
		t.Errorf("Remember(no PII, block) = %v", err)
	}
}

// FuzzBeginClientHistory feeds Begin client histories of any shape against
// a stored thread: it never fails, what it stores is a suffix of the
// client's turns, and what it sends ends with them.
func FuzzBeginClientHistory(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, []byte{0, 1, 2, 3, 4})
	f.Add([]byte{0, 1, 2, 3}, []byte{0, 1, 2})
	f.Add([]byte{}, []byte{5})
	f.Add([]byte{0, 1}, []byte{7, 7, 0, 1})
	st := openStore(f)
	ws := workspace(f, st, "fuzz")
	convs := memory.NewConversations(st, nil)
	p := key(ws, "k1")
	msg := func(b byte, i int) llm.Message {
		role := llm.RoleUser
		if i%2 == 1 {
			role = llm.RoleAssistant
		}
		return llm.Text(role, fmt.Sprintf("m%d", b%6))
	}
	f.Fuzz(func(t *testing.T, thread, client []byte) {
		if len(thread) > 40 || len(client) > 40 {
			return
		}
		ctx := context.Background()
		cv, err := convs.Create(ctx, p, memory.NewConversation{})
		if err != nil {
			t.Fatal(err)
		}
		var stored []llm.Message
		for i, b := range thread {
			stored = append(stored, msg(b, i))
		}
		if err := convs.Finish(ctx, p, cv.ID, stored); err != nil {
			t.Fatal(err)
		}
		var in []llm.Message
		for i, b := range client {
			in = append(in, msg(b, i))
		}
		send, fresh, err := convs.Begin(ctx, p, cv.ID, in, run.History{ClientHistory: true})
		if err != nil {
			t.Fatalf("Begin = %v", err)
		}
		if len(fresh) > len(in) || !cmp.Equal(texts(fresh), texts(in[len(in)-len(fresh):])) {
			t.Fatalf("fresh %q is not a suffix of the client's %q", texts(fresh), texts(in))
		}
		if len(send) < len(fresh) || !cmp.Equal(texts(send[len(send)-len(fresh):]), texts(fresh)) {
			t.Fatalf("send %q does not end with the new turns %q", texts(send), texts(fresh))
		}
	})
}

// TestMemoryWritesAreAudited: remember, update and forget each leave one
// audit event naming the actor and the memory, and none carries its text.
func TestMemoryWritesAreAudited(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	ws := workspace(t, st, "a")
	eng, err := searchmem.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	var events []store.AuditEvent
	m, err := memory.NewMemories(st, eng, &memory.MemoryOptions{Audit: func(_ context.Context, ev store.AuditEvent) { events = append(events, ev) }})
	if err != nil {
		t.Fatal(err)
	}
	a := key(ws, "k1")
	row, err := m.Remember(ctx, a, memory.Note{Text: "passport 12345 in the blue folder", Source: "api"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Update(ctx, a, row.ID, "passport 67890 in the red folder"); err != nil {
		t.Fatal(err)
	}
	if err := m.Forget(ctx, a, row.ID); err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, ev := range events {
		actions = append(actions, ev.Action)
		if ev.WorkspaceID != ws || ev.Actor != a.ActorString() || ev.Target != "memory:"+row.ID {
			t.Errorf("event %+v: want workspace %s, actor %s, target memory:%s", ev, ws, a.ActorString(), row.ID)
		}
		if d := string(ev.Details); strings.Contains(d, "passport") || strings.Contains(d, "folder") {
			t.Errorf("%s details carry the memory's text: %s", ev.Action, d)
		}
	}
	if want := []string{"memory.remember", "memory.update", "memory.forget"}; !cmp.Equal(actions, want) {
		t.Errorf("audited %v, want %v", actions, want)
	}
}

// TestDropWorkspaceForgetsItsIndexes: before a workspace is deleted, every
// search index of its memories goes — the shared one, each owner's, each
// conversation's — so that none of their text is left searchable; another
// workspace's stay.
func TestDropWorkspaceForgetsItsIndexes(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	ws, other := workspace(t, st, "a"), workspace(t, st, "b")
	m, eng := newMemories(t, st)
	a := key(ws, "k1")
	cv, err := st.Conversations().Create(ctx, store.Conversation{WorkspaceID: ws, Owner: memory.Owner(a), Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []struct {
		p run.Principal
		n memory.Note
	}{
		{a, memory.Note{Text: "personal: the blue folder"}},
		{a, memory.Note{Text: "shared: the blue folder", Scope: store.MemoryWorkspace}},
		{a, memory.Note{Text: "thread: the blue folder", Scope: store.MemoryConversation, ConversationID: cv.ID}},
		{key(other, "k1"), memory.Note{Text: "other workspace: the blue folder", Scope: store.MemoryWorkspace}},
	} {
		if _, err := m.Remember(ctx, n.p, n.n, nil); err != nil {
			t.Fatal(err)
		}
	}
	everywhere := func() []string {
		t.Helper()
		res, err := eng.Search(ctx, search.Query{Text: "blue folder", TopK: 10})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range res.Hits {
			out = append(out, h.Text)
		}
		slices.Sort(out)
		return out
	}
	if got := everywhere(); len(got) != 4 {
		t.Fatalf("indexed before = %q, want all four", got)
	}
	if err := m.DropWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if got := everywhere(); !slices.Equal(got, []string{"other workspace: the blue folder"}) {
		t.Errorf("indexed after dropping a = %q; want only b's memory", got)
	}
	if got := recallTexts(t, m, key(other, "k2"), "blue folder", memory.RecallOptions{TopK: 10}); len(got) != 1 {
		t.Errorf("b's recall after a was dropped = %q, want its memory", got)
	}
}

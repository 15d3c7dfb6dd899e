package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

func newMemoryEnv(t *testing.T, agents ...platform.AgentSpec) (*servertest.Env, *llmtest.Server, client) {
	t.Helper()
	fake := llmtest.NewOpenAI(t)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{fakeProvider(fake)}, Agents: agents, Memory: true})
	return env, fake, client{t: t, base: env.URL, key: env.Key}
}

// upstreamTurns is the conversation a request to the fake carried, as
// "role: text" lines.
func upstreamTurns(body map[string]any) []string {
	var out []string
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		text := ""
		switch c := mm["content"].(type) {
		case string:
			text = c
		case []any:
			for _, p := range c {
				if pm, ok := p.(map[string]any); ok {
					text += fmt.Sprint(pm["text"])
				}
			}
		}
		out = append(out, fmt.Sprint(mm["role"])+": "+text)
	}
	return out
}

// TestConversationAcrossChatAndOpenAI is the acceptance test of
// conversations: one thread continued over /api/chat, then over /v1 by an
// Open WebUI chat attached to it, then read back. The fake upstream sees
// the whole history every time — verbatim while it fits the budget, then
// the summary and the recent turns once it was compacted.
func TestConversationAcrossChatAndOpenAI(t *testing.T) {
	t.Parallel()
	// Each question is ~55 estimated tokens, each answer ~6: a turn is ~60.
	// A budget of 150 holds the history of three turns but not four, so
	// the fourth request compacts q1..a2 and keeps q3, a3 verbatim.
	agent := platform.AgentSpec{Name: "helper", Model: "fake/fake-model", Instructions: "Help.",
		Memory: &store.AgentMemory{HistoryTokens: 150}}
	env, fake, c := newMemoryEnv(t, agent)
	q := func(i int) string { return fmt.Sprintf("question %d: %s", i, strings.Repeat("tell me more ", 16)) }
	a := func(i int) string { return fmt.Sprintf("answer %d", i) }

	var cv store.Conversation
	c.json("POST", "/api/conversations", `{"title":"Trip","agent":"helper","external_ref":"openwebui:chat-1"}`, http.StatusCreated, &cv)
	if cv.ID == "" || cv.Owner != "apikey:"+keyID(t, env) {
		t.Fatalf("created conversation = %+v, want an id and the key as owner", cv)
	}

	expect := func(what string, want []string) func(map[string]any) {
		return func(body map[string]any) {
			if diff := cmp.Diff(want, upstreamTurns(body)); diff != "" {
				t.Errorf("%s: the upstream request (-want +got):\n%s", what, diff)
			}
		}
	}
	// Turns 1-3 over /api/chat: the client sends only the new question.
	hist := []string{"system: Help."}
	for i := 1; i <= 3; i++ {
		want := append(append([]string(nil), hist...), "user: "+q(i))
		fake.Push(llmtest.Turn{Text: a(i), Check: expect(fmt.Sprintf("turn %d", i), want)})
		var ans struct{ Message struct{ Content string } }
		body, _ := json.Marshal(map[string]any{"agent": "helper", "conversation_id": cv.ID,
			"messages": []map[string]string{{"role": "user", "content": q(i)}}})
		c.json("POST", "/api/chat", string(body), http.StatusOK, &ans)
		if ans.Message.Content != a(i) {
			t.Fatalf("turn %d answered %q", i, ans.Message.Content)
		}
		hist = append(want, "assistant: "+a(i))
	}

	// Turn 4 over /v1 from the Open WebUI chat attached to the thread. Open
	// WebUI knows none of the earlier turns and sends only its question;
	// the history is over budget, so it is compacted first.
	summary := "SUMMARY: the user asked two questions and got two answers."
	fake.Push(
		llmtest.Turn{Text: summary, Check: func(body map[string]any) {
			turns := upstreamTurns(body)
			if len(turns) != 2 || !strings.Contains(turns[1], q(1)) || !strings.Contains(turns[1], a(2)) || strings.Contains(turns[1], q(3)) {
				t.Errorf("the compaction request = %q, want q1..a2 to summarise, not q3", turns)
			}
		}},
		llmtest.Turn{Text: a(4), Check: expect("turn 4", []string{"system: Help.",
			"system: Summary of the earlier part of this conversation:\n" + summary,
			"user: " + q(3), "assistant: " + a(3), "user: " + q(4)})},
	)
	v1 := func(msgs []map[string]string) string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"model": "helper", "messages": msgs})
		req, _ := http.NewRequest("POST", env.URL+"/v1/chat/completions", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+env.Key)
		req.Header.Set("X-OpenWebUI-Chat-Id", "chat-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || len(out.Choices) != 1 {
			t.Fatalf("/v1 = %d, %v", resp.StatusCode, err)
		}
		return out.Choices[0].Message.Content
	}
	if got := v1([]map[string]string{{"role": "user", "content": q(4)}}); got != a(4) {
		t.Fatalf("turn 4 answered %q", got)
	}
	// Turn 5: Open WebUI resends what it knows (q4, a4) with the new
	// question; only q5 is new, after the stored history.
	fake.Push(llmtest.Turn{Text: a(5), Check: expect("turn 5", []string{"system: Help.",
		"system: Summary of the earlier part of this conversation:\n" + summary,
		"user: " + q(3), "assistant: " + a(3), "user: " + q(4), "assistant: " + a(4), "user: " + q(5)})})
	if got := v1([]map[string]string{{"role": "user", "content": q(4)}, {"role": "assistant", "content": a(4)}, {"role": "user", "content": q(5)}}); got != a(5) {
		t.Fatalf("turn 5 answered %q", got)
	}
	if n := fake.Remaining(); n != 0 {
		t.Errorf("%d scripted upstream answers were not asked for", n)
	}

	// Read back: every turn once, in order, and the summary with the seq
	// it covers.
	var got struct {
		store.Conversation
		Messages []store.Message
	}
	c.json("GET", "/api/conversations/"+cv.ID, "", http.StatusOK, &got)
	var lines []string
	for _, m := range got.Messages {
		lines = append(lines, string(m.Role)+": "+m.Content)
	}
	var want []string
	for i := 1; i <= 5; i++ {
		want = append(want, "user: "+q(i), "assistant: "+a(i))
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("stored thread (-want +got):\n%s", diff)
	}
	if got.Summary != summary || got.SummarizedThrough != 4 || got.LastSeq != 10 {
		t.Errorf("conversation = summary %q through %d, last %d; want the summary through seq 4 of 10", got.Summary, got.SummarizedThrough, got.LastSeq)
	}

	// A stateless completion (no header) stores nothing.
	fake.Push(llmtest.Turn{Text: "stateless"})
	c.json("POST", "/v1/chat/completions", `{"model":"helper","messages":[{"role":"user","content":"hi"}]}`, http.StatusOK, nil)
	c.json("GET", "/api/conversations/"+cv.ID, "", http.StatusOK, &got)
	if len(got.Messages) != 10 {
		t.Errorf("a completion without the header changed the thread: %d messages", len(got.Messages))
	}
}

// keyID is the id of env's API key.
func keyID(t *testing.T, env *servertest.Env) string {
	t.Helper()
	keys, err := env.Store.APIKeys().List(t.Context(), env.Workspace.ID)
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys = %v, %v", keys, err)
	}
	return keys[0].ID
}

func TestConversationsAPI(t *testing.T) {
	t.Parallel()
	env, fake, c := newMemoryEnv(t, helper)
	other := client{t: t, base: env.URL, key: servertest.CreateKey(t, env.Store, env.Workspace.ID)}
	var cv store.Conversation
	c.json("POST", "/api/conversations", `{"title":"mine"}`, http.StatusCreated, &cv)
	var renamed store.Conversation
	c.json("PATCH", "/api/conversations/"+cv.ID, `{"title":"renamed"}`, http.StatusOK, &renamed)
	if renamed.Title != "renamed" {
		t.Errorf("PATCH = %+v", renamed)
	}
	var list struct {
		Data []store.Conversation
		Next string
	}
	c.json("GET", "/api/conversations", "", http.StatusOK, &list)
	if len(list.Data) != 1 || list.Data[0].ID != cv.ID {
		t.Errorf("GET list = %+v", list)
	}
	other.json("GET", "/api/conversations", "", http.StatusOK, &list)
	if len(list.Data) != 0 {
		t.Errorf("another key's list = %+v, want none", list)
	}
	// Another key's requests find nothing there, over every route.
	for _, rq := range []struct{ method, path, body string }{
		{"GET", "/api/conversations/" + cv.ID, ""},
		{"PATCH", "/api/conversations/" + cv.ID, `{"title":"theirs"}`},
		{"DELETE", "/api/conversations/" + cv.ID, ""},
		{"POST", "/api/chat", `{"agent":"helper","conversation_id":"` + cv.ID + `","messages":[{"role":"user","content":"hi"}]}`},
		{"POST", "/v1/chat/completions", `{"model":"helper","conversation":"` + cv.ID + `","messages":[{"role":"user","content":"hi"}]}`},
	} {
		resp, body := other.do(rq.method, rq.path, rq.body)
		wantError(t, resp, body, http.StatusNotFound, "conversation_not_found")
	}
	resp, body := c.do("GET", "/api/conversations?limit=x", "")
	wantError(t, resp, body, http.StatusBadRequest, "invalid_request")
	resp, body = c.do("POST", "/api/conversations", `{"title":"`+strings.Repeat("x", 201)+`"}`)
	wantError(t, resp, body, http.StatusBadRequest, "invalid_request")
	if len(fake.Requests()) != 0 {
		t.Errorf("refused chats reached the upstream: %d requests", len(fake.Requests()))
	}
	// The stream's done event comes after the turn is stored.
	fake.Push(llmtest.Turn{Text: "streamed"})
	resp, body = c.do("POST", "/api/chat/stream", `{"agent":"helper","conversation_id":"`+cv.ID+`","messages":[{"role":"user","content":"first"}]}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "event: done") {
		t.Fatalf("stream = %d %s", resp.StatusCode, body)
	}
	var got struct{ Messages []store.Message }
	c.json("GET", "/api/conversations/"+cv.ID, "", http.StatusOK, &got)
	if len(got.Messages) != 2 || got.Messages[1].Content != "streamed" {
		t.Errorf("thread after the stream = %+v, want the turn stored", got.Messages)
	}
	// /v1 with a conversation field continues the same thread.
	fake.Push(llmtest.Turn{Text: "again", Check: func(body map[string]any) {
		want := []string{"system: Help.", "user: first", "assistant: streamed", "user: second"}
		if diff := cmp.Diff(want, upstreamTurns(body)); diff != "" {
			t.Errorf("/v1 with conversation sent (-want +got):\n%s", diff)
		}
	}})
	c.json("POST", "/v1/chat/completions", `{"model":"helper","conversation":{"id":"`+cv.ID+`"},"messages":[{"role":"user","content":"second"}]}`, http.StatusOK, nil)
	c.json("DELETE", "/api/conversations/"+cv.ID, "", http.StatusNoContent, nil)
	resp, body = c.do("GET", "/api/conversations/"+cv.ID, "")
	wantError(t, resp, body, http.StatusNotFound, "conversation_not_found")
}

// TestPersonalMemoryStaysPersonal is the acceptance test of memory: A's
// personal memory is recalled for A and never for B, through the API and
// through the recall tool of a memory-enabled agent.
func TestPersonalMemoryStaysPersonal(t *testing.T) {
	t.Parallel()
	agent := platform.AgentSpec{Name: "rememberer", Model: "fake/fake-model", Memory: &store.AgentMemory{Enabled: true}}
	env, fake, a := newMemoryEnv(t, agent)
	b := client{t: t, base: env.URL, key: servertest.CreateKey(t, env.Store, env.Workspace.ID)}

	var mine store.Memory
	a.json("POST", "/api/memories", `{"text":"my locker code is 4711"}`, http.StatusCreated, &mine)
	if mine.Scope != store.MemoryUser || mine.Visibility != store.MemoryPersonal || mine.Source != "api" {
		t.Errorf("POST /api/memories = %+v, want a personal user memory from the API", mine)
	}
	var team store.Memory
	a.json("POST", "/api/memories", `{"text":"the locker room is on floor 2","scope":"workspace"}`, http.StatusCreated, &team)

	var found struct{ Data []struct{ ID, Text string } }
	a.json("GET", "/api/memories?q=locker", "", http.StatusOK, &found)
	if len(found.Data) != 2 {
		t.Errorf("A's search = %+v, want both memories", found.Data)
	}
	b.json("GET", "/api/memories?q=locker+code+4711", "", http.StatusOK, &found)
	if len(found.Data) != 1 || found.Data[0].ID != team.ID {
		t.Errorf("B's search = %+v, want only the workspace memory", found.Data)
	}
	var list struct{ Data []store.Memory }
	b.json("GET", "/api/memories", "", http.StatusOK, &list)
	if len(list.Data) != 1 || list.Data[0].ID != team.ID {
		t.Errorf("B's list = %+v, want only the workspace memory", list.Data)
	}
	resp, body := b.do("GET", "/api/memories/"+mine.ID, "")
	wantError(t, resp, body, http.StatusNotFound, "not_found")
	resp, body = b.do("PATCH", "/api/memories/"+mine.ID, `{"text":"overwritten"}`)
	wantError(t, resp, body, http.StatusNotFound, "not_found")
	resp, body = b.do("DELETE", "/api/memories/"+team.ID, "")
	wantError(t, resp, body, http.StatusForbidden, "not_owner")
	resp, body = a.do("POST", "/api/memories", `{"text":"x","scope":"galaxy"}`)
	wantError(t, resp, body, http.StatusBadRequest, "invalid_request")

	// Through the recall tool: the model asks the same thing for both.
	recallTurn := llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "r1", Name: "recall", Arguments: `{"query":"locker code"}`}}}
	result := func(c client) string {
		t.Helper()
		fake.Push(recallTurn, llmtest.Turn{Text: "done"})
		var ans struct {
			ToolCalls []struct {
				Name, Result string
				IsError      bool `json:"is_error"`
			} `json:"tool_calls"`
		}
		c.json("POST", "/api/chat", `{"agent":"rememberer","messages":[{"role":"user","content":"what is my locker code?"}]}`, http.StatusOK, &ans)
		if len(ans.ToolCalls) != 1 || ans.ToolCalls[0].Name != "recall" || ans.ToolCalls[0].IsError {
			t.Fatalf("chat tool calls = %+v, want one recall", ans.ToolCalls)
		}
		return ans.ToolCalls[0].Result
	}
	if got := result(a); !strings.Contains(got, "4711") || !strings.Contains(got, mine.ID) {
		t.Errorf("A's recall = %s, want the personal memory with its id", got)
	}
	if got := result(b); strings.Contains(got, "4711") || !strings.Contains(got, team.ID) {
		t.Errorf("B's recall = %s, want the workspace memory and never A's personal one", got)
	}
	// What B's agent remembers is B's.
	fake.Push(llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "m1", Name: "remember", Arguments: `{"text":"B prefers the night shift"}`}}}, llmtest.Turn{Text: "noted"})
	b.json("POST", "/api/chat", `{"agent":"rememberer","messages":[{"role":"user","content":"remember I prefer nights"}]}`, http.StatusOK, nil)
	a.json("GET", "/api/memories?q=night+shift", "", http.StatusOK, &found)
	if len(found.Data) != 0 {
		t.Errorf("A found B's personal memory: %+v", found.Data)
	}
	b.json("GET", "/api/memories?q=night+shift", "", http.StatusOK, &found)
	if len(found.Data) != 1 {
		t.Errorf("B's own memory = %+v, want it", found.Data)
	}
}

package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// The personal memories of two people of one workspace, each with an API
// key acting for them (store.APIKey.UserID).
const (
	memoryOfA = "A's secret project is Bluebird"
	memoryOfB = "B's secret project is Redwood"
)

// recallCall is the model asking the recall tool for the secret project.
var recallCall = llm.ToolCall{ID: "call_recall", Name: "recall", Arguments: `{"query":"secret project"}`}

// twoPeople stores persons A and B of env's workspace, each with a
// personal memory stored through POST /api/memories with their own key.
func twoPeople(t *testing.T, env *servertest.Env) (a, b servertest.Person, memA store.Memory) {
	t.Helper()
	a = servertest.NewPerson(t, env.Store, env.Workspace.ID, "a@example.com")
	b = servertest.NewPerson(t, env.Store, env.Workspace.ID, "b@example.com")
	client{t: t, base: env.URL, key: a.Key}.json("POST", "/api/memories", `{"text":"`+memoryOfA+`"}`, http.StatusCreated, &memA)
	if memA.Owner != "user:"+a.UserID || memA.Visibility != store.MemoryPersonal {
		t.Fatalf("A's memory = %+v, want a personal memory owned by user %s", memA, a.UserID)
	}
	var memB store.Memory
	client{t: t, base: env.URL, key: b.Key}.json("POST", "/api/memories", `{"text":"`+memoryOfB+`"}`, http.StatusCreated, &memB)
	return a, b, memA
}

// wantOnlyOwn fails unless the recall result shown to the model holds the
// memory of its own person and nothing of the other's.
func wantOnlyOwn(t *testing.T, who, got, own, other string) {
	t.Helper()
	if !strings.Contains(got, own) {
		t.Errorf("%s's recall showed the model %s; want %q", who, got, own)
	}
	if secret := other[strings.LastIndex(other, " ")+1:]; strings.Contains(got, secret) {
		t.Errorf("%s's recall showed the model %s; it holds the other person's personal memory %q", who, got, other)
	}
}

// TestPersonalMemoryPerUser is the acceptance test of personal memory on
// /api/chat, /v1/chat/completions and /api/memories for two people whose
// API keys act for them: the recall tool result the model receives holds
// the caller's own memory and never the other person's, and the memories
// API lists, searches and reads only what the caller may see.
func TestPersonalMemoryPerUser(t *testing.T) {
	t.Parallel()
	agent := platform.AgentSpec{Name: "rememberer", Model: "fake/fake-model", Memory: &store.AgentMemory{Enabled: true}}
	env, fake, _ := newMemoryEnv(t, agent)
	a, b, memA := twoPeople(t, env)
	people := []struct {
		name       string
		key        string
		own, other string
	}{{"A", a.Key, memoryOfA, memoryOfB}, {"B", b.Key, memoryOfB, memoryOfA}}

	t.Run("chat", func(t *testing.T) {
		for _, p := range people {
			result := servertest.ScriptToolCall(t, fake, recallCall, "done")
			c := client{t: t, base: env.URL, key: p.key}
			c.json("POST", "/api/chat", `{"agent":"rememberer","messages":[{"role":"user","content":"what is my secret project?"}]}`, http.StatusOK, nil)
			wantOnlyOwn(t, p.name, result(), p.own, p.other)
		}
	})
	t.Run("openai", func(t *testing.T) {
		for _, p := range people {
			result := servertest.ScriptToolCall(t, fake, recallCall, "done")
			c := client{t: t, base: env.URL, key: p.key}
			var out struct {
				Choices []struct{ Message struct{ Content string } }
			}
			c.json("POST", "/v1/chat/completions", `{"model":"rememberer","messages":[{"role":"user","content":"what is my secret project?"}]}`, http.StatusOK, &out)
			if len(out.Choices) != 1 || out.Choices[0].Message.Content != "done" {
				t.Fatalf("%s's completion = %+v, want the answer after the recall", p.name, out)
			}
			wantOnlyOwn(t, p.name, result(), p.own, p.other)
		}
	})
	t.Run("api", func(t *testing.T) {
		for _, p := range people {
			c := client{t: t, base: env.URL, key: p.key}
			var found struct{ Data []struct{ ID, Text string } }
			c.json("GET", "/api/memories?q=secret+project+Bluebird", "", http.StatusOK, &found)
			raw, _ := json.Marshal(found.Data)
			wantOnlyOwn(t, p.name+" (search)", string(raw), p.own, p.other)
			var list struct{ Data []store.Memory }
			c.json("GET", "/api/memories", "", http.StatusOK, &list)
			if len(list.Data) != 1 || list.Data[0].Text != p.own {
				t.Errorf("%s's list = %+v, want only their own memory", p.name, list.Data)
			}
		}
		bc := client{t: t, base: env.URL, key: b.Key}
		resp, body := bc.do("GET", "/api/memories/"+memA.ID, "")
		wantError(t, resp, body, http.StatusNotFound, "not_found")
		var got store.Memory
		client{t: t, base: env.URL, key: a.Key}.json("GET", "/api/memories/"+memA.ID, "", http.StatusOK, &got)
		if got.Text != memoryOfA {
			t.Errorf("A's GET of their memory = %+v", got)
		}
		// The workspace's own key (acting for no person) sees neither.
		var list struct{ Data []store.Memory }
		client{t: t, base: env.URL, key: env.Key}.json("GET", "/api/memories", "", http.StatusOK, &list)
		if len(list.Data) != 0 {
			t.Errorf("a key acting for no user lists %+v, want none of A's or B's personal memories", list.Data)
		}
	})
}

// TestRememberFollowsPIIMode: the remember tool applies the agent's memory
// PII policy to what the model asks to store, through /api/chat: redact
// stores the text with the e-mail address and phone number masked, block
// stores nothing and shows the model an error naming the kinds of data
// found (never the values), keep stores the text as given, and an agent
// without memory.pii follows its PII layer (redact).
func TestRememberFollowsPIIMode(t *testing.T) {
	t.Parallel()
	const (
		email = "jane.doe@example.com"
		phone = "+1 212 555 0123"
		text  = "Jane's contacts: mail " + email + ", phone " + phone + "."
	)
	mem := func(mode string) *store.AgentMemory { return &store.AgentMemory{Enabled: true, PII: mode} }
	agents := []platform.AgentSpec{
		{Name: "redacting", Model: "fake/fake-model", Memory: mem(store.MemoryPIIRedact)},
		{Name: "blocking", Model: "fake/fake-model", Memory: mem(store.MemoryPIIBlock)},
		{Name: "keeping", Model: "fake/fake-model", Memory: mem(store.MemoryPIIKeep)},
		{Name: "layered", Model: "fake/fake-model", Memory: mem(""),
			Middleware: middleware.Settings{PII: &middleware.PIISettings{Mode: "redact"}}},
	}
	env, fake, _ := newMemoryEnv(t, agents...)
	args, _ := json.Marshal(map[string]string{"text": text})
	for _, tc := range []struct {
		agent   string
		stored  bool
		masked  bool
		wantErr string // in the tool result the model gets
	}{
		{agent: "redacting", stored: true, masked: true},
		{agent: "blocking", wantErr: "not remembered"},
		{agent: "keeping", stored: true},
		{agent: "layered", stored: true, masked: true},
	} {
		// A person of their own per agent: each list shows only what that
		// agent stored.
		p := servertest.NewPerson(t, env.Store, env.Workspace.ID, tc.agent+"@example.org")
		c := client{t: t, base: env.URL, key: p.Key}
		result := servertest.ScriptToolCall(t, fake, llm.ToolCall{ID: "call_remember", Name: "remember", Arguments: string(args)}, "noted")
		var ans struct {
			ToolCalls []struct {
				Name    string
				IsError bool `json:"is_error"`
			} `json:"tool_calls"`
		}
		c.json("POST", "/api/chat", `{"agent":"`+tc.agent+`","messages":[{"role":"user","content":"remember Jane's contacts"}]}`, http.StatusOK, &ans)
		got := result()
		if len(ans.ToolCalls) != 1 || ans.ToolCalls[0].IsError != (tc.wantErr != "") {
			t.Errorf("%s: tool calls %+v, want one remember, failed = %v", tc.agent, ans.ToolCalls, tc.wantErr != "")
		}
		if tc.wantErr != "" && (!strings.Contains(got, tc.wantErr) || !strings.Contains(got, "EMAIL") || strings.Contains(got, email)) {
			t.Errorf("%s: the model got %q; want %q naming the EMAIL kind without the address", tc.agent, got, tc.wantErr)
		}
		var list struct{ Data []store.Memory }
		c.json("GET", "/api/memories", "", http.StatusOK, &list)
		switch {
		case !tc.stored:
			if len(list.Data) != 0 {
				t.Errorf("%s: stored %+v, want nothing", tc.agent, list.Data)
			}
		case len(list.Data) != 1:
			t.Errorf("%s: stored %+v, want one memory", tc.agent, list.Data)
		case tc.masked:
			s := list.Data[0].Text
			if strings.Contains(s, email) || strings.Contains(s, phone) || strings.Contains(s, "555") || !strings.Contains(s, "***") ||
				!strings.HasPrefix(s, "Jane's contacts: mail ") {
				t.Errorf("%s: stored %q, want the text with the address and the number masked", tc.agent, s)
			}
			if strings.Contains(got, email) || strings.Contains(got, "555 0123") {
				t.Errorf("%s: the tool result %q echoes the personal data", tc.agent, got)
			}
		default:
			if list.Data[0].Text != text {
				t.Errorf("%s: stored %q, want %q as given", tc.agent, list.Data[0].Text, text)
			}
		}
	}
}

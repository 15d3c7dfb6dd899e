package memory_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/memory"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

func toolsByName(ts []tool.Tool) map[string]tool.Tool {
	out := map[string]tool.Tool{}
	for _, t := range ts {
		out[t.Name()] = t
	}
	return out
}

func call(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	// As the agent loop does: the schema first, then the tool.
	checked, res, ok := tool.CheckArguments(tl.Schema(), json.RawMessage(args))
	if !ok {
		return res
	}
	res, err := tl.Call(t.Context(), checked)
	if err != nil {
		t.Fatalf("%s(%s) = Go error %v", tl.Name(), args, err)
	}
	return res
}

func TestToolsAreBoundToTheCaller(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	ws := workspace(t, st, "a")
	m, _ := newMemories(t, st)
	convs := memory.NewConversations(st, nil)
	a, b := key(ws, "k1"), key(ws, "k2")
	cv, _ := convs.Create(ctx, a, memory.NewConversation{})
	def := &platform.Agent{Row: store.Agent{Name: "helper", Params: store.AgentParams{Memory: &store.AgentMemory{Enabled: true}}}}
	ta, tb := toolsByName(m.Tools(a, cv.ID, def)), toolsByName(m.Tools(b, "", def))
	for _, name := range []string{memory.ToolRecall, memory.ToolRemember, memory.ToolForget} {
		if ta[name] == nil || ta[name].Capability() != tool.CapabilityLow || tool.ValidateName(name) != nil {
			t.Errorf("tool %s missing or not low capability", name)
		}
	}

	res := call(t, ta[memory.ToolRemember], `{"text":"my locker code is 4711"}`)
	if res.IsError || !strings.Contains(res.Content, `"visibility":"personal"`) {
		t.Fatalf("remember = %+v", res)
	}
	var stored struct{ Remembered string }
	_ = json.Unmarshal([]byte(res.Content), &stored)
	// The model cannot pick the owner: an owner argument is refused.
	if res := call(t, tb[memory.ToolRemember], `{"text":"x","owner":"apikey:k1"}`); !res.IsError {
		t.Errorf("remember with an owner argument = %+v, want an error result", res)
	}
	if res := call(t, tb[memory.ToolRecall], `{"query":"locker code"}`); res.IsError || strings.Contains(res.Content, "4711") {
		t.Errorf("B's recall = %+v, want no trace of A's personal memory", res)
	}
	if res := call(t, tb[memory.ToolForget], `{"id":"`+stored.Remembered+`"}`); !res.IsError {
		t.Errorf("B's forget of A's memory = %+v, want an error result", res)
	}
	res = call(t, ta[memory.ToolRecall], `{"query":"locker code"}`)
	if res.IsError || !strings.Contains(res.Content, "4711") || !strings.Contains(res.Content, stored.Remembered) {
		t.Errorf("A's recall = %+v, want the memory with its id as citation", res)
	}
	if !strings.Contains(res.Content, `"source":"conversation:`+cv.ID+`"`) {
		t.Errorf("A's recall = %s, want the source conversation", res.Content)
	}
	// Conversation scope needs a conversation.
	if res := call(t, tb[memory.ToolRemember], `{"text":"x","scope":"conversation"}`); !res.IsError {
		t.Errorf("conversation memory outside a conversation = %+v, want an error result", res)
	}
	if res := call(t, ta[memory.ToolForget], `{"id":"`+stored.Remembered+`"}`); res.IsError {
		t.Errorf("A's forget = %+v", res)
	}
	if res := call(t, ta[memory.ToolRecall], `{"query":"locker code"}`); strings.Contains(res.Content, "4711") {
		t.Errorf("recall after forget = %s", res.Content)
	}

	// The agent's memory PII policy applies to remember.
	blocked := &platform.Agent{Row: store.Agent{Name: "strict", Params: store.AgentParams{Memory: &store.AgentMemory{Enabled: true, PII: store.MemoryPIIBlock}}}}
	strict := toolsByName(m.Tools(a, "", blocked))
	if res := call(t, strict[memory.ToolRemember], `{"text":"mail me at bob@example.com"}`); !res.IsError || strings.Contains(res.Content, "bob@") {
		t.Errorf("remember under pii: block = %+v, want a refusal that does not repeat the value", res)
	}
}

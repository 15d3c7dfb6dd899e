package nodes_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/workflowtest"
)

// run prepares src and runs it with input on an engine whose agents talk
// to a fake LLM scripted with turns.
func run(t *testing.T, src string, input any, turns ...llmtest.Turn) (workflow.Outcome, *workflowtest.Recorder, *workflowtest.Resolver) {
	t.Helper()
	res := workflowtest.NewResolver(t, turns...)
	res.Add("writer", "You write.")
	e := workflowtest.Engine(t, workflow.Services{Agents: res})
	p := workflowtest.Parse(t, e, src)
	rec := &workflowtest.Recorder{}
	out := e.Run(t.Context(), p, workflow.Request{RunID: "r1", Input: input, Emit: rec.Emit})
	return out, rec, res
}

func TestNodeKinds(t *testing.T) {
	cases := []struct {
		name   string
		src    string
		input  any
		turns  []llmtest.Turn
		status string
		output any
		// ran lists nodes that must have finished; skipped nodes that must not.
		ran, skipped []string
	}{
		{
			name:   "start_end_passthrough",
			src:    `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"end","type":"end"}],"edges":[{"id":"e","source":"start","target":"end"}]}`,
			input:  "hello",
			status: workflow.StatusSucceeded, output: "hello",
		},
		{
			name: "agent_named",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"a","type":"agent","config":{"agent":"writer","prompt":"Write about {{input}}"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"a"},{"id":"e2","source":"a","target":"end"}]}`,
			input:  "cats",
			turns:  []llmtest.Turn{{Text: "Cats are great.", Check: nil}},
			status: workflow.StatusSucceeded, output: "Cats are great.", ran: []string{"a"},
		},
		{
			name: "agent_inline_with_tool",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"a","type":"agent","config":{"model":"m","instructions":"Use tools.","tools":["calculator"]}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"a"},{"id":"e2","source":"a","target":"end"}]}`,
			input: "6*7?",
			turns: []llmtest.Turn{
				{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "calculator", Arguments: `{"expression":"6*7"}`}}},
				{Text: "42"},
			},
			status: workflow.StatusSucceeded, output: "42",
		},
		{
			name: "condition_true_branch",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"c","type":"condition","config":{"expression":"input == 'yes'"}},
			{"id":"t","type":"code","config":{"mode":"template","template":"T:{{input}}"}},{"id":"f","type":"code","config":{"mode":"template","template":"F:{{input}}"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"c"},{"id":"e2","source":"c","target":"t","sourceHandle":"true"},{"id":"e3","source":"c","target":"f","sourceHandle":"false"},
			{"id":"e4","source":"t","target":"end"},{"id":"e5","source":"f","target":"end"}]}`,
			input:  "yes",
			status: workflow.StatusSucceeded, output: "T:yes", ran: []string{"c", "t"}, skipped: []string{"f"},
		},
		{
			name: "condition_false_branch",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"c","type":"condition","config":{"expression":"input == 'yes'"}},
			{"id":"t","type":"code","config":{"mode":"template","template":"T:{{input}}"}},{"id":"f","type":"code","config":{"mode":"template","template":"F:{{input}}"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"c"},{"id":"e2","source":"c","target":"t","sourceHandle":"true"},{"id":"e3","source":"c","target":"f","sourceHandle":"false"},
			{"id":"e4","source":"t","target":"end"},{"id":"e5","source":"f","target":"end"}]}`,
			input:  "no",
			status: workflow.StatusSucceeded, output: "F:no", ran: []string{"f"}, skipped: []string{"t"},
		},
		{
			name: "loop_until_condition",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"l","type":"loop","config":{"condition":"len(input) < 4","max_iterations":10}},
			{"id":"grow","type":"code","config":{"mode":"template","template":"{{input}}x"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"l"},{"id":"e2","source":"l","target":"grow","sourceHandle":"body"},{"id":"e3","source":"grow","target":"l"},
			{"id":"e4","source":"l","target":"end","sourceHandle":"done"}]}`,
			input:  "a",
			status: workflow.StatusSucceeded, output: "axxx",
		},
		{
			name: "loop_max_iterations",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"l","type":"loop","config":{"condition":"true","max_iterations":2}},
			{"id":"grow","type":"code","config":{"mode":"template","template":"{{input}}x"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"l"},{"id":"e2","source":"l","target":"grow","sourceHandle":"body"},{"id":"e3","source":"grow","target":"l"},
			{"id":"e4","source":"l","target":"end","sourceHandle":"done"}]}`,
			input:  "a",
			status: workflow.StatusSucceeded, output: "axx",
		},
		{
			name: "router_expression",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"r","type":"router","config":{"routes":[{"name":"bill","expression":"input contains 'invoice'"},{"name":"tech","expression":"input contains 'error'"}],"default":"tech"}},
			{"id":"bill","type":"code","config":{"mode":"template","template":"billing"}},{"id":"tech","type":"code","config":{"mode":"template","template":"tech"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"r"},{"id":"e2","source":"r","target":"bill","sourceHandle":"bill"},{"id":"e3","source":"r","target":"tech","sourceHandle":"tech"},
			{"id":"e4","source":"bill","target":"end"},{"id":"e5","source":"tech","target":"end"}]}`,
			input:  "my invoice is wrong",
			status: workflow.StatusSucceeded, output: "billing", skipped: []string{"tech"},
		},
		{
			name: "router_default",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"r","type":"router","config":{"routes":[{"name":"bill","expression":"input contains 'invoice'"},{"name":"tech","expression":"input contains 'error'"}],"default":"tech"}},
			{"id":"bill","type":"code","config":{"mode":"template","template":"billing"}},{"id":"tech","type":"code","config":{"mode":"template","template":"tech"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"r"},{"id":"e2","source":"r","target":"bill","sourceHandle":"bill"},{"id":"e3","source":"r","target":"tech","sourceHandle":"tech"},
			{"id":"e4","source":"bill","target":"end"},{"id":"e5","source":"tech","target":"end"}]}`,
			input:  "hello",
			status: workflow.StatusSucceeded, output: "tech", skipped: []string{"bill"},
		},
		{
			name: "router_llm",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"r","type":"router","config":{"mode":"llm","model":"m","routes":[{"name":"bill","description":"payments"},{"name":"tech","description":"bugs"}]}},
			{"id":"bill","type":"code","config":{"mode":"template","template":"billing"}},{"id":"tech","type":"code","config":{"mode":"template","template":"tech"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"r"},{"id":"e2","source":"r","target":"bill","sourceHandle":"bill"},{"id":"e3","source":"r","target":"tech","sourceHandle":"tech"},
			{"id":"e4","source":"bill","target":"end"},{"id":"e5","source":"tech","target":"end"}]}`,
			input:  "the app crashes",
			turns:  []llmtest.Turn{{Text: "tech"}},
			status: workflow.StatusSucceeded, output: "tech", skipped: []string{"bill"},
		},
		{
			name: "router_no_match_fails",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"r","type":"router","config":{"routes":[{"name":"bill","expression":"false"}]}},
			{"id":"bill","type":"end"}],"edges":[{"id":"e1","source":"start","target":"r"},{"id":"e2","source":"r","target":"bill","sourceHandle":"bill"}]}`,
			input:  "x",
			status: workflow.StatusFailed,
		},
		{
			name: "code_json_path",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"c","type":"code","config":{"mode":"json_path","path":"$.items[1]"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"c"},{"id":"e2","source":"c","target":"end"}]}`,
			input:  `{"items":["a","b"]}`,
			status: workflow.StatusSucceeded, output: "b",
		},
		{
			name: "code_javascript",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"c","type":"code","config":{"mode":"javascript","script":"input.toUpperCase() + vars.suffix"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"c"},{"id":"e2","source":"c","target":"end"}]}`,
			input:  "abc",
			status: workflow.StatusSucceeded, output: "ABC!",
		},
		{
			name: "code_starlark",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"c","type":"code","config":{"mode":"starlark","script":"result = input.upper() + vars['suffix']"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"c"},{"id":"e2","source":"c","target":"end"}]}`,
			input:  "abc",
			status: workflow.StatusSucceeded, output: "ABC!",
		},
		{
			// A Starlark node between two others: it reads an earlier
			// node's output, and the next node reads its structured result.
			name: "code_starlark_between_nodes",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},
			{"id":"split","type":"code","config":{"mode":"split","separator":","}},
			{"id":"count","type":"code","config":{"mode":"starlark","timeout":"2s","script":"words = [w.strip() for w in nodes['split']['output'] if w.strip()]\nresult = {'n': len(words), 'longest': sorted(words, key = len)[-1], 'tag': vars['suffix']}"}},
			{"id":"say","type":"code","config":{"mode":"template","template":"{{input.n}} words, longest {{input.longest}}{{input.tag}}"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"split"},{"id":"e2","source":"split","target":"count"},{"id":"e3","source":"count","target":"say"},{"id":"e4","source":"say","target":"end"}]}`,
			input:  "tea, coffee, ,milk",
			status: workflow.StatusSucceeded, output: "3 words, longest coffee!", ran: []string{"split", "count", "say"},
		},
		{
			name: "iteration_json_concurrent",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"it","type":"iteration","config":{"items":"{{input}}","concurrency":3}},
			{"id":"each","type":"code","config":{"mode":"template","template":"<{{vars.index}}:{{input}}>"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"it"},{"id":"e2","source":"it","target":"each","sourceHandle":"body"},{"id":"e3","source":"it","target":"end","sourceHandle":"done"}]}`,
			input:  `["a","b","c","d"]`,
			status: workflow.StatusSucceeded, output: []any{"<0:a>", "<1:b>", "<2:c>", "<3:d>"},
		},
		{
			name: "iteration_lines",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"it","type":"iteration","config":{"items":"{{input}}","split":"lines"}},
			{"id":"each","type":"code","config":{"mode":"text","operation":"upper"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"it"},{"id":"e2","source":"it","target":"each","sourceHandle":"body"},{"id":"e3","source":"it","target":"end","sourceHandle":"done"}]}`,
			input:  "x\ny\n\nz",
			status: workflow.StatusSucceeded, output: []any{"X", "Y", "Z"},
		},
		{
			name: "iteration_too_many_items",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"it","type":"iteration","config":{"items":"{{input}}","split":"delimiter","delimiter":",","max_items":2}},
			{"id":"each","type":"code","config":{"mode":"text","operation":"upper"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"it"},{"id":"e2","source":"it","target":"each","sourceHandle":"body"},{"id":"e3","source":"it","target":"end","sourceHandle":"done"}]}`,
			input:  "a,b,c",
			status: workflow.StatusFailed,
		},
		{
			name: "parallel_concatenate",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"p","type":"parallel","config":{"separator":" | "}},
			{"id":"a","type":"code","config":{"mode":"template","template":"A{{input}}"}},{"id":"b","type":"code","config":{"mode":"template","template":"B{{input}}"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"p"},{"id":"e2","source":"p","target":"a"},{"id":"e3","source":"p","target":"b"},{"id":"e4","source":"a","target":"end"},{"id":"e5","source":"b","target":"end"}]}`,
			input:  "1",
			status: workflow.StatusSucceeded, output: "A1 | B1", ran: []string{"a", "b"},
		},
		{
			name: "parallel_by_branch",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"p","type":"parallel","config":{"merge":"by_branch"}},
			{"id":"a","type":"code","config":{"mode":"template","template":"A{{input}}"}},{"id":"b","type":"code","config":{"mode":"template","template":"B{{input}}"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"p"},{"id":"e2","source":"p","target":"a"},{"id":"e3","source":"p","target":"b"},{"id":"e4","source":"a","target":"end"},{"id":"e5","source":"b","target":"end"}]}`,
			input:  "1",
			status: workflow.StatusSucceeded, output: map[string]any{"a": "A1", "b": "B1"},
		},
		{
			name: "parallel_first",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"p","type":"parallel","config":{"merge":"first"}},
			{"id":"fast","type":"code","config":{"mode":"template","template":"fast"}},
			{"id":"slow","type":"code","config":{"mode":"javascript","script":"var t = Date.now(); while (Date.now() - t < 3000) {}; 'slow'","timeout":"10s"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"p"},{"id":"e2","source":"p","target":"fast"},{"id":"e3","source":"p","target":"slow"},{"id":"e4","source":"fast","target":"end"},{"id":"e5","source":"slow","target":"end"}]}`,
			input:  "1",
			status: workflow.StatusSucceeded, output: "fast",
		},
		{
			name: "normalize_fills_defaults",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"n","type":"normalize","config":{"defaults":{"tone":"plain","length":300}}},
			{"id":"c","type":"code","config":{"mode":"template","template":"{{input.normalized.topic}}/{{input.normalized.tone}}/{{input.defaults_applied}}"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"n"},{"id":"e2","source":"n","target":"c"},{"id":"e3","source":"c","target":"end"}]}`,
			input:  map[string]any{"topic": "tea", "tone": ""},
			status: workflow.StatusSucceeded, output: `tea/plain/["length","tone"]`,
		},
		{
			name: "contract_repairs_wrapped_fields",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"g","type":"contract","config":{"schema":{"type":"object","required":["title","count"],"properties":{"title":{"type":"string"},"count":{"type":"integer"}}}}},
			{"id":"c","type":"code","config":{"mode":"template","template":"{{input.contract.status}} {{input.normalized.title}} {{input.normalized.count}}"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"g"},{"id":"e2","source":"g","target":"c"},{"id":"e3","source":"c","target":"end"}]}`,
			input:  "Sure! ```json\n{\"data\": {\"title\": \"Tea\", \"count\": \"3\"}}\n```",
			status: workflow.StatusSucceeded, output: "normalized Tea 3",
		},
		{
			name: "contract_missing_required_stops_run",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"g","type":"contract","config":{"schema":{"type":"object","required":["title"]}}},
			{"id":"after","type":"code","config":{"mode":"template","template":"ran"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"g"},{"id":"e2","source":"g","target":"after"},{"id":"e3","source":"after","target":"end"}]}`,
			input:  `{"handoff": "next"}`,
			status: workflow.StatusFailedContract,
		},
		{
			name: "output_check_passes_object_on",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"o","type":"output_check","config":{"required":["tags"],"types":{"tags":"array"}}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"o"},{"id":"e2","source":"o","target":"end"}]}`,
			input:  `{"tags": ["a"]}`,
			status: workflow.StatusSucceeded, output: map[string]any{"tags": []any{"a"}},
		},
		{
			name: "output_check_rejects_placeholder",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"o","type":"output_check","config":{"required":["tags"]}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"o"},{"id":"e2","source":"o","target":"end"}]}`,
			input:  `{"tags": ["tags"]}`,
			status: workflow.StatusFailedContract,
		},
		{
			name: "data_flow_nodes_and_vars",
			src: `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"a","type":"code","config":{"mode":"template","template":"first"}},
			{"id":"b","type":"code","config":{"mode":"template","template":"{{nodes.a.output}}+{{input}}+{{vars.suffix}}"}},{"id":"end","type":"end"}],
			"edges":[{"id":"e1","source":"start","target":"a"},{"id":"e2","source":"a","target":"b"},{"id":"e3","source":"b","target":"end"}]}`,
			input:  "in",
			status: workflow.StatusSucceeded, output: "first+first+!",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := workflowtest.NewResolver(t, c.turns...)
			res.Add("writer", "You write.")
			e := workflowtest.Engine(t, workflow.Services{Agents: res})
			p := workflowtest.Parse(t, e, c.src)
			rec := &workflowtest.Recorder{}
			start := time.Now()
			out := e.Run(t.Context(), p, workflow.Request{RunID: "r1", Input: c.input, Vars: map[string]any{"suffix": "!"}, Emit: rec.Emit})
			if out.Status != c.status {
				t.Fatalf("status %s (error %q), want %s", out.Status, out.Error, c.status)
			}
			if c.status != workflow.StatusSucceeded && out.Error == "" {
				t.Error("failed without an error message")
			}
			if c.status == workflow.StatusSucceeded {
				if diff := cmp.Diff(c.output, out.Output); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
			}
			for _, n := range c.ran {
				if !slices.Contains(rec.Types(n), workflow.EventNodeFinished) {
					t.Errorf("node %s did not finish; events %v", n, rec.Types(n))
				}
			}
			for _, n := range c.skipped {
				if got := rec.Types(n); !slices.Equal(got, []workflow.EventType{workflow.EventNodeSkipped}) {
					t.Errorf("node %s: events %v, want only node_skipped", n, got)
				}
			}
			if c.name == "parallel_first" && time.Since(start) > 2500*time.Millisecond {
				t.Errorf("first merge waited for the slow branch (%v)", time.Since(start))
			}
			evs := rec.Types("")
			if evs[0] != workflow.EventRunStarted || evs[len(evs)-1] != workflow.EventRunFinished {
				t.Errorf("events %v: want run_started first and run_finished last", evs)
			}
		})
	}
}

func TestAgentEvents(t *testing.T) {
	src := `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"a","type":"agent","config":{"model":"m","tools":["calculator"]}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"a"},{"id":"e2","source":"a","target":"end"}]}`
	out, rec, _ := run(t, src, "2+2?",
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "calculator", Arguments: `{"expression":"2+2"}`}}, Usage: llm.Usage{InputTokens: 5, OutputTokens: 3}},
		llmtest.Turn{Text: "It is 4.", Usage: llm.Usage{InputTokens: 9, OutputTokens: 4}})
	if out.Status != workflow.StatusSucceeded || out.Output != "It is 4." {
		t.Fatalf("outcome %+v", out)
	}
	types := rec.Types("a")
	for _, want := range []workflow.EventType{workflow.EventNodeStarted, workflow.EventToolCall, workflow.EventToolResult, workflow.EventTextDelta, workflow.EventUsage, workflow.EventNodeFinished} {
		if !slices.Contains(types, want) {
			t.Errorf("agent node events %v lack %s", types, want)
		}
	}
	var text strings.Builder
	for _, ev := range rec.Events {
		if ev.Type == workflow.EventTextDelta {
			text.WriteString(ev.Text)
		}
		if ev.Type == workflow.EventToolResult && ev.Tool.Result != "4" {
			t.Errorf("tool result %q, want 4", ev.Tool.Result)
		}
	}
	if text.String() != "It is 4." {
		t.Errorf("text deltas %q", text.String())
	}
}

func TestHandoff(t *testing.T) {
	src := `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"triage","type":"agent","config":{"model":"m"}},
	{"id":"billing","type":"agent","config":{"model":"m","prompt":"Billing: {{input}}"}},{"id":"tech","type":"agent","config":{"model":"m"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"triage"},{"id":"e2","source":"triage","target":"billing"},{"id":"e3","source":"triage","target":"tech"},
	{"id":"e4","source":"billing","target":"end"},{"id":"e5","source":"tech","target":"end"}]}`
	var sawTools []string
	out, rec, res := run(t, src, "refund please",
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "h", Name: "handoff_to_billing", Arguments: `{}`}}, Check: func(body map[string]any) {
			tools, _ := body["tools"].([]any)
			for _, tl := range tools {
				fn := tl.(map[string]any)["function"].(map[string]any)
				sawTools = append(sawTools, fn["name"].(string))
			}
		}},
		llmtest.Turn{Text: "User wants a refund."},
		llmtest.Turn{Text: "Refund issued."})
	if out.Status != workflow.StatusSucceeded || out.Output != "Refund issued." {
		t.Fatalf("outcome %+v", out)
	}
	slices.Sort(sawTools)
	if !slices.Equal(sawTools, []string{"handoff_to_billing", "handoff_to_tech"}) {
		t.Errorf("triage was offered tools %v", sawTools)
	}
	if got := rec.Types("tech"); !slices.Equal(got, []workflow.EventType{workflow.EventNodeSkipped}) {
		t.Errorf("tech events %v, want skipped", got)
	}
	reqs := res.LLM.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[2].Body), "Billing: User wants a refund.") {
		t.Errorf("billing got %d requests; last body %s", len(reqs), reqs[len(reqs)-1].Body)
	}
}

func TestHumanWaitAndResume(t *testing.T) {
	src := `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"draft","type":"code","config":{"mode":"template","template":"draft of {{input}}"}},
	{"id":"ok","type":"human","config":{"prompt":"Approve {{input}}?","timeout":"1h"}},{"id":"final","type":"code","config":{"mode":"template","template":"{{nodes.draft.output}} / {{input}}"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"draft"},{"id":"e2","source":"draft","target":"ok"},{"id":"e3","source":"ok","target":"final"},{"id":"e4","source":"final","target":"end"}]}`
	e := workflowtest.Engine(t, workflow.Services{})
	p := workflowtest.Parse(t, e, src)
	cp := &workflowtest.MemoryCheckpoints{}
	out := e.Run(t.Context(), p, workflow.Request{RunID: "r", Input: "memo", Checkpoints: cp})
	if out.Status != workflow.StatusWaiting || out.WaitingNode != "ok" || out.Wait.Prompt != "Approve draft of memo?" || out.Wait.Deadline == nil {
		t.Fatalf("outcome %+v", out)
	}
	if !slices.Equal(cp.Order, []string{"draft"}) {
		t.Fatalf("saved %v before waiting", cp.Order)
	}
	// The answer arrives: it is saved as the human node's checkpoint.
	if err := cp.Save(t.Context(), out.WaitingKey, "ok", workflow.Saved{Output: "approved"}); err != nil {
		t.Fatal(err)
	}
	out = e.Run(t.Context(), p, workflow.Request{RunID: "r", Input: "memo", Checkpoints: cp})
	if out.Status != workflow.StatusSucceeded || out.Output != "draft of memo / approved" {
		t.Fatalf("after resume: %+v", out)
	}
	if !slices.Equal(cp.Order, []string{"draft", "ok", "final"}) {
		t.Errorf("checkpoints %v: draft must not run twice", cp.Order)
	}
}

func TestReplaySkipsCheckpointedNodes(t *testing.T) {
	src := `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"a","type":"agent","config":{"model":"m"}},{"id":"b","type":"agent","config":{"model":"m","prompt":"next: {{input}}"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"a"},{"id":"e2","source":"a","target":"b"},{"id":"e3","source":"b","target":"end"}]}`
	res := workflowtest.NewResolver(t, llmtest.Turn{Text: "B answer"})
	e := workflowtest.Engine(t, workflow.Services{Agents: res})
	p := workflowtest.Parse(t, e, src)
	cp := &workflowtest.MemoryCheckpoints{Saved: map[string]workflow.Saved{"a": {Output: "A answer (saved)"}}}
	out := e.Run(t.Context(), p, workflow.Request{RunID: "r", Input: "go", Checkpoints: cp})
	if out.Status != workflow.StatusSucceeded || out.Output != "B answer" {
		t.Fatalf("outcome %+v", out)
	}
	reqs := res.LLM.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "next: A answer (saved)") {
		t.Fatalf("model called %d times; want once, for b with a's saved output", len(reqs))
	}
}

func TestHTTPRequest(t *testing.T) {
	var hits atomic.Int32
	var lastKey atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		lastKey.Store(r.Header.Get("Idempotency-Key"))
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"echo": body["q"], "auth": r.Header.Get("Authorization")})
	}))
	defer srv.Close()
	src := `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"h","type":"http-request","config":{"method":"POST","url":"` + srv.URL + `/x","headers":{"Authorization":"Bearer {{vars.token}}"},
	"body":"{\"q\":\"{{input}}\"}","retries":2,"response_mapping":{"answer":"$.echo","auth":"$.auth"}}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"h"},{"id":"e2","source":"h","target":"end"}]}`

	guard := func(allow ...string) *http.Client {
		g, err := (&egress.Policy{Allow: allow}).Compile()
		if err != nil {
			t.Fatal(err)
		}
		return g.Client()
	}
	t.Run("loopback_blocked", func(t *testing.T) {
		e := workflowtest.Engine(t, workflow.Services{HTTP: guard()})
		out := e.Run(t.Context(), workflowtest.Parse(t, e, src), workflow.Request{RunID: "r", Input: "hi", Vars: map[string]any{"token": "t"}})
		if out.Status != workflow.StatusFailed || !strings.Contains(out.Error, "egress allow list") {
			t.Fatalf("outcome %+v", out)
		}
		if hits.Load() != 0 {
			t.Fatalf("blocked request reached the server")
		}
	})
	t.Run("allowed_with_retry_and_mapping", func(t *testing.T) {
		e := workflowtest.Engine(t, workflow.Services{HTTP: guard("127.0.0.1")})
		out := e.Run(t.Context(), workflowtest.Parse(t, e, src), workflow.Request{RunID: "run9", Input: "hi", Vars: map[string]any{"token": "t"}})
		if out.Status != workflow.StatusSucceeded {
			t.Fatalf("outcome %+v", out)
		}
		if diff := cmp.Diff(map[string]any{"answer": "hi", "auth": "Bearer t"}, out.Output); diff != "" {
			t.Errorf("output (-want +got):\n%s", diff)
		}
		if hits.Load() != 2 || lastKey.Load() != "run9/h" {
			t.Errorf("hits %d, idempotency key %v", hits.Load(), lastKey.Load())
		}
	})
}

func TestMaxStepsStopsRunawayLoop(t *testing.T) {
	src := `{"name":"w","settings":{"max_steps":5},"nodes":[{"id":"start","type":"start"},{"id":"l","type":"loop","config":{"condition":"true","max_iterations":100}},
	{"id":"x","type":"code","config":{"mode":"template","template":"x"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"l"},{"id":"e2","source":"l","target":"x","sourceHandle":"body"},{"id":"e3","source":"x","target":"l"},{"id":"e4","source":"l","target":"end","sourceHandle":"done"}]}`
	out, _, _ := run(t, src, "", llmtest.Turn{})
	if out.Status != workflow.StatusFailed || !strings.Contains(out.Error, "max_steps") {
		t.Fatalf("outcome %+v", out)
	}
}

func TestCancel(t *testing.T) {
	src := `{"name":"w","nodes":[{"id":"start","type":"start"},{"id":"a","type":"agent","config":{"model":"m"}},{"id":"end","type":"end"}],
	"edges":[{"id":"e1","source":"start","target":"a"},{"id":"e2","source":"a","target":"end"}]}`
	res := workflowtest.NewResolver(t, llmtest.Turn{Text: strings.Repeat("slow ", 100), Pace: 20 * time.Millisecond})
	e := workflowtest.Engine(t, workflow.Services{Agents: res})
	p := workflowtest.Parse(t, e, src)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	out := e.Run(ctx, p, workflow.Request{RunID: "r", Input: "x", Emit: func(workflow.Event) {}})
	if out.Status != workflow.StatusCanceled {
		t.Fatalf("outcome %+v", out)
	}
}

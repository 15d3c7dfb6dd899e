package aguiserver_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/npmtest"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

// aguiClientVersion is the @ag-ui/client the interop test runs: the
// first release of protocol 1.0 (interrupts and resume).
const aguiClientVersion = "1.0.0"

// interopScript drives the server with @ag-ui/client's HttpAgent: one run
// of agent "helper", then a run of workflow "review" that finishes with
// an interrupt, then the run that resumes it. runAgent pipes every stream
// through the client's own verifyEvents; the script also runs
// verifyEvents on each collected stream by itself, so a stream the
// client's verifier refuses fails the script either way. It prints one
// JSON summary.
const interopScript = `
import { HttpAgent, verifyEvents, buildResumeArray } from "@ag-ui/client";
import { from, lastValueFrom, toArray } from "rxjs";

const [base, key] = process.argv.slice(2);
const headers = { Authorization: "Bearer " + key };

async function run(agent, params) {
  const events = [];
  await agent.runAgent(params, { onEvent: ({ event }) => { events.push(event); } });
  await lastValueFrom(from(events).pipe(verifyEvents(), toArray()));
  return events;
}

const out = {};

const helper = new HttpAgent({ url: base + "/agui/helper", headers, threadId: "t-agent" });
helper.addMessage({ id: "u1", role: "user", content: "Hello" });
const a = await run(helper, {});
out.agent = { types: a.map(e => e.type), answer: helper.messages.at(-1).content };

const wf = new HttpAgent({ url: base + "/agui/workflows/review", headers, threadId: "t-wf",
  initialState: { vars: { lang: "fr" } } });
wf.addMessage({ id: "u1", role: "user", content: "the news" });
const w1 = await run(wf, {});
const pending = wf.pendingInterrupts;
out.first = { types: w1.map(e => e.type), outcome: w1.at(-1).outcome.type, interrupts: pending,
  nodes: wf.state.nodes, run: wf.state.run };

const resume = buildResumeArray(pending, { [pending[0].id]: { status: "resolved", payload: { ok: true } } });
const w2 = await run(wf, { resume });
out.second = { types: w2.map(e => e.type), outcome: w2.at(-1).outcome.type, result: w2.at(-1).result,
  nodes: wf.state.nodes, run: wf.state.run, answer: wf.messages.at(-1).content,
  pendingAfter: wf.pendingInterrupts.length };

console.log(JSON.stringify(out));
`

// TestAGUIClientInterop: the real @ag-ui/client runs an agent and a
// workflow with a human node, its verifier accepts every stream, the
// interrupt arrives as the client's pendingInterrupts, and resuming it
// finishes the run with the answer and every node succeeded in the
// client's state (built by the client from the snapshot and the
// patches).
func TestAGUIClientInterop(t *testing.T) {
	dir := npmtest.AGUIClient(t, aguiClientVersion)
	f := newWFEnv(t, llmtest.Turn{Text: "D1"})
	raw := npmtest.Run(t, dir, interopScript, f.url, f.env.Key)
	var out struct {
		Agent struct {
			Types  []string
			Answer string
		}
		First struct {
			Types      []string
			Outcome    string
			Interrupts []struct {
				ID, Reason, Message string
				Metadata            map[string]any
			}
			Nodes map[string]string
			Run   map[string]string
		}
		Second struct {
			Types        []string
			Outcome      string
			Result       string
			Nodes        map[string]string
			Run          map[string]string
			Answer       string
			PendingAfter int
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("script output %s: %v", raw, err)
	}
	if out.Agent.Answer != "Agent answer." || out.Agent.Types[0] != "RUN_STARTED" || out.Agent.Types[len(out.Agent.Types)-1] != "RUN_FINISHED" {
		t.Errorf("agent run: %+v", out.Agent)
	}
	first := out.First
	if first.Outcome != "interrupt" || len(first.Interrupts) != 1 || first.Interrupts[0].Message != "Publish D1?" ||
		first.Interrupts[0].Reason != "input_required" || first.Interrupts[0].Metadata["runId"] != first.Run["id"] {
		t.Fatalf("first workflow run: %+v", first)
	}
	if first.Nodes["draft"] != "succeeded" || first.Nodes["ask"] != "waiting" || first.Nodes["final"] != "pending" || first.Run["status"] != "waiting" {
		t.Errorf("client state after the interrupt: nodes %v, run %v", first.Nodes, first.Run)
	}
	if !slices.Contains(first.Types, "STEP_STARTED") || !slices.Contains(first.Types, "STATE_DELTA") || first.Types[1] != "STATE_SNAPSHOT" {
		t.Errorf("first run events %v", first.Types)
	}
	second := out.Second
	if second.Outcome != "success" || second.Result != "D1 / true / fr" || second.Answer != "D1 / true / fr" || second.PendingAfter != 0 {
		t.Errorf("resumed run: %+v", second)
	}
	for id, st := range second.Nodes {
		if st != "succeeded" {
			t.Errorf("client state: node %s is %s after the resumed run, want succeeded", id, st)
		}
	}
	if second.Run["status"] != "succeeded" || second.Run["id"] != first.Run["id"] {
		t.Errorf("client state run %v, want the same run succeeded", second.Run)
	}
}

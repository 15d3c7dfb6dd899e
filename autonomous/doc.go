// Package autonomous runs an agent left to reach a goal by itself, in the
// two modes of the AgentCraftLab design: ReAct (observe → think → act, with
// sub-agents, budgets and self-reflection) and Flow (the planner model
// writes a FlowPlan, a small graph of seven node kinds, that the workflow
// engine runs durably and that a finished run crystallizes into an
// ordinary workflow; see flow.go).
//
// A ReAct run is one Executor.Run. Its policies are small interfaces, each
// replaceable: Budget (steps, tokens, wall time), Human (ask_user and the
// approval of medium and high tool calls: both park the run), History
// (compaction by summary), Reflector (a short self-critique after a failed
// step or a rejected answer) and Delegation (which tools a sub-agent may
// have). The model calls, tool calls and human answers of every agent of
// the tree are entries of a Journal: the workflow node executing the run
// records them as journal entries of its execution (workflow.Exec.Record),
// so a run parked on ask_user, or killed with the process, runs again from
// its journal without repeating a model or tool call, and continues.
//
// The parent's tools reach it bound to their caller (the run seam's
// agent.Agent: its Gate, timeouts and result caps apply to every call).
// Twelve meta-tools are added: create_agent, ask_agent, spawn_agent,
// collect_results, stop_agent, send_message, list_agents, shared_state_get,
// shared_state_set, ask_user, peer_review and challenge. Sub-agents run
// concurrently, share the parent's budget (their tokens count toward every
// ancestor's), get at most the parent's tools, never ask_user, stop at
// Limits.MaxDepth, and stop when the parent's context ends: cancelling the
// run's context (POST /api/runs/{id}/cancel) stops the whole tree.
//
// Safety, as the design grades it: P0 — a call of a tool of medium or high
// capability parks the run for a person's decision (Config.ApproveFrom);
// P1 — every thought, tool call, result, sub-agent message and reflection
// is an Event; P2 — a final answer that fails Config.Check is reflected on
// and retried; and tool results are untrusted input: each is scanned for
// prompt injection (a guard event names the tool and call), fenced as data
// before the model reads it, and nothing in it can add a tool, raise a
// capability or skip an approval, since those are decided here from the
// tool's declared capability alone.
package autonomous

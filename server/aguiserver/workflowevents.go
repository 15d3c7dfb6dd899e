package aguiserver

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/server/openaiapi"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// Node states in the shared state's "nodes" map.
const (
	statusPending   = "pending"
	statusRunning   = "running"
	statusSucceeded = "succeeded"
	statusFailed    = "failed"
	statusSkipped   = "skipped"
	statusWaiting   = "waiting"
	statusCanceled  = "canceled"
)

// follower turns one workflow run's events into AG-UI events. The shared
// state it keeps is
//
//	{"run": {"id": run id, "workflow": name, "status": run status},
//	 "nodes": {node id: pending | running | succeeded | failed | skipped | waiting | canceled}}
//
// sent whole as STATE_SNAPSHOT when the stream starts and as STATE_DELTA
// JSON Patches (replace /nodes/<id>, replace /run/status) as it changes.
// A node's execution is a step named by its execution key (the node id,
// or "loop#2/draft" inside a loop or an iteration, where one node runs
// several times, even at once).
type follower struct {
	w        http.ResponseWriter
	e        *encoder
	mu       sync.Mutex // serializes the events and the keep-alives on e
	in       workflowInput
	workflow string
	runID    string

	// nodes is each node's state, by node id; order is the definition's.
	nodes map[string]string
	order []string
	// steps are the execution keys started and not finished, in order.
	steps []string
	// wait is what the human node the run parks on asks.
	wait *workflow.Wait
	// calls are the tool calls started and not yet answered.
	calls map[string]bool
}

func newFollower(w http.ResponseWriter, in workflowInput, name, runID string, def *workflow.Definition) *follower {
	f := &follower{w: w, e: newEncoder(w, in.ThreadID, in.RunID), in: in, workflow: name, runID: runID,
		nodes: make(map[string]string, len(def.Nodes)), calls: map[string]bool{}}
	for _, n := range def.Nodes {
		if _, dup := f.nodes[n.ID]; !dup {
			f.order = append(f.order, n.ID)
		}
		f.nodes[n.ID] = statusPending
	}
	return f
}

// track applies ev to the node states without sending anything, and
// says which node changed to what.
func (f *follower) track(ev workflow.Event) (node, status string, changed bool) {
	switch ev.Type {
	case workflow.EventNodeStarted:
		status = statusRunning
	case workflow.EventNodeFinished:
		status = statusSucceeded
	case workflow.EventNodeFailed:
		status = statusFailed
	case workflow.EventNodeSkipped:
		status = statusSkipped
	case workflow.EventWaiting:
		status = statusWaiting
		f.wait = workflow.WaitOf(ev.Data)
	default:
		return "", "", false
	}
	if ev.NodeID == "" {
		return "", "", false
	}
	if _, known := f.nodes[ev.NodeID]; !known {
		f.order = append(f.order, ev.NodeID)
	}
	if f.nodes[ev.NodeID] == status {
		return ev.NodeID, status, false
	}
	f.nodes[ev.NodeID] = status
	return ev.NodeID, status, true
}

// snapshot is the whole shared state.
func (f *follower) snapshot(runStatus string) map[string]any {
	nodes := make(map[string]any, len(f.nodes))
	for id, st := range f.nodes {
		nodes[id] = st
	}
	return map[string]any{
		"run":   map[string]any{"id": f.runID, "workflow": f.workflow, "status": runStatus},
		"nodes": nodes,
	}
}

// start names the run in the X-AgentCraft-Run-Id header and sends
// RUN_STARTED and the state snapshot.
func (f *follower) start() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.w.Header().Set(openaiapi.RunIDHeader, f.runID)
	if err := f.e.runStarted(f.in.ParentRunID); err != nil {
		return err
	}
	return f.e.write(&wireEvent{Type: typeStateSnapshot, Snapshot: f.snapshot("running")})
}

// nodePath is the JSON Pointer (RFC 6901) of a node's state.
func nodePath(id string) string {
	return "/nodes/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(id)
}

// event sends what one run event (not run_finished) means on the wire.
func (f *follower) event(ev workflow.Event) error {
	node, status, changed := f.track(ev)
	step := ev.Key
	if step == "" {
		step = ev.NodeID
	}
	switch ev.Type {
	case workflow.EventNodeStarted:
		if err := f.e.write(&wireEvent{Type: typeStepStarted, StepName: step}); err != nil {
			return err
		}
		f.steps = append(f.steps, step)
	case workflow.EventNodeFinished, workflow.EventNodeFailed, workflow.EventWaiting:
		if err := f.endStep(step); err != nil {
			return err
		}
	case workflow.EventToolCall:
		if t := ev.Tool; t != nil && t.CallID != "" && !f.calls[t.CallID] {
			f.calls[t.CallID] = true
			if err := f.e.write(&wireEvent{Type: typeToolCallStart, ToolCallID: t.CallID, ToolCallName: t.Name}); err != nil {
				return err
			}
			if t.Arguments != "" {
				if err := f.e.write(&wireEvent{Type: typeToolCallArgs, ToolCallID: t.CallID, Delta: t.Arguments}); err != nil {
					return err
				}
			}
			return f.e.write(&wireEvent{Type: typeToolCallEnd, ToolCallID: t.CallID})
		}
	case workflow.EventToolResult:
		if t := ev.Tool; t != nil && f.calls[t.CallID] {
			delete(f.calls, t.CallID)
			content := t.Result
			return f.e.write(&wireEvent{Type: typeToolCallResult, MessageID: newID("msg_"), ToolCallID: t.CallID, Content: &content, Role: "tool"})
		}
	}
	if changed {
		return f.e.write(&stateDelta{Type: typeStateDelta, Delta: []patchOp{{Op: "replace", Path: nodePath(node), Value: status}}})
	}
	return nil
}

// endStep finishes the step named step if it is open.
func (f *follower) endStep(step string) error {
	for i, s := range f.steps {
		if s == step {
			f.steps = append(f.steps[:i], f.steps[i+1:]...)
			return f.e.write(&wireEvent{Type: typeStepFinished, StepName: step})
		}
	}
	return nil
}

// closeSteps finishes every open step: AG-UI finishes no run with a step
// open, and a canceled or failed run leaves some.
func (f *follower) closeSteps() error {
	for len(f.steps) > 0 {
		if err := f.endStep(f.steps[0]); err != nil {
			return err
		}
	}
	return nil
}

// runStatus sends the run's status as a patch.
func (f *follower) runStatus(status string) error {
	return f.e.write(&stateDelta{Type: typeStateDelta, Delta: []patchOp{{Op: "replace", Path: "/run/status", Value: status}}})
}

// finish ends the stream as the run ended: its output as the answer and
// RUN_FINISHED, the human node's question as an interrupt, or RUN_ERROR.
func (f *follower) finish(end workflow.Event) error {
	if err := f.closeSteps(); err != nil {
		return err
	}
	if err := f.runStatus(end.Status); err != nil {
		return err
	}
	switch end.Status {
	case workflow.StatusSucceeded:
		if text := openaiapi.OutputText(end.Output); text != "" {
			id := newID("msg_")
			for _, ev := range []*wireEvent{
				{Type: typeTextMessageStart, MessageID: id, Role: "assistant"},
				{Type: typeTextMessageContent, MessageID: id, Delta: text},
				{Type: typeTextMessageEnd, MessageID: id},
			} {
				if err := f.e.write(ev); err != nil {
					return err
				}
			}
		}
		f.e.finished = true
		return f.e.write(&wireEvent{Type: typeRunFinished, ThreadID: f.e.threadID, RunID: f.e.runID, Result: end.Output, Outcome: &outcome{Type: "success"}})
	case workflow.StatusWaiting:
		key := end.Key
		if key == "" {
			key = end.NodeID
		}
		it := interrupt{ID: f.runID + ":" + key, Reason: interruptReason,
			Metadata: map[string]any{"runId": f.runID, "nodeId": nodeOfKey(key), "key": key, "workflow": f.workflow}}
		if f.wait != nil {
			it.Message, it.ResponseSchema = f.wait.Prompt, f.wait.FormSchema
			if f.wait.Deadline != nil {
				it.ExpiresAt = f.wait.Deadline.UTC().Format(time.RFC3339)
			}
		}
		if it.Message == "" {
			it.Message = "The workflow waits for input at node " + nodeOfKey(key) + "."
		}
		f.e.finished = true
		return f.e.write(&wireEvent{Type: typeRunFinished, ThreadID: f.e.threadID, RunID: f.e.runID, Outcome: &outcome{Type: "interrupt", Interrupts: []interrupt{it}}})
	case workflow.StatusCanceled:
		f.e.finished = true
		return f.e.write(&wireEvent{Type: typeRunFinished, ThreadID: f.e.threadID, RunID: f.e.runID, Outcome: &outcome{Type: "cancelled"}})
	}
	msg := end.Error
	if msg == "" {
		msg = "workflow run ended with status " + end.Status
	}
	return f.e.runError(msg, "workflow_"+end.Status)
}

// cancelled answers a resume that cancelled the interrupt at key: the run
// was canceled, and this run says so.
func (f *follower) cancelled(key string) {
	f.nodes[nodeOfKey(key)] = statusCanceled
	if err := f.start(); err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = f.finish(workflow.Event{Type: workflow.EventRunFinished, Status: workflow.StatusCanceled})
}

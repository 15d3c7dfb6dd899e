package openaiapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// WorkflowModelPrefix starts the model id of a workflow: workflow "triage"
// is model "workflow/triage". Agents keep their bare names as model ids, so
// an agent called "workflow" is model "workflow" and never collides; an
// agent whose own name starts with the prefix shadows the workflow of the
// same id, as agent ids stay what they were before workflows were listed.
const WorkflowModelPrefix = "workflow/"

// RunIDHeader carries the id of the durable run a workflow completion
// started. It is set on every answer once the run exists, before the first
// byte, so a client can follow or resume the run through the run API.
const RunIDHeader = "X-AgentCraft-Run-Id"

// workflowOwner is owned_by of workflow models.
const workflowOwner = "agentcraft-workflow"

// streamChunkBytes caps the content of one SSE chunk when a workflow's
// final output is streamed.
const streamChunkBytes = 256

// workflowModels lists the workspace's workflows as models, leaving out an
// id an agent already answers to.
func (h *Handler) workflowModels(ctx context.Context, workspaceID string, agents []store.Agent) ([]modelInfo, error) {
	wfs, err := h.runs.Workflows(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	taken := make(map[string]bool, len(agents))
	for _, a := range agents {
		taken[a.Name] = true
	}
	out := make([]modelInfo, 0, len(wfs))
	for _, wf := range wfs {
		id := WorkflowModelPrefix + wf.Name
		if taken[id] {
			continue
		}
		out = append(out, modelInfo{ID: id, Object: "model", Created: wf.CreatedAt.Unix(), OwnedBy: workflowOwner})
	}
	return out, nil
}

// workflowName returns the workflow a model id names when the handler runs
// workflows and err says no agent has that id.
func (h *Handler) workflowName(model string, err error) (string, bool) {
	if h.runs == nil || !errors.Is(err, platform.ErrUnknownAgent) {
		return "", false
	}
	name, ok := strings.CutPrefix(model, WorkflowModelPrefix)
	return name, ok && name != ""
}

// getWorkflow reads the workflow or answers model_not_found.
func (h *Handler) getWorkflow(ctx context.Context, workspaceID, name string) (store.Workflow, error) {
	wf, err := h.runs.WorkflowByName(ctx, workspaceID, name)
	if errors.Is(err, store.ErrNotFound) {
		return wf, apierr.NotFound("model_not_found", fmt.Sprintf("unknown workflow %q: the model must name an agent or a %s<name> listed by GET /v1/models", name, WorkflowModelPrefix))
	}
	if err != nil {
		return wf, fmt.Errorf("openaiapi: read workflow %q: %w", name, err)
	}
	return wf, nil
}

// workflowRequest is what a chat request tells a workflow run.
type workflowRequest struct {
	input    string
	vars     map[string]any
	progress bool
}

// decodeWorkflowRequest takes {{input}} from the last user message and
// {{vars.*}} from metadata; metadata.progress "true" asks for node progress
// as reasoning_content.
func decodeWorkflowRequest(body []byte, msgs []llm.Message) (workflowRequest, error) {
	var wr workflowRequest
	found := false
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			wr.input, found = msgs[i].Text(), true
			break
		}
	}
	if !found {
		return wr, badParam("messages", "messages needs a user message: its text is the workflow's {{input}}")
	}
	var meta struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(body, &meta); err != nil {
		return wr, badParam("metadata", "metadata must be an object whose values are strings; they become the workflow's {{vars.<key>}}")
	}
	for k, raw := range meta.Metadata {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return wr, badParam("metadata."+k, "metadata.%s must be a string: metadata values become the workflow's {{vars.<key>}}", k)
		}
		if wr.vars == nil {
			wr.vars = make(map[string]any, len(meta.Metadata))
		}
		wr.vars[k] = s
		if k == "progress" {
			wr.progress, _ = strconv.ParseBool(s)
		}
	}
	return wr, nil
}

// workflowError maps errors of starting a run.
func workflowError(err error) error {
	var inv *workflow.InvalidError
	if errors.As(err, &inv) {
		return &apierr.Error{Status: http.StatusUnprocessableEntity, Type: "invalid_workflow", Code: "invalid_workflow",
			Message: "the stored workflow does not validate; fix it and save it again: " + inv.Error()}
	}
	return err
}

// runEnd is how a followed run ended.
type runEnd struct {
	status   string
	output   any
	err      string
	waitNode string
	wait     *workflow.Wait
}

// runWorkflow answers a chat completion by running the workflow.
func (c *call) runWorkflow(ctx context.Context, w http.ResponseWriter, body []byte, msgs []llm.Message, name string) {
	wf, err := c.h.getWorkflow(ctx, c.pr.WorkspaceID, name)
	if err != nil {
		c.failEarly(w, err)
		return
	}
	wr, ok := c.runRequest(w, body, msgs)
	if !ok {
		return
	}
	c.startAndFollow(ctx, w, controlplane.StartRequest{WorkspaceID: c.pr.WorkspaceID, WorkflowID: wf.ID,
		WorkflowVersion: wf.Version, Definition: wf.Definition, Input: controlplane.RunInput{Input: wr.input, Vars: wr.vars}}, wr.progress)
}

// runRequest reads what a chat request tells a run; false when it was
// answered already: a bad request, or one of Open WebUI's background tasks.
func (c *call) runRequest(w http.ResponseWriter, body []byte, msgs []llm.Message) (workflowRequest, bool) {
	wr, err := decodeWorkflowRequest(body, msgs)
	if err != nil {
		c.failEarly(w, err)
		return wr, false
	}
	c.id = newID()
	c.created = c.start.Unix()
	if isOpenWebUITask(msgs) {
		// Open WebUI asks the chat's model for titles, tags and follow-ups
		// after every answer; running the workflow for them would repeat
		// its side effects. An empty answer makes Open WebUI use defaults.
		(&follower{c: c, w: w}).answerText("", nil)
		return wr, false
	}
	return wr, true
}

// runAutonomous answers a chat completion with an autonomous agent: a
// durable run of one autonomous node toward the last user message, its
// steps streamed as reasoning_content. A question or an approval parks
// the run; the answer says so, with the run id to resume.
func (c *call) runAutonomous(ctx context.Context, w http.ResponseWriter, body []byte, msgs []llm.Message, name string, au *store.AgentAutonomous) {
	wr, ok := c.runRequest(w, body, msgs)
	if !ok {
		return
	}
	def, err := json.Marshal(controlplane.AgentDefinition(name, au))
	if err != nil {
		c.failEarly(w, err)
		return
	}
	c.startAndFollow(ctx, w, controlplane.StartRequest{WorkspaceID: c.pr.WorkspaceID, Definition: def,
		Input: controlplane.RunInput{Input: wr.input, Vars: wr.vars}}, true)
}

// startAndFollow starts a run and answers the chat completion from it:
// the run id in a header, progress (when asked and streaming) as
// reasoning_content, the final output as the answer.
func (c *call) startAndFollow(ctx context.Context, w http.ResponseWriter, req controlplane.StartRequest, progress bool) {
	run, err := c.h.runs.Start(ctx, req)
	if err != nil {
		c.failEarly(w, workflowError(err))
		return
	}
	w.Header().Set(RunIDHeader, run.ID)
	f := &follower{c: c, w: w, run: run, progress: progress && c.req.Stream}
	if !c.req.Stream {
		f.whole(ctx)
		return
	}
	var each func(workflow.Event) error
	if f.progress {
		each = f.sendProgress
	}
	end, err := f.follow(ctx, each)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, errClientGone) {
			f.fail(err)
		}
		return // else the client left; the run goes on
	}
	text, ae := f.answer(end)
	f.answerText(text, ae)
}

// follower reads a run's events and writes the answer. The run is durable
// and keeps going when the client leaves; only the following stops.
type follower struct {
	c        *call
	w        http.ResponseWriter
	run      store.Run
	progress bool
	cw       *chunkWriter // nil until the SSE stream has begun
	usage    llm.Usage
	// lineOpen is set when the last progress text did not end a line.
	lineOpen bool
}

// follow yields the run's events to each (nil: none) and returns how the
// run ended. It returns an error when reading fails or ctx ends first.
func (f *follower) follow(ctx context.Context, each func(workflow.Event) error) (runEnd, error) {
	var end *runEnd
	var wait *workflow.Wait
	var eachErr error
	err := f.events(ctx, func(ev workflow.Event) bool {
		switch ev.Type {
		case workflow.EventUsage:
			if ev.Usage != nil {
				f.usage = f.usage.Add(*ev.Usage)
			}
		case workflow.EventWaiting:
			wait = workflow.WaitOf(ev.Data)
		case workflow.EventRunFinished:
			end = &runEnd{status: ev.Status, output: ev.Output, err: ev.Error, waitNode: ev.NodeID}
		}
		if each != nil {
			if eachErr = each(ev); eachErr != nil {
				return false
			}
		}
		return end == nil
	})
	switch {
	case eachErr != nil:
		return runEnd{}, eachErr
	case err != nil:
		return runEnd{}, fmt.Errorf("openaiapi: follow run %s: %w", f.run.ID, err)
	case end != nil:
		end.wait = wait
		return *end, nil
	case ctx.Err() != nil:
		return runEnd{}, ctx.Err()
	}
	// The stream ended without run_finished (its events were not all
	// saved): the row has the outcome.
	row, err := f.c.h.runs.Run(ctx, f.run.WorkspaceID, f.run.ID)
	if err != nil {
		return runEnd{}, fmt.Errorf("openaiapi: read run %s: %w", f.run.ID, err)
	}
	if !row.Status.Final() && row.Status != store.RunWaiting {
		return runEnd{}, fmt.Errorf("openaiapi: run %s event stream ended while the run is %s", row.ID, row.Status)
	}
	out := runEnd{status: string(row.Status), err: row.Error, waitNode: row.WaitingNode, wait: wait}
	if len(row.Output) > 0 {
		_ = json.Unmarshal(row.Output, &out.output)
	}
	return out, nil
}

// events calls Runs.Events from the run's first event.
func (f *follower) events(ctx context.Context, yield func(workflow.Event) bool) error {
	return f.c.h.runs.Events(ctx, f.run.WorkspaceID, f.run.ID, 0, yield)
}

// answer returns the assistant text of a run that succeeded or waits, or
// the API error of one that did not.
func (f *follower) answer(end runEnd) (string, *apierr.Error) {
	switch end.status {
	case workflow.StatusSucceeded:
		return outputText(end.output), nil
	case workflow.StatusWaiting:
		// A parked run is not an error: the workflow did what it should
		// and asks a person. Say so in the answer so a chat UI shows it.
		var b strings.Builder
		fmt.Fprintf(&b, "Workflow run %s is waiting for input", f.run.ID)
		if end.waitNode != "" {
			fmt.Fprintf(&b, " at node %q", end.waitNode)
		}
		if end.wait != nil && end.wait.Prompt != "" {
			b.WriteString(": ")
			b.WriteString(end.wait.Prompt)
		} else {
			b.WriteString(".")
		}
		b.WriteString("\nResume the run with its id to continue.")
		return b.String(), nil
	}
	return "", runError(end)
}

// runError is the API error of a run that ended without an answer.
func runError(end runEnd) *apierr.Error {
	status := http.StatusBadGateway
	switch end.status {
	case workflow.StatusFailedContract, workflow.StatusBlocked:
		status = http.StatusUnprocessableEntity
	case workflow.StatusCanceled:
		status = http.StatusConflict
	}
	msg := end.err
	if msg == "" {
		msg = "workflow run ended with status " + end.status
	}
	return &apierr.Error{Status: status, Type: end.status, Code: "workflow_" + end.status, Message: msg}
}

// OutputText renders a workflow run's final output as answer text, as the
// chat completion of a workflow model carries it: strings as they are,
// anything else as compact JSON. The AG-UI surface answers with the same.
func OutputText(v any) string { return outputText(v) }

// outputText renders a final output: strings as they are, anything else as
// compact JSON.
func outputText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.RawMessage:
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// whole waits for the run and answers one chat.completion.
func (f *follower) whole(ctx context.Context) {
	end, err := f.follow(ctx, nil)
	if err != nil {
		if ctx.Err() == nil {
			f.c.failEarly(f.w, err)
		}
		return
	}
	f.answerText(f.answer(end))
}

// writeWhole answers one chat.completion holding text.
func (f *follower) writeWhole(text string) {
	fr := string(llm.FinishStop)
	c := f.c
	httpapi.WriteJSON(f.w, http.StatusOK, chatCompletion{
		ID: c.id, Object: "chat.completion", Created: c.created, Model: c.req.Model,
		Choices: []choice{{Index: 0, Message: &outMessage{Role: "assistant", Content: &text}, FinishReason: &fr}},
		Usage:   toWireUsage(f.usage),
	})
}

// begin starts the SSE answer. Until then an error is still a proper HTTP
// error, which is why nothing is sent before progress or the answer.
func (f *follower) begin() error {
	if f.cw != nil {
		return nil
	}
	f.cw = newChunkWriter(f.w, f.c)
	empty := ""
	return f.cw.sendDelta(outMessage{Role: "assistant", Content: &empty}, nil)
}

// answerText streams text as content (progress, if any, was sent while
// following) and ends the stream, or reports ae.
func (f *follower) answerText(text string, ae *apierr.Error) {
	if ae != nil {
		f.fail(ae)
		return
	}
	if !f.c.req.Stream {
		f.writeWhole(text)
		return
	}
	if err := f.begin(); err != nil {
		return
	}
	if f.lineOpen {
		if err := f.cw.sendDelta(outMessage{ReasoningContent: "\n"}, nil); err != nil {
			return
		}
	}
	for part := range chunks(text, streamChunkBytes) {
		f.cw.text = part
		if err := f.cw.sendDelta(outMessage{Content: &f.cw.text}, nil); err != nil {
			return
		}
	}
	fr := string(llm.FinishStop)
	_ = f.cw.sendDelta(outMessage{}, &fr)
	if f.c.req.StreamOptions != nil && f.c.req.StreamOptions.IncludeUsage {
		f.cw.chunk.Choices = []choice{}
		f.cw.chunk.Usage = toWireUsage(f.usage)
		_ = f.cw.write(&f.cw.chunk)
	}
	_ = f.cw.sse.WriteData([]byte("[DONE]"))
}

// fail reports err: as an HTTP error before the stream began, in-band
// after, as the agent path does.
func (f *follower) fail(err error) {
	if f.cw == nil {
		f.c.failEarly(f.w, err)
		return
	}
	ae := toAPIError(err)
	if ae.Status >= 500 && ae.Type == apierr.TypeServer {
		f.c.h.logger.Warn("chat_completion_failed", "workspace_id", f.c.pr.WorkspaceID, "model", f.c.req.Model, "run_id", f.run.ID, "error", err)
	}
	_ = f.cw.write(ae.Body())
}

// errClientGone stops following when the client no longer reads.
var errClientGone = errors.New("openaiapi: client stopped reading the stream")

// sendProgress renders one run event as reasoning_content.
func (f *follower) sendProgress(ev workflow.Event) error {
	text := progressLine(ev)
	if text == "" {
		return nil
	}
	if ev.Type != workflow.EventTextDelta && f.lineOpen {
		text = "\n" + text
	}
	if err := f.begin(); err != nil {
		return errClientGone
	}
	f.lineOpen = !strings.HasSuffix(text, "\n")
	if err := f.cw.sendDelta(outMessage{ReasoningContent: text}, nil); err != nil {
		return errClientGone
	}
	return nil
}

// progressLine is the reasoning_content of a run event ("" for none): chat
// UIs show it as the model's thinking.
func progressLine(ev workflow.Event) string {
	node := ev.Key
	if node == "" {
		node = ev.NodeID
	}
	quiet := ev.NodeType == "start" || ev.NodeType == "end"
	switch ev.Type {
	case workflow.EventNodeStarted:
		if !quiet {
			return "▶ node " + node + " (" + ev.NodeType + ")…\n"
		}
	case workflow.EventNodeFinished:
		if !quiet {
			return "✓ " + node + " " + formatDuration(ev.DurationMS) + "\n"
		}
	case workflow.EventNodeFailed:
		return "✗ " + node + ": " + ev.Error + "\n"
	case workflow.EventTextDelta:
		return ev.Text
	case workflow.EventToolCall:
		if ev.Tool != nil {
			return "Calling " + ev.Tool.Name + " " + ev.Tool.Arguments + "\n"
		}
	case workflow.EventToolResult:
		if ev.Tool != nil {
			status := "returned"
			if ev.Tool.IsError {
				status = "failed"
			}
			return ev.Tool.Name + " " + status + ": " + ev.Tool.Result + "\n"
		}
	case workflow.EventWaiting:
		return "⏸ " + node + " waits for input\n"
	case workflow.EventRunBlocked:
		return "⛔ input blocked: " + ev.Error + "\n"
	case workflow.EventAgentStep:
		return agentStepLine(ev)
	}
	return ""
}

// agentStepLine is the reasoning_content of an autonomous agent's step:
// its thoughts, tool calls and results, messages between agents,
// reflections, reviews, guard findings and budget stops.
func agentStepLine(ev workflow.Event) string {
	var st struct {
		Type    string `json:"type"`
		Agent   string `json:"agent"`
		Text    string `json:"text"`
		Tool    string `json:"tool"`
		Args    string `json:"arguments"`
		Result  string `json:"result"`
		IsError bool   `json:"is_error"`
		To      string `json:"to"`
	}
	b, err := json.Marshal(ev.Data)
	if err != nil || json.Unmarshal(b, &st) != nil {
		return ""
	}
	who := "[" + st.Agent + "] "
	switch st.Type {
	case "thought", "answer":
		if st.Text != "" {
			return who + st.Text + "\n"
		}
	case "tool_call":
		return who + "Calling " + st.Tool + " " + st.Args + "\n"
	case "tool_result":
		status := "returned"
		if st.IsError {
			status = "failed"
		}
		return who + st.Tool + " " + status + ": " + st.Result + "\n"
	case "message":
		return who + "→ " + st.To + ": " + st.Text + "\n"
	case "reflection", "review", "guard", "budget", "ask":
		return who + st.Type + ": " + st.Text + "\n"
	}
	return ""
}

// formatDuration renders milliseconds as "340ms" or "1.2s".
func formatDuration(ms float64) string {
	if ms < 1000 {
		return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', 1, 64) + "s"
}

// chunks splits s into pieces of at most n bytes on rune boundaries.
func chunks(s string, n int) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for len(s) > 0 {
			cut := min(n, len(s))
			for cut < len(s) && cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			if cut == 0 {
				_, cut = utf8.DecodeRuneInString(s)
			}
			if !yield(s[:cut]) {
				return
			}
			s = s[cut:]
		}
	}
}

package aguiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/server/apierr"
)

// Resume statuses of AG-UI's ResumeEntry.
const (
	resumeResolved  = "resolved"
	resumeCancelled = "cancelled"
)

// resumeEntry answers one interrupt of the previous run.
type resumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload"`
}

// workflowState is the part of RunAgentInput.state a workflow run reads:
// the same input and vars as the body of POST /api/workflows/{id}/runs.
// The server's own state (nodes, run) is what it sent back and is not
// read.
type workflowState struct {
	Input json.RawMessage `json:"input"`
	Vars  json.RawMessage `json:"vars"`
}

// workflowInput is a decoded, checked RunAgentInput for a workflow.
type workflowInput struct {
	ThreadID, RunID, ParentRunID string
	// Input is the run's {{input}}: state.input when given, else the
	// text of the last user message.
	Input any
	// Vars are the run's {{vars.<name>}}, from state.vars.
	Vars map[string]any
	// Resume answers the interrupt of the previous run; a run starts
	// when it is empty.
	Resume *resumeEntry
}

// decodeWorkflowInput reads a RunAgentInput addressed to a workflow.
// Tools, context and forwardedProps are accepted and not used: a workflow
// calls no frontend tools and reads no conversation. Every refusal is a
// 400 naming the field.
func decodeWorkflowInput(body []byte) (workflowInput, *apierr.Error) {
	var in runInput
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&in); err != nil {
		return workflowInput{}, apierr.BadRequest("", "the body must be a RunAgentInput JSON object: "+jsonProblem(err))
	}
	if dec.More() {
		return workflowInput{}, apierr.BadRequest("", "the body must hold one RunAgentInput JSON object, not several values")
	}
	switch {
	case in.ThreadID == "":
		return workflowInput{}, apierr.BadRequest("threadId", "threadId is required: the id of the conversation this run belongs to, the same for every run of it")
	case in.RunID == "":
		return workflowInput{}, apierr.BadRequest("runId", "runId is required: a new id for this run")
	}
	out := workflowInput{ThreadID: in.ThreadID, RunID: in.RunID, ParentRunID: in.ParentRunID}
	var userText string
	haveUser := false
	for i, m := range in.Messages {
		lm, keep, ae := m.toLLM(i)
		if ae != nil {
			return workflowInput{}, ae
		}
		if keep && lm.Role == llm.RoleUser {
			userText, haveUser = lm.Text(), true
		}
	}
	if r := bytes.TrimSpace(in.Resume); len(r) > 0 && !bytes.Equal(r, []byte("null")) {
		var entries []resumeEntry
		if err := json.Unmarshal(r, &entries); err != nil {
			return workflowInput{}, apierr.BadRequest("resume", `resume must be an array of {"interruptId","status","payload"} objects: `+jsonProblem(err))
		}
		switch len(entries) {
		case 0:
		case 1:
			e := entries[0]
			if e.InterruptID == "" {
				return workflowInput{}, apierr.BadRequest("resume[0].interruptId", "resume[0].interruptId is required: the id of the interrupt the previous run finished with")
			}
			if e.Status != resumeResolved && e.Status != resumeCancelled {
				return workflowInput{}, apierr.BadRequest("resume[0].status", fmt.Sprintf("resume[0].status %q must be %q (payload is the answer) or %q (the run is canceled)", e.Status, resumeResolved, resumeCancelled))
			}
			out.Resume = &e
		default:
			return workflowInput{}, apierr.BadRequest("resume", fmt.Sprintf("resume holds %d entries; a workflow run waits on one human node at a time: answer its one interrupt", len(entries)))
		}
	}
	var st workflowState
	if s := bytes.TrimSpace(in.State); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		if s[0] != '{' {
			return workflowInput{}, apierr.BadRequest("state", `state must be a JSON object; a workflow reads its "input" and "vars" keys`)
		}
		if err := json.Unmarshal(s, &st); err != nil {
			return workflowInput{}, apierr.BadRequest("state", "state: "+jsonProblem(err))
		}
	}
	if v := bytes.TrimSpace(st.Vars); len(v) > 0 && !bytes.Equal(v, []byte("null")) {
		if err := json.Unmarshal(v, &out.Vars); err != nil || v[0] != '{' {
			return workflowInput{}, apierr.BadRequest("state.vars", "state.vars must be an object; its keys become the workflow's {{vars.<key>}}")
		}
	}
	if out.Resume != nil {
		return out, nil
	}
	switch v := bytes.TrimSpace(st.Input); {
	case len(v) > 0 && !bytes.Equal(v, []byte("null")):
		if err := json.Unmarshal(v, &out.Input); err != nil {
			return workflowInput{}, apierr.BadRequest("state.input", "state.input: "+jsonProblem(err))
		}
	case haveUser && strings.TrimSpace(userText) != "":
		out.Input = userText
	default:
		return workflowInput{}, apierr.BadRequest("messages", `messages needs a user message with text, which is the workflow's {{input}} (or give state.input for structured input, or resume to answer an interrupt)`)
	}
	return out, nil
}

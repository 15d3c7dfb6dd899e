package nodes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/a2a"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// a2aAgent calls a remote agent over A2A.
func a2aAgent() workflow.Kind {
	return workflow.Kind{
		Type:               "a2a-agent",
		Title:              "A2A agent",
		Category:           workflow.CategoryAgents,
		Network:            true,
		SideEffects:        true, // the remote agent may act
		Example:            map[string]any{"url": "https://agent.example.com"},
		Doc:                "Sends a message to a remote agent over A2A and outputs its answer.",
		Execute:            execA2A,
		IsExecutable:       true,
		RequiresImperative: true,
		IsAgentLike:        true,
		Config: []workflow.ConfigKey{
			{Name: "url", Type: workflow.TypeTemplate, Required: true, Doc: "the agent's base URL (its card is at /.well-known/agent-card.json) or its card URL"},
			{Name: "message", Type: workflow.TypeTemplate, Default: "{{input}}", Doc: "message sent to the remote agent"},
			{Name: "timeout", Type: workflow.TypeDuration, Default: "5m", Doc: "time limit of the whole exchange, card included"},
			{Name: "streaming", Type: workflow.TypeBoolean, Default: false, Doc: "stream the answer (text deltas become events) when the agent can"},
			{Name: "protocol_version", Type: workflow.TypeString, Enum: []string{"auto", "1.0", "0.3"}, Default: "auto", Doc: "A2A version; auto reads it from the card and falls back from 1.0 to 0.3"},
			{Name: "token", Type: workflow.TypeTemplate, Doc: "bearer token the agent requires, such as {{vars.partner_key}}"},
		},
	}
}

// execA2A discovers the remote agent's card, sends the rendered message
// (streaming when asked and the card allows it) and outputs the agent's
// final text. The task id goes into an event's Data, as {"task_id": …},
// so that a run's events show which remote task answered. Requests go
// through Services.HTTP, the egress-guarded client.
func execA2A(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
	if x.Services.HTTP == nil {
		return workflow.Result{}, errors.New("no HTTP client is configured")
	}
	cfg := x.Node.Config
	rawURL, _ := cfg["url"].(string)
	url, err := x.Render(rawURL)
	if err != nil {
		return workflow.Result{}, fmt.Errorf("config.url: %w", err)
	}
	msgV, err := x.ConfigTemplate("message", "{{input}}")
	if err != nil {
		return workflow.Result{}, err
	}
	msg, err := textOf(msgV)
	if err != nil {
		return workflow.Result{}, fmt.Errorf("config.message: %w", err)
	}
	if strings.TrimSpace(msg) == "" {
		return workflow.Result{}, errors.New("config.message rendered empty: the remote agent needs some text; check the template or the node's input")
	}
	timeout := 5 * time.Minute
	if t, ok := cfg["timeout"].(string); ok {
		if timeout, err = time.ParseDuration(t); err != nil {
			return workflow.Result{}, fmt.Errorf("config.timeout: %w", err)
		}
	}
	opts := &a2a.ClientOptions{HTTPClient: x.Services.HTTP}
	if v, _ := cfg["protocol_version"].(string); v != "auto" {
		opts.Version = v
	}
	if t, ok := cfg["token"].(string); ok {
		if opts.Token, err = x.Render(t); err != nil {
			return workflow.Result{}, fmt.Errorf("config.token: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := a2a.NewClient(ctx, url, opts)
	if err != nil {
		return workflow.Result{}, err
	}
	streaming, _ := cfg["streaming"].(bool)
	req := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.NewTextPart(msg))}
	var text, taskID string
	if streaming && c.Card().Capabilities.Streaming {
		text, taskID, err = streamA2A(ctx, x, c, req)
	} else {
		var r a2a.Event
		r, err = c.SendMessage(ctx, req)
		if err == nil {
			text = a2a.ResponseText(r)
			if t, ok := r.(*a2a.Task); ok {
				taskID = string(t.ID)
				err = a2aTaskError(taskID, t.Status)
			}
		}
	}
	// task_id is empty when the agent answered with a message, no task.
	x.Emit(workflow.Event{Type: workflow.EventToolResult, Tool: &workflow.ToolEvent{CallID: taskID, Name: "a2a:" + c.Card().Name, Result: snippet(text), IsError: err != nil},
		Data: map[string]any{"task_id": taskID, "agent": c.Card().Name, "protocol_version": c.Version()}})
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return workflow.Result{}, fmt.Errorf("remote agent %s did not answer within %s (config.timeout): %w", url, timeout, err)
		}
		return workflow.Result{}, err
	}
	if !streaming {
		x.Emit(workflow.Event{Type: workflow.EventTextDelta, Text: text})
	}
	return workflow.Result{Output: text}, nil
}

// streamA2A streams the answer, emitting artifact text as deltas.
func streamA2A(ctx context.Context, x *workflow.Exec, c *a2a.Client, req *a2a.SendMessageRequest) (string, string, error) {
	var (
		text   strings.Builder
		taskID string
		status *a2a.TaskStatus
	)
	for ev, err := range c.SendStreamingMessage(ctx, req) {
		if err != nil {
			return text.String(), taskID, err
		}
		switch ev := ev.(type) {
		case *a2a.Task:
			taskID = string(ev.ID)
			if t := a2a.TaskText(ev); t != "" && text.Len() == 0 {
				text.WriteString(t)
				x.Emit(workflow.Event{Type: workflow.EventTextDelta, Text: t})
			}
			status = &ev.Status
		case *a2a.Message:
			t := a2a.Text(ev.Parts)
			text.WriteString(t)
			x.Emit(workflow.Event{Type: workflow.EventTextDelta, Text: t})
		case *a2a.TaskArtifactUpdateEvent:
			taskID = string(ev.TaskID)
			t := a2a.Text(ev.Artifact.Parts)
			if !ev.Append && text.Len() > 0 {
				// A replaced artifact starts over: keep the last version.
				text.Reset()
			}
			text.WriteString(t)
			if t != "" {
				x.Emit(workflow.Event{Type: workflow.EventTextDelta, Text: t})
			}
		case *a2a.TaskStatusUpdateEvent:
			taskID = string(ev.TaskID)
			status = &ev.Status
			if status.State == a2a.StateCompleted && text.Len() == 0 && status.Message != nil {
				text.WriteString(a2a.Text(status.Message.Parts))
			}
		}
	}
	if status != nil {
		return text.String(), taskID, a2aTaskError(taskID, *status)
	}
	return text.String(), taskID, nil
}

// a2aTaskError reports a remote task that did not complete.
func a2aTaskError(id string, st a2a.TaskStatus) error {
	switch st.State {
	case a2a.StateCompleted, a2a.StateWorking, a2a.StateSubmitted:
		return nil
	}
	msg := ""
	if st.Message != nil {
		msg = ": " + a2a.Text(st.Message.Parts)
	}
	return fmt.Errorf("remote task %s ended in state %s%s", id, st.State, msg)
}

package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
)

// executor is the SDK's AgentExecutor for the platform's agents: it runs
// the agent ServeHTTP resolved and turns its text deltas into artifact
// chunks of one "answer" artifact.
type executor struct{ s *Server }

var errStopped = errors.New("the A2A server is stopping")

// runs tracks the running agents so that Stop can end them.
type runs struct {
	mu      sync.Mutex // guards cancels and stopped
	cancels map[*context.CancelCauseFunc]struct{}
	stopped bool
	wg      sync.WaitGroup
}

// start registers a run; false once the server stops.
func (r *runs) start(cancel *context.CancelCauseFunc) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return false
	}
	r.cancels[cancel] = struct{}{}
	r.wg.Add(1)
	return true
}

func (r *runs) done(cancel *context.CancelCauseFunc) {
	r.mu.Lock()
	delete(r.cancels, cancel)
	r.mu.Unlock()
	r.wg.Done()
}

func (r *runs) stop() {
	r.mu.Lock()
	r.stopped = true
	for c := range r.cancels {
		(*c)(errStopped)
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// Execute implements a2asrv.AgentExecutor. Errors before the first event
// (a message it cannot read) become JSON-RPC errors; a failing agent
// fails the task.
func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		c := callFrom(ctx)
		if c == nil {
			yield(nil, errors.New("a2a: no agent in the execution's context"))
			return
		}
		ag := c.agent
		if ag == nil {
			// A message the request's probe did not see (ServeHTTP
			// resolves the agent of every message it recognises, to
			// answer a refusal with its status): resolve it now, so that
			// nothing runs without Agents.Get's say.
			var err error
			if ag, _, err = e.s.opts.Agents.Get(ctx, c.name); err != nil {
				yield(nil, refusal(c.name, err))
				return
			}
		}
		if ec.StoredTask != nil {
			yield(nil, a2a.NewError(a2a.ErrUnsupportedOperation, fmt.Sprintf("continuing task %q is not supported: each message starts a new task; keep contextId to stay in one conversation", ec.TaskID)))
			return
		}
		text, err := prompt(ec.Message)
		if err != nil {
			yield(nil, err)
			return
		}
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}

		// ctx is the task's, detached from the request by the SDK and
		// canceled by it when CancelTask ends the task.
		runCtx, stop := context.WithCancelCause(ctx)
		runCtx, cancelTimeout := context.WithTimeout(runCtx, e.s.opts.TaskTimeout)
		defer cancelTimeout()
		if !e.s.runs.start(&stop) {
			stop(errStopped)
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentMessage(ec, errStopped.Error())), nil)
			return
		}
		defer e.s.runs.done(&stop)
		defer stop(nil)

		streaming := false
		if cc, ok := a2asrv.CallContextFrom(ctx); ok {
			streaming = cc.Method() == "SendStreamingMessage"
		}
		artifactID := a2a.NewArtifactID()
		var answer strings.Builder
		var runErr error
		for ev, err := range ag.Run(runCtx, agent.Input{Messages: []llm.Message{llm.Text(llm.RoleUser, text)}, Buffered: !streaming}) {
			if err != nil {
				runErr = err
				break
			}
			if ev.Type != agent.EventTextDelta || ev.Text == "" {
				continue
			}
			chunk := a2a.NewArtifactUpdateEvent(ec, artifactID, a2a.NewTextPart(ev.Text))
			chunk.Artifact.Name = "answer"
			chunk.Append = answer.Len() > 0
			answer.WriteString(ev.Text)
			if !yield(chunk, nil) {
				return
			}
		}
		if ctx.Err() != nil {
			return // CancelTask (or the SDK) ended the task
		}
		if runErr != nil {
			msg := runErr.Error()
			switch {
			case errors.Is(context.Cause(runCtx), errStopped):
				msg = errStopped.Error()
			case errors.Is(runCtx.Err(), context.DeadlineExceeded):
				msg = fmt.Sprintf("the agent did not finish within %s", e.s.opts.TaskTimeout)
			}
			e.s.logger.Warn("a2a_task_failed", "task_id", string(ec.TaskID), "agent", c.info.Name, "error", runErr)
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentMessage(ec, msg)), nil)
			return
		}
		// The reply goes into the task's history: the SDK moves a status
		// message there when the next status replaces it.
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, agentMessage(ec, answer.String())), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

// Cancel implements a2asrv.AgentExecutor: the SDK applies the canceled
// state and ends the running Execute by canceling its context.
func (e *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// endedCancel refuses CancelTask for a task that has ended. The SDK
// answers a second CancelTask with the canceled task; the protocol (and
// this server before the SDK) answers TaskNotCancelable for every ended
// task, so that a caller learns its cancel came too late.
type endedCancel struct {
	a2asrv.PassthroughCallInterceptor
	store *taskStore
}

func (i endedCancel) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	r, ok := req.Payload.(*a2a.CancelTaskRequest)
	if !ok || r == nil {
		return ctx, nil, nil
	}
	t, err := i.store.Get(ctx, r.ID)
	if err != nil {
		return ctx, nil, err
	}
	if st := t.Task.Status.State; st.Terminal() {
		return ctx, nil, a2a.NewError(a2a.ErrTaskNotCancelable, fmt.Sprintf("task %q has already ended (%s)", r.ID, st))
	}
	return ctx, nil, nil
}

// refusal is the JSON-RPC error of an agent that Agents.Get would not give
// the executor.
func refusal(name string, err error) error {
	var refused *RefusalError
	switch {
	case errors.Is(err, ErrUnknownAgent):
		return a2a.NewError(a2a.ErrInvalidRequest, fmt.Sprintf("no agent named %q", name))
	case errors.As(err, &refused):
		return a2a.NewError(a2a.ErrInvalidRequest, refused.Message)
	}
	return fmt.Errorf("a2a: resolve agent %q: %w", name, err)
}

func agentMessage(ec *a2asrv.ExecutorContext, text string) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
}

// prompt turns the parts of a message into the user's text; file parts
// are refused because agents here read text.
func prompt(m *a2a.Message) (string, error) {
	if m == nil {
		return "", a2a.NewError(a2a.ErrInvalidParams, "params must hold a message")
	}
	var b strings.Builder
	for i, p := range m.Parts {
		switch c := p.Content.(type) {
		case a2a.Text:
			b.WriteString(string(c))
		case a2a.Data:
			d, _ := json.Marshal(c.Value)
			b.Write(d)
		default:
			return "", a2a.NewError(a2a.ErrUnsupportedContentType, fmt.Sprintf("message.parts[%d] is a file; this agent reads text and data parts only", i))
		}
		if i < len(m.Parts)-1 {
			b.WriteString("\n")
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", a2a.NewError(a2a.ErrInvalidParams, "message has no text: send at least one non-empty text part")
	}
	return b.String(), nil
}

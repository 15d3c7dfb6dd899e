package run

import (
	"context"
	"errors"
	"iter"
	"strings"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
)

// ErrNoConversations refuses a caller naming a conversation on a Runner
// built without Options.Conversations.
var ErrNoConversations = errors.New("run: conversations are not available on this server (run.Options.Conversations is not set)")

// InConversation returns the agent bound again for the same caller in
// conversation id (Caller.ConversationID, ClientHistory), keeping the
// definition already resolved: its memory tools follow the conversation.
func (a *Agent) InConversation(id string, clientHistory bool) *Agent {
	c := a.caller
	c.ConversationID, c.ClientHistory = id, clientHistory
	return a.r.bind(c, a.Def)
}

// inConversation is Run in the caller's conversation: the stored history
// goes before the input, and the input's new messages and the answer are
// stored before the finish event reaches the caller, so a client that
// reads the conversation after its answer finds the turn there.
func (a *Agent) inConversation(ctx context.Context, in agent.Input) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		conv := a.r.conv
		if conv == nil {
			a.Refused(ErrNoConversations)
			yield(agent.Event{}, ErrNoConversations)
			return
		}
		c := a.caller
		h := History{ClientHistory: c.ClientHistory, Summarizer: summarizer{a}, ModelID: a.Def.ModelID}
		if m := a.Def.Row.Params.Memory; m != nil {
			h.BudgetTokens = m.HistoryTokens
		}
		send, fresh, err := conv.Begin(ctx, c.Principal, c.ConversationID, in.Messages, h)
		if err != nil {
			a.Refused(err)
			yield(agent.Event{}, err)
			return
		}
		in.Messages = send
		for ev, err := range a.Runtime.Run(ctx, in) {
			if err == nil && ev.Type == agent.EventFinish {
				msgs := fresh
				if n := len(ev.Messages); n > 0 {
					// The answer; the server tool steps before it stay
					// out of the thread.
					msgs = append(msgs[:len(msgs):len(msgs)], ev.Messages[n-1])
				}
				// The answer is given: the client leaving now must not
				// lose the turn.
				if err := conv.Finish(context.WithoutCancel(ctx), c.Principal, c.ConversationID, msgs); err != nil {
					if !yield(agent.Event{Type: agent.EventWarning, Step: ev.Step, Text: "the conversation was not saved: " + err.Error()}, nil) {
						return
					}
				}
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// summarizer is the agent's bare model as an llm.Model whose every call
// is one metered, recorded run (Direct), so compacting a conversation
// shows in usage like any other call of the agent.
type summarizer struct{ a *Agent }

func (s summarizer) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	var (
		text strings.Builder
		resp = llm.Response{FinishReason: llm.FinishStop}
	)
	for ev, err := range s.a.Direct(ctx, req, true) {
		if err != nil {
			return llm.Response{}, err
		}
		switch ev.Type {
		case agent.EventTextDelta:
			text.WriteString(ev.Text)
		case agent.EventFinish:
			resp.FinishReason = ev.FinishReason
			if ev.Usage != nil {
				resp.Usage = *ev.Usage
			}
		}
	}
	resp.Message = llm.Text(llm.RoleAssistant, text.String())
	return resp, nil
}

func (s summarizer) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		resp, err := s.Generate(ctx, req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for ev, err := range llm.Events(resp) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

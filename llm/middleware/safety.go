package middleware

import (
	"context"
	"iter"
	"log/slog"
	"maps"
	"slices"

	"github.com/agentcraftlab/agentcraft/guard"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/pii"
)

// GuardOptions configure Guard.
type GuardOptions struct {
	// Policy decides; required.
	Policy guard.Policy
	// ScanOutput also checks the model's answer; in streams, text is held
	// back until scanned, so a blocked phrase never reaches the client.
	ScanOutput bool
	// Logger receives the audit lines ([GUARD] ...), which name the rule
	// and the match's length, never the matched text. Default: discard.
	Logger *slog.Logger
	// Audit, when set, receives one event per match next to the audit
	// line: action "guard.block", "guard.warn" or "guard.log", details
	// {direction, rule, kind, match_len}.
	Audit AuditFunc
}

// AuditFunc receives the audit events of Guard and PII: a dotted action and
// details without personal data. It must not block for long; the caller
// (package audit) queues the event.
type AuditFunc func(ctx context.Context, action string, details map[string]any)

// Guard refuses requests the policy blocks, before the model is called: the
// answer is the policy's refusal, finish reason stop. With ScanOutput, an
// answer the policy blocks is replaced by the refusal. Warn and log
// decisions pass and are logged.
func Guard(opts GuardOptions) llm.Middleware {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return func(next llm.Model) llm.Model { return &guarded{next: next, o: opts} }
}

type guarded struct {
	next llm.Model
	o    GuardOptions
}

func (g *guarded) audit(ctx context.Context, dir guard.Direction, d guard.Decision) {
	for _, m := range d.Matches {
		// The matched text is the user's (or the model's) own: a rule may
		// match a key, a password or personal data, which redaction
		// patterns do not all know. Only the rule and the length leave.
		g.o.Logger.LogAttrs(ctx, slog.LevelWarn, guard.AuditLine(dir, m))
		if g.o.Audit != nil {
			g.o.Audit(ctx, "guard."+m.Action.String(), map[string]any{
				"direction": dir.String(), "rule": m.Rule, "kind": string(m.Kind), "match_len": m.Len(),
			})
		}
	}
}

func (g *guarded) checkInput(ctx context.Context, req llm.Request) guard.Decision {
	in := guard.Input{Direction: guard.DirectionInput}
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			in.Messages = append(in.Messages, guard.Message{Role: guard.RoleUser, Text: m.Text()})
		}
	}
	d := g.o.Policy.Check(ctx, in)
	g.audit(ctx, guard.DirectionInput, d)
	return d
}

func refusal(text string) llm.Response {
	return llm.Response{Message: llm.Text(llm.RoleAssistant, text), FinishReason: llm.FinishStop}
}

func (g *guarded) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if d := g.checkInput(ctx, req); d.Action == guard.Block {
		return refusal(d.Message), nil
	}
	resp, err := g.next.Generate(ctx, req)
	if err != nil || !g.o.ScanOutput {
		return resp, err
	}
	d := g.o.Policy.Check(ctx, guard.Input{Direction: guard.DirectionOutput,
		Messages: []guard.Message{{Role: guard.RoleAssistant, Text: resp.Message.Text()}}})
	g.audit(ctx, guard.DirectionOutput, d)
	if d.Action == guard.Block {
		out := refusal(d.Message)
		out.ID, out.Model, out.Usage = resp.ID, resp.Model, resp.Usage
		return out, nil
	}
	return resp, nil
}

func (g *guarded) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if d := g.checkInput(ctx, req); d.Action == guard.Block {
			if yield(llm.Event{Type: llm.EventTextDelta, Text: d.Message}, nil) {
				yield(llm.Event{Type: llm.EventFinish, FinishReason: llm.FinishStop, Usage: &llm.Usage{}}, nil)
			}
			return
		}
		if !g.o.ScanOutput {
			for ev, err := range g.next.Stream(ctx, req) {
				if !yield(ev, err) {
					return
				}
			}
			return
		}
		sc := guard.NewStreamScanner(g.o.Policy, 0)
		blockedOut := func(text string) {
			g.audit(ctx, guard.DirectionOutput, sc.Decision())
			if yield(llm.Event{Type: llm.EventTextDelta, Text: text}, nil) {
				yield(llm.Event{Type: llm.EventFinish, FinishReason: llm.FinishStop, Usage: &llm.Usage{}}, nil)
			}
		}
		for ev, err := range g.next.Stream(ctx, req) {
			if err != nil {
				yield(ev, err)
				return
			}
			switch ev.Type {
			case llm.EventTextDelta:
				safe, blocked := sc.Next(ctx, ev.Text)
				if blocked {
					blockedOut(safe) // leaving the loop cancels the upstream stream
					return
				}
				if safe == "" {
					continue
				}
				ev.Text = safe
			case llm.EventFinish:
				rest, blocked := sc.Close(ctx)
				if blocked {
					blockedOut(rest)
					return
				}
				g.audit(ctx, guard.DirectionOutput, sc.Decision())
				if rest != "" && !yield(llm.Event{Type: llm.EventTextDelta, Text: rest}, nil) {
					return
				}
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// PIIOptions configure PII.
type PIIOptions struct {
	// Detector finds personal data; required.
	Detector pii.Detector
	// Mode is pii.Reversible (typed tokens, restored in the answer; the
	// default) or pii.Irreversible (***).
	Mode pii.Mode
	// Logger receives the audit lines ([PII] ... counts, never values).
	Logger *slog.Logger
	// Audit, when set, receives an event "pii.detected" next to each
	// audit line, details {direction, entities: {"Global.Email": 1},
	// count}.
	Audit AuditFunc
}

// PII masks personal data in every message before the model sees it and,
// in reversible mode, restores it in the answer, also when a token is
// split across stream chunks. Each request gets its own vault; since a
// request carries the whole conversation, a value has one token across
// it. Later layers (rate limit, retry, logging, the provider) only ever
// see tokens.
func PII(opts PIIOptions) llm.Middleware {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return func(next llm.Model) llm.Model { return &masked{next: next, o: opts} }
}

type masked struct {
	next llm.Model
	o    PIIOptions
}

// mask returns a copy of req with personal data replaced, and the masker
// holding the tokens.
func (m *masked) mask(ctx context.Context, req llm.Request) (llm.Request, *pii.Masker, error) {
	mk, err := pii.NewMasker(m.o.Detector, &pii.MaskerOptions{Mode: m.o.Mode})
	if err != nil {
		return req, nil, err
	}
	var found []pii.Entity
	msgs := make([]llm.Message, len(req.Messages))
	for i, msg := range req.Messages {
		if len(msg.Content) > 0 {
			parts := make([]llm.Part, len(msg.Content))
			copy(parts, msg.Content)
			for j := range parts {
				if parts[j].Type == llm.PartText {
					var ents []pii.Entity
					parts[j].Text, ents = mk.Mask(parts[j].Text)
					found = append(found, ents...)
				}
			}
			msg.Content = parts
		}
		if len(msg.ToolCalls) > 0 {
			calls := make([]llm.ToolCall, len(msg.ToolCalls))
			copy(calls, msg.ToolCalls)
			for j := range calls {
				var ents []pii.Entity
				calls[j].Arguments, ents = mk.Mask(calls[j].Arguments)
				found = append(found, ents...)
			}
			msg.ToolCalls = calls
		}
		msgs[i] = msg
	}
	if len(found) > 0 {
		m.o.Logger.LogAttrs(ctx, slog.LevelInfo, pii.AuditLine("input", found))
		m.auditEvent(ctx, "input", found)
	}
	req.Messages = msgs
	return req, mk, nil
}

// auditEvent reports the entities found: rule names and counts, never a
// value or an offset.
func (m *masked) auditEvent(ctx context.Context, direction string, ents []pii.Entity) {
	if m.o.Audit == nil {
		return
	}
	counts := map[string]int{}
	for _, e := range ents {
		counts[e.Rule]++
	}
	m.o.Audit(ctx, "pii.detected", map[string]any{"direction": direction, "entities": counts, "count": len(ents)})
}

func (m *masked) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	req, mk, err := m.mask(ctx, req)
	if err != nil {
		return llm.Response{}, err
	}
	resp, err := m.next.Generate(ctx, req)
	if err != nil {
		return resp, err
	}
	text := resp.Message.Text()
	if ents := m.o.Detector.Scan(text); len(ents) > 0 {
		m.o.Logger.LogAttrs(ctx, slog.LevelInfo, pii.AuditLine("output", ents))
		m.auditEvent(ctx, "output", ents)
	}
	if m.o.Mode == pii.Reversible {
		parts := make([]llm.Part, len(resp.Message.Content))
		copy(parts, resp.Message.Content)
		for i := range parts {
			if parts[i].Type == llm.PartText {
				parts[i].Text = mk.Restore(parts[i].Text)
			}
		}
		resp.Message.Content = parts
		calls := make([]llm.ToolCall, len(resp.Message.ToolCalls))
		copy(calls, resp.Message.ToolCalls)
		for i := range calls {
			calls[i].Arguments = mk.Restore(calls[i].Arguments)
		}
		if len(calls) > 0 {
			resp.Message.ToolCalls = calls
		}
	}
	return resp, nil
}

func (m *masked) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		req, mk, err := m.mask(ctx, req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		if m.o.Mode != pii.Reversible {
			for ev, err := range m.next.Stream(ctx, req) {
				if !yield(ev, err) {
					return
				}
			}
			return
		}
		r := pii.NewStreamRestorer(mk.Vault())
		// Tool-call arguments arrive in fragments a token may straddle,
		// like text: one restorer per call index holds a partial token
		// back until it is complete, so tools get the original values.
		var calls map[int]*pii.StreamRestorer
		for ev, err := range m.next.Stream(ctx, req) {
			if err != nil {
				yield(ev, err)
				return
			}
			switch ev.Type {
			case llm.EventTextDelta:
				ev.Text = r.Write(ev.Text)
				if ev.Text == "" {
					continue
				}
			case llm.EventToolCallDelta:
				if ev.ToolCall == nil {
					break
				}
				cr := calls[ev.ToolCall.Index]
				if cr == nil {
					if calls == nil {
						calls = make(map[int]*pii.StreamRestorer)
					}
					cr = pii.NewStreamRestorer(mk.Vault())
					calls[ev.ToolCall.Index] = cr
				}
				d := *ev.ToolCall
				d.ArgumentsDelta = cr.Write(d.ArgumentsDelta)
				if d.ArgumentsDelta == "" && d.ID == "" && d.Name == "" {
					continue
				}
				ev.ToolCall = &d
			case llm.EventFinish:
				for _, i := range slices.Sorted(maps.Keys(calls)) {
					if rest := calls[i].Flush(); rest != "" &&
						!yield(llm.Event{Type: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: i, ArgumentsDelta: rest}}, nil) {
						return
					}
				}
				if rest := r.Flush(); rest != "" && !yield(llm.Event{Type: llm.EventTextDelta, Text: rest}, nil) {
					return
				}
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// refuseAll is the layer standing in for guard or PII settings that do not
// build: every call fails with the reason, so nothing leaves unprotected.
func refuseAll(err error) llm.Middleware {
	e := &llm.Error{Kind: llm.KindPolicy, Message: "safety settings are invalid: " + err.Error()}
	return func(llm.Model) llm.Model { return refusing{e} }
}

type refusing struct{ err error }

func (r refusing) Generate(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{}, r.err
}

func (r refusing) Stream(context.Context, llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, r.err) }
}

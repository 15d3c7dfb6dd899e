package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/tool"
)

// outcome is one finished server tool call.
type outcome struct {
	tool.Result
	duration time.Duration
}

// runTools runs calls concurrently, each with ctx, yielding ToolStarted
// for every call in order, then ToolFinished as each completes. It
// returns the results in call order, or false when the consumer stopped
// reading; running tools are then cancelled and waited for.
func (r *run) runTools(ctx context.Context, step int, calls []llm.ToolCall, yield func(Event, error) bool) ([]outcome, bool) {
	for _, c := range calls {
		if !yield(Event{Type: EventToolStarted, Step: step, Tool: &ToolActivity{CallID: c.ID, Name: c.Name, Arguments: c.Arguments}}, nil) {
			return nil, false
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]outcome, len(calls))
	done := make(chan int, len(calls)) // buffered: workers never block on a consumer that left
	var g errgroup.Group
	for i, c := range calls {
		g.Go(func() error {
			results[i] = r.callTool(ctx, c)
			done <- i
			return nil // a failed tool is a result, not a reason to stop the others
		})
	}
	for range calls {
		i := <-done
		c, res := calls[i], results[i]
		ev := Event{Type: EventToolFinished, Step: step, Tool: &ToolActivity{
			CallID: c.ID, Name: c.Name, Result: truncate(res.Content, ProgressLen), Content: res.Content, IsError: res.IsError, Duration: res.duration,
		}}
		if !yield(ev, nil) {
			cancel()
			g.Wait()
			return nil, false
		}
	}
	g.Wait()
	return results, true
}

// callTool runs one call, turning every failure into an error result the
// model can read: unknown tool, malformed arguments, a Go error from the
// tool, a panic, a timeout. The result is cut to the run's byte limit.
func (r *run) callTool(ctx context.Context, c llm.ToolCall) (out outcome) {
	start := time.Now()
	how := ToolOK // how the call ended, for Agent.ToolCalls
	ctx, endSpan := traceTool(ctx, r.a.Name, c)
	defer func() { endSpan(&out) }() // deferred first, so it sees the result as cut below
	defer func() {
		if p := recover(); p != nil {
			r.logger.LogAttrs(ctx, slog.LevelError, "agent tool panicked",
				slog.String("agent", r.a.Name), slog.String("tool", c.Name),
				slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			out.Result = tool.ErrorResult("tool %s failed with an internal error", c.Name)
			how = ToolPanic
		}
		out.Content = r.cut(out.Content)
		out.duration = time.Since(start)
		r.toolCalled(c.Name, how, out)
	}()
	t := r.tools[c.Name]
	if t == nil {
		how = ToolUnknown
		return outcome{Result: r.unknownTool(c.Name)}
	}
	args, bad, ok := tool.CheckArguments(t.Schema(), json.RawMessage(c.Arguments))
	if !ok {
		how = ToolInvalidArguments
		return outcome{Result: tool.ErrorResult("invalid arguments for %s: %s", c.Name, strings.TrimPrefix(bad.Content, "invalid arguments: "))}
	}
	if g := r.a.Gate; g != nil {
		if err := g.Allow(ctx, t, c); err != nil {
			r.logger.LogAttrs(ctx, slog.LevelInfo, "agent tool call refused",
				slog.String("agent", r.a.Name), slog.String("tool", c.Name), slog.String("reason", err.Error()))
			how = ToolRefused
			return outcome{Result: tool.ErrorResult("tool %s was not allowed to run: %v", c.Name, err)}
		}
	}
	callCtx := ctx
	timeout := r.timeout(c.Name)
	if timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := t.Call(callCtx, args)
	if timeout > 0 && (err != nil || res.IsError) && ctx.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) {
		// Whatever the tool said about its cancelled context, the cause
		// the model can act on is the time limit. A tool that finished in
		// time keeps its result.
		r.logger.LogAttrs(ctx, slog.LevelWarn, "agent tool timed out",
			slog.String("agent", r.a.Name), slog.String("tool", c.Name), slog.Duration("timeout", timeout))
		how = ToolTimeout
		return outcome{Result: tool.ErrorResult("tool %s timed out after %v: ask for less work in one call, or answer without it", c.Name, timeout)}
	}
	if err != nil {
		r.logger.LogAttrs(ctx, slog.LevelWarn, "agent tool failed",
			slog.String("agent", r.a.Name), slog.String("tool", c.Name), slog.String("error", err.Error()))
		how = ToolError
		return outcome{Result: tool.ErrorResult("tool %s failed: %v", c.Name, err)}
	}
	if res.IsError {
		how = ToolError
	}
	return outcome{Result: res}
}

// timeout returns the time limit of a call of the named tool; 0 means none.
func (r *run) timeout(name string) time.Duration {
	d := r.a.ToolTimeouts[name]
	if d == 0 {
		d = r.a.ToolTimeout
	}
	switch {
	case d == 0:
		return DefaultToolTimeout
	case d < 0:
		return 0
	}
	return d
}

// cut shortens a result longer than the run's limit at a character
// boundary and says so, with the sizes, so that the model knows it read
// part of the result and can ask for less.
func (r *run) cut(s string) string {
	if r.maxBytes <= 0 || len(s) <= r.maxBytes {
		return s
	}
	n := r.maxBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s\n[truncated: %d of %d bytes; ask for less]", s[:n], n, len(s))
}

func (r *run) unknownTool(name string) tool.Result {
	if len(r.a.Tools) == 0 {
		return tool.ErrorResult("unknown tool %q; no tools are available, answer without them", name)
	}
	names := make([]string, len(r.a.Tools))
	for i, t := range r.a.Tools {
		names[i] = t.Name()
	}
	return tool.ErrorResult("unknown tool %q; available: %s", name, strings.Join(names, ", "))
}

// truncate cuts s to at most n characters, the last being "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n-1 {
			return s[:i] + "…"
		}
		count++
	}
	return s
}

// ToolRunner runs server tool calls one at a time exactly as Run does —
// the Gate, argument checks and repairs, the per-tool timeout, panics
// turned into error results, results cut to MaxToolResultBytes — for an
// executor that drives its own loop (package autonomous).
type ToolRunner struct{ r *run }

// ToolRunner returns the tool runner of a, or the configuration error Run
// would report.
func (a *Agent) ToolRunner() (*ToolRunner, error) {
	r, err := a.start(Input{})
	if err != nil {
		return nil, err
	}
	return &ToolRunner{r: r}, nil
}

// Call runs one call of the agent's tools; whatever goes wrong is an error
// result, as in Run.
func (t *ToolRunner) Call(ctx context.Context, c llm.ToolCall) tool.Result {
	return t.r.callTool(ctx, c).Result
}

// Tool returns the agent's tool called name, or nil.
func (t *ToolRunner) Tool(name string) tool.Tool { return t.r.tools[name] }

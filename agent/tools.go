package agent

import (
	"context"
	"encoding/json"
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
			CallID: c.ID, Name: c.Name, Result: truncate(res.Content, ProgressLen), IsError: res.IsError, Duration: res.duration,
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
// model can read: unknown tool, arguments that are not a JSON object, a Go
// error from the tool, a panic.
func (r *run) callTool(ctx context.Context, c llm.ToolCall) (out outcome) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			r.logger.LogAttrs(ctx, slog.LevelError, "agent tool panicked",
				slog.String("agent", r.a.Name), slog.String("tool", c.Name),
				slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			out.Result = tool.ErrorResult("tool %s failed with an internal error", c.Name)
		}
		out.duration = time.Since(start)
	}()
	t := r.tools[c.Name]
	if t == nil {
		return outcome{Result: r.unknownTool(c.Name)}
	}
	args := strings.TrimSpace(c.Arguments)
	if args == "" {
		args = "{}" // some servers send nothing for a call without arguments
	}
	if err := checkArgs(args); err != nil {
		return outcome{Result: tool.ErrorResult("invalid arguments for %s: %v; send a JSON object that matches the tool's schema", c.Name, err)}
	}
	res, err := t.Call(ctx, json.RawMessage(args))
	if err != nil {
		r.logger.LogAttrs(ctx, slog.LevelWarn, "agent tool failed",
			slog.String("agent", r.a.Name), slog.String("tool", c.Name), slog.String("error", err.Error()))
		return outcome{Result: tool.ErrorResult("tool %s failed: %v", c.Name, err)}
	}
	return outcome{Result: res}
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

// checkArgs accepts a JSON object.
func checkArgs(args string) error {
	if !json.Valid([]byte(args)) {
		var v any
		err := json.Unmarshal([]byte(args), &v)
		return fmt.Errorf("not valid JSON (%v)", err)
	}
	if args[0] != '{' {
		return fmt.Errorf("not a JSON object")
	}
	return nil
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

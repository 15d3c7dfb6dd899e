package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/config"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/contract"
)

func runCmd(e *env) *cobra.Command {
	var input string
	var vars []string
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a workflow file once, in this process, and print its output",
		Long: `Run executes a workflow definition (JSON or YAML) in this process with
the configuration's providers and agents and the configured database (for
the workspace's named agents and stored credentials). Progress goes to
stderr, the final output to stdout: a string as is, anything else as
indented JSON.

The run is not durable: nothing is checkpointed, and a workflow that
pauses on a human node cannot be answered here; run it through the
server's API (agentcraft serve, POST /api/workflows/{id}/runs) instead.
Ctrl-C cancels the run.

Exit code 0 when the run succeeds; 1 when the file is invalid or the run
ends failed, failed_contract, blocked, canceled or waiting.`,
		Example: `  agentcraft run triage.yaml --input 'My invoice is wrong'
  agentcraft run pipeline.json --input '{"topic": "solar"}' --var tone=formal`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			vs, err := parseVars(vars)
			if err != nil {
				return err
			}
			def, err := readDefinition(args[0])
			if err != nil {
				return err
			}
			cfg, err := e.load()
			if err != nil {
				return err
			}
			return runWorkflow(cmd.Context(), cfg, def, parseInput(input), vs, e.stdout, e.stderr)
		},
	}
	cmd.Flags().StringVar(&input, "input", "", "the run's input: JSON if it parses as JSON, else text")
	cmd.Flags().StringArrayVar(&vars, "var", nil, "a variable {{vars.NAME}} as NAME=VALUE (repeatable; the value is text)")
	return cmd
}

// parseInput returns the JSON value s holds, or s itself when it is not
// JSON, so that --input 'hello' and --input '{"a": 1}' both do what they
// say. An empty input is the empty string.
func parseInput(s string) any {
	var v any
	if strings.TrimSpace(s) != "" && json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return s
}

func parseVars(kvs []string) (map[string]any, error) {
	vars := map[string]any{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--var %q: want NAME=VALUE, such as --var tone=formal", kv)
		}
		vars[k] = v
	}
	return vars, nil
}

// runWorkflow builds the platform and engine of cfg, as serve does, runs
// def once without checkpoints and reports the outcome.
func runWorkflow(ctx context.Context, cfg config.Config, def *workflow.Definition, input any, vars map[string]any, stdout, stderr io.Writer) error {
	// Progress shares stderr with the log, so the default info level
	// (database opened, migrations) would drown it; warnings still show.
	lc := cfg.Log
	if lc.Level == "" || strings.EqualFold(lc.Level, "info") {
		lc.Level = "warn"
	}
	logger := newLogger(stderr, lc)
	platformLog := logger
	if !hasAgents(def) {
		// The platform warns when no model is reachable, which is noise
		// for a workflow that never calls one.
		lc.Level = "error"
		platformLog = newLogger(stderr, lc)
	}
	stk, err := openPlatform(ctx, cfg, logger, platformLog)
	if err != nil {
		return err
	}
	defer stk.close()
	p := stk.p
	eng, err := newEngine(cfg, stk, logger)
	if err != nil {
		return err
	}
	plan, err := eng.Prepare(def)
	if err != nil {
		if probs, ok := invalidProblems(err); ok {
			printProblems(stderr, probs)
			return fmt.Errorf("workflow %q is invalid: %d %s; see agentcraft lint", def.Name, len(probs), plural(len(probs), "problem", "problems"))
		}
		return err
	}
	pr := &progress{w: stderr}
	out := eng.Run(ctx, plan, workflow.Request{
		RunID:       "cli",
		WorkspaceID: p.DefaultWorkspace().ID,
		Input:       input,
		Vars:        vars,
		Emit:        pr.event,
	})
	pr.endLine()
	return report(out, stdout)
}

// hasAgents reports whether def has a node of an agent-like built-in kind.
func hasAgents(def *workflow.Definition) bool {
	reg, err := builtinRegistry()
	if err != nil {
		return true
	}
	for _, n := range def.Nodes {
		if k, ok := reg.Lookup(n.Type); !ok || k.IsAgentLike {
			return true
		}
	}
	return false
}

// report prints a succeeded run's output and turns every other status into
// the command's error.
func report(out workflow.Outcome, stdout io.Writer) error {
	switch out.Status {
	case workflow.StatusSucceeded:
		return printOutput(stdout, out.Output)
	case workflow.StatusWaiting:
		prompt := ""
		if out.Wait != nil && out.Wait.Prompt != "" {
			prompt = fmt.Sprintf(" (%q)", out.Wait.Prompt)
		}
		return fmt.Errorf("run is waiting for input at node %q%s, which agentcraft run cannot answer; "+
			"run the workflow through the server instead (agentcraft serve, POST /api/workflows/{id}/runs, then POST /api/runs/{id}/resume)", out.WaitingNode, prompt)
	case workflow.StatusCanceled:
		return errors.New("run canceled")
	}
	msg := out.Error
	if msg == "" {
		msg = "no error message"
	}
	return fmt.Errorf("run %s: %s", out.Status, msg)
}

func printOutput(w io.Writer, v any) error {
	if s, ok := v.(string); ok {
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
		if !strings.HasSuffix(s, "\n") {
			_, err := io.WriteString(w, "\n")
			return err
		}
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("print output: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// progress prints a run's events as they come. The engine emits from
// several goroutines when nodes run concurrently.
type progress struct {
	mu        sync.Mutex // guards the fields below and writes to w
	w         io.Writer
	streaming string // key of the node whose text is being printed, "" at a line start
}

// deltaIndent starts every line of an agent's streamed text.
const deltaIndent = "    "

func (p *progress) event(ev workflow.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Type == workflow.EventTextDelta {
		if p.streaming != ev.Key {
			p.newline()
			io.WriteString(p.w, deltaIndent)
			p.streaming = ev.Key
		}
		io.WriteString(p.w, strings.ReplaceAll(ev.Text, "\n", "\n"+deltaIndent))
		return
	}
	line := p.line(ev)
	if line == "" {
		return
	}
	p.newline()
	io.WriteString(p.w, line+"\n")
}

// line is the progress line of ev, "" for events not shown.
func (p *progress) line(ev workflow.Event) string {
	switch ev.Type {
	case workflow.EventNodeStarted:
		return fmt.Sprintf("▶ %s (%s)", ev.Key, ev.NodeType)
	case workflow.EventNodeFinished:
		return fmt.Sprintf("✓ %s %s", ev.Key, duration(ev.DurationMS))
	case workflow.EventNodeFailed:
		return fmt.Sprintf("✗ %s: %s", ev.Key, ev.Error)
	case workflow.EventToolCall:
		if ev.Tool != nil {
			return fmt.Sprintf("%s→ tool %s %s", deltaIndent, ev.Tool.Name, ev.Tool.Arguments)
		}
	case workflow.EventWaiting:
		prompt := ""
		if w, ok := ev.Data.(*workflow.Wait); ok && w != nil {
			prompt = w.Prompt
		}
		return fmt.Sprintf("⏸ waiting for input at %s: %s", ev.Key, prompt)
	case workflow.EventContract:
		return fmt.Sprintf("◆ %s contract %s%s", ev.Key, ev.Status, contractDetails(ev.Data))
	case workflow.EventRunBlocked:
		return "✗ input blocked: " + ev.Error
	case workflow.EventHook:
		if ev.Error != "" {
			return "✗ hook: " + ev.Error
		}
	}
	return ""
}

// contractDetails summarizes what a contract or output check found.
func contractDetails(data any) string {
	var parts []string
	switch r := data.(type) {
	case contract.Result:
		c := r.Contract
		add := func(what string, l []string) {
			if len(l) > 0 {
				parts = append(parts, what+" "+strings.Join(l, ", "))
			}
		}
		add("missing required", c.MissingRequired)
		add("invalid types at", c.InvalidTypes)
		add("moved", c.MovedFields)
		add("coerced", c.CoercedFields)
		add("defaulted", c.DefaultedOptional)
	case contract.OutputResult:
		for _, pr := range r.Problems {
			parts = append(parts, pr.Field+": "+pr.Message)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// newline ends a line of streamed text, if one is open.
func (p *progress) newline() {
	if p.streaming != "" {
		io.WriteString(p.w, "\n")
		p.streaming = ""
	}
}

func (p *progress) endLine() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.newline()
}

func duration(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	if d >= time.Millisecond {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Microsecond).String()
}

package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/controlplane"
	"github.com/agentcraftlab/agentcraft/kb"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/search"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow"
)

// Tool names on /mcp.
const (
	toolDocsearch      = "docsearch"
	agentToolPrefix    = "agent_"
	workflowToolPrefix = "workflow_"
)

// docsearch top_k bounds.
const (
	docsearchDefaultTopK = 5
	docsearchMaxTopK     = 50
)

// mcpTools builds the MCP tools of a workspace: docsearch (with a
// knowledge service), one per agent, one per workflow (with a run
// service).
type mcpTools struct {
	p         *platform.Platform
	runner    *run.Runner
	runs      *controlplane.Service
	knowledge *kb.Service
	logger    *slog.Logger
	version   string
	cache     *mcp.SchemaCache
}

type docsearchInput struct {
	Query         string `json:"query" jsonschema:"what to search for, in words"`
	KnowledgeBase string `json:"knowledge_base,omitempty" jsonschema:"name or id of one knowledge base; default: all of the workspace's"`
	TopK          int    `json:"top_k,omitempty" jsonschema:"how many passages to return, 1 to 50; default 5"`
}

type agentInput struct {
	Message string `json:"message" jsonschema:"the message to the agent"`
}

type workflowInput struct {
	Input string            `json:"input" jsonschema:"the workflow's {{input}}"`
	Vars  map[string]string `json:"vars,omitempty" jsonschema:"values of the workflow's {{vars.NAME}}"`
}

// server returns an MCP server holding the workspace's tools that scopes
// may list. It is built per request, so new agents and workflows appear
// at once.
func (t *mcpTools) server(ctx context.Context, caller run.Principal, scopes scopeSet) (*mcp.Server, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentcraft", Title: "AgentCraft", Version: t.version},
		&mcp.ServerOptions{Logger: t.logger, SchemaCache: t.cache,
			Instructions: "AgentCraft's knowledge bases, agents and workflows. docsearch searches documents; agent_* ask an agent; workflow_* run a workflow and return its output."})
	defs, err := t.defs(ctx, caller, scopes)
	if err != nil {
		return nil, err
	}
	for _, d := range defs {
		d.add(srv)
	}
	return srv, nil
}

// toolDef is one tool, added to a server by add.
type toolDef struct {
	name string
	add  func(*mcp.Server)
}

// defs returns the workspace's tools that scopes may list.
func (t *mcpTools) defs(ctx context.Context, caller run.Principal, scopes scopeSet) ([]toolDef, error) {
	workspaceID := caller.WorkspaceID
	var defs []toolDef
	if t.knowledge != nil && (scopes.has(ScopeDocsearchRead) || scopes.has(ScopeDocsearchSearch)) {
		defs = append(defs, toolDef{toolDocsearch, func(srv *mcp.Server) {
			mcp.AddTool(srv, &mcp.Tool{Name: toolDocsearch, Title: "Search documents",
				Description: "Searches the workspace's knowledge bases and returns the best matching passages with their source.",
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
				func(ctx context.Context, _ *mcp.CallToolRequest, in docsearchInput) (*mcp.CallToolResult, any, error) {
					return t.docsearch(ctx, workspaceID, in)
				})
		}})
	}
	agents, err := t.p.Agents(ctx, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	for _, a := range agents {
		if !validToolPart(a.Name) || !scopes.agent(a.Name) {
			continue
		}
		name := a.Name
		desc := "Asks the agent " + name + " (model " + a.Model + ") and returns its answer."
		if instr := firstLine(a.Instructions); instr != "" {
			desc += " Its instructions begin: " + instr
		}
		defs = append(defs, toolDef{agentToolPrefix + name, func(srv *mcp.Server) {
			mcp.AddTool(srv, &mcp.Tool{Name: agentToolPrefix + name, Title: "Agent " + name, Description: desc},
				func(ctx context.Context, _ *mcp.CallToolRequest, in agentInput) (*mcp.CallToolResult, any, error) {
					return t.callAgent(ctx, caller, name, in)
				})
		}})
	}
	if t.runs == nil {
		return defs, nil
	}
	wfs, err := t.runs.Workflows(ctx, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("list workflows: %w", err)
	}
	for _, wf := range wfs {
		if !validToolPart(wf.Name) || !scopes.workflow(wf.Name) {
			continue
		}
		name := wf.Name
		desc := "Runs the workflow " + name + " with the given input and returns its final output."
		if wf.Description != "" {
			desc += " " + wf.Description
		}
		defs = append(defs, toolDef{workflowToolPrefix + name, func(srv *mcp.Server) {
			mcp.AddTool(srv, &mcp.Tool{Name: workflowToolPrefix + name, Title: "Workflow " + name, Description: desc},
				func(ctx context.Context, _ *mcp.CallToolRequest, in workflowInput) (*mcp.CallToolResult, any, error) {
					return t.runWorkflow(ctx, workspaceID, name, in)
				})
		}})
	}
	return defs, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// docsearch answers the docsearch tool. Failures are tool errors (the
// model reads them), not protocol errors.
func (t *mcpTools) docsearch(ctx context.Context, workspaceID string, in docsearchInput) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, nil, errors.New("query is empty: say what to search for")
	}
	if in.TopK < 0 || in.TopK > docsearchMaxTopK {
		return nil, nil, fmt.Errorf("top_k %d is out of range: use 1 to %d", in.TopK, docsearchMaxTopK)
	}
	if in.TopK == 0 {
		in.TopK = docsearchDefaultTopK
	}
	var kbs []string
	if in.KnowledgeBase != "" {
		kbs = []string{in.KnowledgeBase}
	} else {
		list, err := t.knowledge.List(ctx, workspaceID)
		if err != nil {
			return nil, nil, fmt.Errorf("list knowledge bases: %w", err)
		}
		for _, b := range list {
			kbs = append(kbs, b.ID)
		}
		if len(kbs) == 0 {
			return textResult("This workspace has no knowledge bases yet."), nil, nil
		}
	}
	res, err := t.knowledge.Search(ctx, workspaceID, kbs, search.Query{Text: in.Query, TopK: in.TopK})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, fmt.Errorf("knowledge base %q does not exist; leave knowledge_base out to search all", in.KnowledgeBase)
		}
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	type hit struct {
		KB     string  `json:"knowledge_base,omitempty"`
		Title  string  `json:"title,omitempty"`
		Source string  `json:"source,omitempty"`
		Score  float64 `json:"score"`
		Text   string  `json:"text"`
	}
	hits := make([]hit, 0, len(res.Hits))
	var b strings.Builder
	for i, h := range res.Hits {
		src := h.Metadata["source"]
		hits = append(hits, hit{KB: h.Metadata["kb"], Title: h.Title, Source: src, Score: h.Score, Text: h.Text})
		fmt.Fprintf(&b, "[%d] %s", i+1, h.Title)
		if src != "" && src != h.Title {
			fmt.Fprintf(&b, " (%s)", src)
		}
		fmt.Fprintf(&b, "\n%s\n\n", h.Text)
	}
	if len(hits) == 0 {
		b.WriteString("No passage matches the query.")
	}
	if res.Note != "" {
		b.WriteString("\nNote: " + res.Note)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.TrimSpace(b.String())}},
		StructuredContent: map[string]any{"hits": hits, "mode": res.Mode}}, nil, nil
}

// callAgent runs the agent on one user message.
func (t *mcpTools) callAgent(ctx context.Context, caller run.Principal, name string, in agentInput) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(in.Message) == "" {
		return nil, nil, errors.New("message is empty: say what to ask the agent")
	}
	a, err := t.runner.Agent(ctx, run.Caller{Principal: caller, Surface: run.SurfaceMCP}, name)
	if err != nil {
		return nil, nil, err
	}
	res, err := a.Generate(ctx, agent.Input{Messages: []llm.Message{llm.Text(llm.RoleUser, in.Message)}, User: caller.EndUser})
	if err != nil {
		return nil, nil, fmt.Errorf("agent %s: %w", name, err)
	}
	return textResult(res.Message.Text()), nil, nil
}

// runWorkflow starts a durable run and waits for its end, as a workflow
// answers a chat completion (openaiapi). A run that parks for a person
// answers with its id; it goes on through the run API.
func (t *mcpTools) runWorkflow(ctx context.Context, workspaceID, name string, in workflowInput) (*mcp.CallToolResult, any, error) {
	wf, err := t.runs.WorkflowByName(ctx, workspaceID, name)
	if err != nil {
		return nil, nil, fmt.Errorf("workflow %s: %w", name, err)
	}
	var vars map[string]any
	for k, v := range in.Vars {
		if vars == nil {
			vars = make(map[string]any, len(in.Vars))
		}
		vars[k] = v
	}
	run, err := t.runs.Start(ctx, controlplane.StartRequest{WorkspaceID: workspaceID, WorkflowID: wf.ID,
		WorkflowVersion: wf.Version, Definition: wf.Definition, Input: controlplane.RunInput{Input: in.Input, Vars: vars}})
	if err != nil {
		return nil, nil, fmt.Errorf("start workflow %s: %w", name, err)
	}
	var (
		status, errMsg, waitNode string
		output                   any
		done                     bool
	)
	err = t.runs.Events(ctx, workspaceID, run.ID, 0, func(ev workflow.Event) bool {
		if ev.Type == workflow.EventRunFinished {
			status, output, errMsg, waitNode, done = ev.Status, ev.Output, ev.Error, ev.NodeID, true
		}
		return !done
	})
	if err != nil {
		return nil, nil, fmt.Errorf("follow run %s: %w", run.ID, err)
	}
	if !done {
		// The stream ended without run_finished: the row has the outcome.
		row, err := t.runs.Run(ctx, workspaceID, run.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("read run %s: %w", run.ID, err)
		}
		status, errMsg, waitNode = string(row.Status), row.Error, row.WaitingNode
		if len(row.Output) > 0 {
			_ = json.Unmarshal(row.Output, &output)
		}
	}
	meta := map[string]any{"run_id": run.ID, "status": status}
	switch status {
	case workflow.StatusSucceeded:
		r := textResult(outputText(output))
		r.StructuredContent = map[string]any{"run_id": run.ID, "status": status, "output": output}
		return r, nil, nil
	case workflow.StatusWaiting:
		r := textResult(fmt.Sprintf("Workflow run %s is waiting for a person at node %q; resume it with the run API (POST /api/runs/%s/resume).", run.ID, waitNode, run.ID))
		r.StructuredContent = meta
		return r, nil, nil
	}
	if errMsg == "" {
		errMsg = "the run ended with status " + status
	}
	return nil, nil, fmt.Errorf("workflow %s run %s: %s", name, run.ID, errMsg)
}

// outputText renders a final output: strings as they are, anything else as
// JSON.
func outputText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

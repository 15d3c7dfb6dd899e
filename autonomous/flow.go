package autonomous

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/workflow"
	"github.com/agentcraftlab/agentcraft/workflow/contract"
)

// FlowKinds are the node kinds a FlowPlan may use; each is the workflow
// kind of the same name.
var FlowKinds = []string{"agent", "tool", "code", "condition", "iteration", "parallel", "human"}

// FlowPlan is what the planner writes in Flow mode: the steps toward a
// goal as a graph. Config is the workflow kind's config; an agent step
// may omit the model (it runs on the executor model).
type FlowPlan struct {
	Goal  string     `json:"goal"`
	Nodes []FlowNode `json:"nodes"`
	Edges []FlowEdge `json:"edges,omitempty"`
}

// FlowNode is one step of a plan.
type FlowNode struct {
	ID     string         `json:"id"`
	Kind   string         `json:"kind"`
	Config map[string]any `json:"config,omitempty"`
}

// FlowEdge leads from one step to the next; When is the source's handle
// (true/false of a condition, body/done of an iteration).
type FlowEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	When string `json:"when,omitempty"`
}

// flowSchema is the FlowPlan contract the planner's answer must meet.
var flowSchema = func() *contract.Schema {
	kinds := make([]any, len(FlowKinds))
	for i, k := range FlowKinds {
		kinds[i] = k
	}
	s, err := contract.Compile(map[string]any{
		"type":     "object",
		"required": []any{"nodes"},
		"properties": map[string]any{
			"goal": map[string]any{"type": "string"},
			"nodes": map[string]any{"type": "array", "minItems": 1, "maxItems": 50, "items": map[string]any{
				"type":     "object",
				"required": []any{"id", "kind"},
				"properties": map[string]any{
					"id":     map[string]any{"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_-]{0,63}$"},
					"kind":   map[string]any{"type": "string", "enum": kinds},
					"config": map[string]any{"type": "object"},
				},
			}},
			"edges": map[string]any{"type": "array", "items": map[string]any{
				"type":     "object",
				"required": []any{"from", "to"},
				"properties": map[string]any{
					"from": map[string]any{"type": "string"},
					"to":   map[string]any{"type": "string"},
					"when": map[string]any{"type": "string"},
				},
			}},
		},
	})
	if err != nil {
		panic(err) // a constant schema
	}
	return s
}()

// FlowSchemaJSON is the FlowPlan schema as the planner is shown it.
const FlowSchemaJSON = `{"goal": "string", "nodes": [{"id": "letters, digits, _ or -", "kind": "agent|tool|code|condition|iteration|parallel|human", "config": {}}], "edges": [{"from": "id", "to": "id", "when": "true|false (condition), body|done (iteration)"}]}`

// PlanError is a plan the contract gate refuses; Problems name each fault
// by its JSON path in the plan ("nodes[2].kind").
type PlanError struct {
	Problems []workflow.Problem
}

func (e *PlanError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Path + ": " + p.Message
	}
	return "autonomous: flow plan refused: " + strings.Join(parts, "; ")
}

// Checked is a plan that passed the gate, with the repairs made.
type Checked struct {
	Plan FlowPlan
	// Repairs say, for a person, what was repaired (contract repairs and
	// added edges).
	Repairs []string
}

// CheckPlan takes the planner's answer (text holding JSON, or decoded
// JSON), validates it against the FlowPlan contract with its safe repairs,
// then repairs a missing edge only where the order is unambiguous: a step
// without an incoming edge whose predecessor in the list has no outgoing
// one is joined to it (the planner listed the steps in order and forgot
// the link). Anything else — an unknown kind, an edge to no step, a step
// that would stay unreachable — refuses the plan naming its path.
func CheckPlan(raw any) (Checked, error) {
	res := contract.Check(raw, flowSchema, true, nil)
	if res.Contract.Status == contract.StatusFailed {
		var probs []workflow.Problem
		for _, n := range res.Contract.Notes {
			probs = append(probs, workflow.Problem{Path: notePath(n), Message: n})
		}
		if len(probs) == 0 {
			probs = []workflow.Problem{{Path: "$", Message: "the answer holds no FlowPlan JSON"}}
		}
		return Checked{}, &PlanError{Problems: probs}
	}
	var out Checked
	b, _ := json.Marshal(res.Normalized)
	if err := json.Unmarshal(b, &out.Plan); err != nil {
		return Checked{}, &PlanError{Problems: []workflow.Problem{{Path: "$", Message: err.Error()}}}
	}
	if res.Contract.Status == contract.StatusNormalized {
		out.Repairs = append(out.Repairs, res.Contract.Notes...)
	}
	p := &out.Plan
	index := make(map[string]int, len(p.Nodes))
	var probs []workflow.Problem
	for i, n := range p.Nodes {
		if _, dup := index[n.ID]; dup {
			probs = append(probs, workflow.Problem{Path: fmt.Sprintf("nodes[%d].id", i), Message: fmt.Sprintf("step id %q is used twice", n.ID)})
		}
		index[n.ID] = i
	}
	in := make([]int, len(p.Nodes))
	outs := make([]int, len(p.Nodes))
	for i, e := range p.Edges {
		fi, okf := index[e.From]
		ti, okt := index[e.To]
		if !okf {
			probs = append(probs, workflow.Problem{Path: fmt.Sprintf("edges[%d].from", i), Message: fmt.Sprintf("no step %q", e.From)})
		}
		if !okt {
			probs = append(probs, workflow.Problem{Path: fmt.Sprintf("edges[%d].to", i), Message: fmt.Sprintf("no step %q", e.To)})
		}
		if okf && okt {
			outs[fi]++
			in[ti]++
		}
	}
	if len(probs) > 0 {
		return Checked{}, &PlanError{Problems: probs}
	}
	for i := 1; i < len(p.Nodes); i++ {
		if in[i] > 0 {
			continue
		}
		prev := p.Nodes[i-1]
		if outs[i-1] > 0 || prev.Kind == "condition" || prev.Kind == "iteration" {
			// The predecessor leads elsewhere, or its edges need a handle
			// the planner would have had to choose: not safe to guess.
			probs = append(probs, workflow.Problem{Path: fmt.Sprintf("nodes[%d]", i),
				Message: fmt.Sprintf("step %q has no incoming edge and cannot be linked safely", p.Nodes[i].ID)})
			continue
		}
		p.Edges = append(p.Edges, FlowEdge{From: prev.ID, To: p.Nodes[i].ID})
		outs[i-1]++
		in[i]++
		out.Repairs = append(out.Repairs, fmt.Sprintf("added the missing edge %s → %s (steps listed in that order, the first without an outgoing edge)", prev.ID, p.Nodes[i].ID))
	}
	if len(probs) > 0 {
		return Checked{}, &PlanError{Problems: probs}
	}
	return out, nil
}

var notePathRE = regexp.MustCompile(`(?:^|\s)((?:nodes|edges|goal)(?:\[\d+\])?(?:\.[A-Za-z_]+(?:\[\d+\])?)*)`)

// notePath finds the JSON path a contract note names.
func notePath(note string) string {
	if m := notePathRE.FindStringSubmatch(note); m != nil {
		return m[1]
	}
	return "$"
}

// ExecutorModel is the model an agent step without one runs on:
// "provider/model".
type ExecutorModel string

// Definition turns a checked plan into a workflow: start → the plan's
// first step; every step with no outgoing edge → end. Agent steps without
// a model get the executor's; a human step's config is kept. The
// definition is validated against reg; a problem is reported at the
// plan's own path (nodes[i] of the plan, not of the workflow).
func Definition(p FlowPlan, name string, exec ExecutorModel, reg *workflow.Registry) (*workflow.Definition, error) {
	def := &workflow.Definition{Name: name, Description: p.Goal}
	def.Nodes = append(def.Nodes, workflow.Node{ID: "start", Type: "start"})
	has := map[string]bool{}
	for _, n := range p.Nodes {
		cfg := make(map[string]any, len(n.Config)+1)
		for k, v := range n.Config {
			cfg[k] = v
		}
		if n.Kind == "agent" && cfg["agent"] == nil && cfg["model"] == nil {
			cfg["model"] = string(exec)
		}
		def.Nodes = append(def.Nodes, workflow.Node{ID: n.ID, Type: n.Kind, Config: cfg})
		has[n.ID] = true
	}
	def.Nodes = append(def.Nodes, workflow.Node{ID: "end", Type: "end"})
	if has["start"] || has["end"] {
		return nil, &PlanError{Problems: []workflow.Problem{{Path: "nodes", Message: `step ids "start" and "end" are reserved`}}}
	}
	outs := map[string]int{}
	def.Edges = append(def.Edges, workflow.Edge{ID: "e0", Source: "start", Target: p.Nodes[0].ID})
	for i, e := range p.Edges {
		def.Edges = append(def.Edges, workflow.Edge{ID: fmt.Sprintf("e%d", i+1), Source: e.From, Target: e.To, SourceHandle: e.When})
		outs[e.From]++
	}
	for _, n := range p.Nodes {
		if outs[n.ID] == 0 {
			def.Edges = append(def.Edges, workflow.Edge{ID: "end_" + n.ID, Source: n.ID, Target: "end"})
		}
	}
	if reg != nil {
		if probs := workflow.Validate(def, reg); len(probs) > 0 {
			return nil, &PlanError{Problems: planPaths(probs, len(p.Edges))}
		}
	}
	return def, nil
}

var indexRE = regexp.MustCompile(`^(nodes|edges)\[(\d+)\]`)

// planPaths maps workflow problem paths back to the plan: the workflow's
// nodes[0] is start, its edges[0] the edge from start.
func planPaths(ps []workflow.Problem, planEdges int) []workflow.Problem {
	out := make([]workflow.Problem, len(ps))
	for i, p := range ps {
		if m := indexRE.FindStringSubmatch(p.Path); m != nil {
			var k int
			fmt.Sscan(m[2], &k)
			switch {
			case k >= 1 && (m[1] == "nodes" || k <= planEdges):
				p.Path = fmt.Sprintf("%s[%d]%s", m[1], k-1, p.Path[len(m[0]):])
			default:
				p.Path = m[1] + p.Path[len(m[0]):]
			}
		}
		out[i] = p
	}
	return out
}

// Plan asks the planner model for a FlowPlan toward goal and checks it.
// reference, when set, is a plan that reached a similar goal before
// (Memory.Closest), shown to the planner as a model to adapt. tools are
// the names an agent or tool step may use.
func Plan(ctx context.Context, planner Model, goal string, tools []string, reference *FlowPlan) (Checked, llm.Usage, error) {
	var b strings.Builder
	b.WriteString("Plan how to reach the goal below as a workflow graph. Answer with JSON only, in this shape:\n")
	b.WriteString(FlowSchemaJSON)
	b.WriteString("\n\nKinds: agent (config: prompt, instructions, tools — a model step), tool (config: tool, input), code (config: mode, …), " +
		"condition (config: expression; edges when true/false), iteration (config: items; edges when body/done), parallel (branches run at once), human (config: prompt).\n" +
		"Templates: {{input}} is the step's input, {{nodes.<id>.output}} an earlier step's output.\n")
	if len(tools) > 0 {
		b.WriteString("Tools available: " + strings.Join(tools, ", ") + "\n")
	}
	if reference != nil {
		ref, _ := json.Marshal(reference)
		b.WriteString("\nA plan that reached a similar goal before (adapt it; do not copy what does not fit):\n" + string(ref) + "\n")
	}
	b.WriteString("\nGoal: " + goal)
	resp, err := planner.Model.Generate(ctx, llm.Request{Model: planner.ID, Messages: []llm.Message{
		llm.Text(llm.RoleSystem, "You are a planner. You write FlowPlans: small, concrete workflow graphs."),
		llm.Text(llm.RoleUser, b.String()),
	}})
	if err != nil {
		return Checked{}, llm.Usage{}, fmt.Errorf("autonomous: plan: %w", err)
	}
	c, err := CheckPlan(resp.Message.Text())
	if err == nil && c.Plan.Goal == "" {
		c.Plan.Goal = goal
	}
	return c, resp.Usage, err
}

// PlanOfTrace turns a ReAct run's delegated work into a FlowPlan: each
// asked sub-agent a step after the previous one, each group of spawned
// ones a parallel step with one branch each, then a final agent step
// that writes the answer from their outputs. A run that delegated nothing
// gives nil.
func PlanOfTrace(goal string, trace []TraceStep) *FlowPlan {
	if len(trace) == 0 {
		return nil
	}
	p := &FlowPlan{Goal: goal}
	prev := ""
	link := func(id string) {
		if prev != "" {
			p.Edges = append(p.Edges, FlowEdge{From: prev, To: id})
		}
	}
	var outputs []string
	for i := 0; i < len(trace); {
		if !trace[i].Async {
			id := fmt.Sprintf("step%d", i+1)
			p.Nodes = append(p.Nodes, agentStep(id, trace[i]))
			link(id)
			prev, outputs = id, append(outputs, id)
			i++
			continue
		}
		j := i
		for j < len(trace) && trace[j].Async {
			j++
		}
		fan := fmt.Sprintf("parallel%d", i+1)
		p.Nodes = append(p.Nodes, FlowNode{ID: fan, Kind: "parallel", Config: map[string]any{"merge": "by_branch"}})
		link(fan)
		join := fmt.Sprintf("join%d", i+1)
		for k := i; k < j; k++ {
			id := fmt.Sprintf("step%d", k+1)
			p.Nodes = append(p.Nodes, agentStep(id, trace[k]))
			p.Edges = append(p.Edges, FlowEdge{From: fan, To: id}, FlowEdge{From: id, To: join})
		}
		p.Nodes = append(p.Nodes, FlowNode{ID: join, Kind: "code", Config: map[string]any{"mode": "json_format"}})
		prev, outputs = join, append(outputs, join)
		i = j
	}
	refs := make([]string, len(outputs))
	for i, id := range outputs {
		refs[i] = "{{nodes." + id + ".output}}"
	}
	p.Nodes = append(p.Nodes, FlowNode{ID: "answer", Kind: "agent", Config: map[string]any{
		"prompt": "Goal: " + goal + "\n\nWork done:\n" + strings.Join(refs, "\n\n") + "\n\nWrite the final answer.",
	}})
	link("answer")
	return p
}

func agentStep(id string, s TraceStep) FlowNode {
	cfg := map[string]any{"instructions": s.Instructions, "prompt": s.Task}
	if len(s.Tools) > 0 {
		cfg["tools"] = slices.Clone(s.Tools)
	}
	return FlowNode{ID: id, Kind: "agent", Config: cfg}
}

// PlanOfDefinition is the FlowPlan a workflow made from a plan holds: its
// steps and edges without start and end, its description as the goal.
func PlanOfDefinition(def *workflow.Definition) FlowPlan {
	p := FlowPlan{Goal: def.Description}
	for _, n := range def.Nodes {
		if n.Type == "start" || n.Type == "end" {
			continue
		}
		p.Nodes = append(p.Nodes, FlowNode{ID: n.ID, Kind: n.Type, Config: n.Config})
	}
	for _, e := range def.Edges {
		if e.Source == "start" || e.Target == "end" {
			continue
		}
		p.Edges = append(p.Edges, FlowEdge{From: e.Source, To: e.Target, When: e.SourceHandle})
	}
	return p
}

package task

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentcraftlab/agentcraft/store"
)

// Step is one action of a plan.
type Step struct {
	// Tool is the workspace tool the step calls.
	Tool string `json:"tool"`
	// Input is the tool's arguments, passed as data (never rendered as a
	// template, so a request's text cannot reach into the run).
	Input map[string]any `json:"input,omitempty"`
	// Capability is the tool's capability (low, medium, high), set from
	// the tool when the plan is checked.
	Capability string `json:"capability,omitempty"`
	// Summary says in words what the step does: the approver reads it.
	Summary string `json:"summary"`
}

// Answer is the last turn of a plan: a model words the result from the
// steps' outputs.
type Answer struct {
	// Model is "provider/model".
	Model        string `json:"model"`
	Instructions string `json:"instructions,omitempty"`
	// Question is what to answer (the request's text).
	Question string `json:"question"`
}

// Plan is what an agent means to do for a task.
type Plan struct {
	// Agent is the agent that made it.
	Agent string `json:"agent"`
	Steps []Step `json:"steps"`
	// Answer, when set, words the result; without it the result is the
	// last step's output.
	Answer *Answer `json:"answer,omitempty"`
	// Trusted is set when the agent is a trusted executor of the
	// workspace's policy: its medium steps run without an approval
	// (high ones still wait for a person).
	Trusted bool `json:"trusted,omitempty"`
}

// Capability is the highest capability of the plan's steps.
func (p Plan) Capability() string {
	best := "low"
	for _, s := range p.Steps {
		if capRank(s.Capability) > capRank(best) {
			best = s.Capability
		}
	}
	return best
}

func capRank(c string) int { return rank(store.Capability(c)) }

// varAgent is the run variable naming the agent whose plan the run
// executes; the ledger reads it to apply the trusted-executor policy.
const varAgent = "_agent"

// stepID is the node id of the plan's i-th step (from 1).
func stepID(i int) string { return fmt.Sprintf("step_%d", i) }

// Definition compiles the plan to the workflow its run executes:
// start → [approval] → tool → … → [answer agent] → end, one approval
// node before every step of medium or high capability. The steps'
// inputs and the question travel in the run's vars, returned alongside,
// and the nodes refer to them whole ({{vars.step_1.summary}}), so no
// text of the request is ever parsed as a template.
func (p Plan) Definition() (json.RawMessage, map[string]any, error) {
	if len(p.Steps) == 0 && p.Answer == nil {
		return nil, nil, fmt.Errorf("task: plan of %s has no steps", p.Agent)
	}
	type node struct {
		ID     string         `json:"id"`
		Type   string         `json:"type"`
		Config map[string]any `json:"config,omitempty"`
	}
	type edge struct {
		ID     string `json:"id"`
		Source string `json:"source"`
		Target string `json:"target"`
	}
	nodes := []node{{ID: "start", Type: "start"}}
	vars := map[string]any{}
	for i, s := range p.Steps {
		id := stepID(i + 1)
		in := map[string]any{}
		for k := range s.Input {
			if !plainKey(k) {
				return nil, nil, fmt.Errorf("task: step %d (%s): input key %q is not a plain name", i+1, s.Tool, k)
			}
			in[k] = "{{vars." + id + "." + k + "}}"
		}
		input := s.Input
		if input == nil {
			input = map[string]any{}
		}
		vars[id] = input
		vars[id+"_summary"] = s.Summary
		if capRank(s.Capability) > 1 || capRank(s.Capability) == 1 && !p.Trusted {
			nodes = append(nodes, node{ID: "approve_" + id[len("step_"):], Type: "approval", Config: map[string]any{
				"step": id, "summary": "{{vars." + id + "_summary}}", "capability": s.Capability}})
		}
		nodes = append(nodes, node{ID: id, Type: "tool", Config: map[string]any{"tool": s.Tool, "input": in, "summary": "{{vars." + id + "_summary}}"}})
	}
	if a := p.Answer; a != nil {
		vars["question"] = a.Question
		prompt := "Request: {{vars.question}}"
		for i := range p.Steps {
			id := stepID(i + 1)
			prompt += fmt.Sprintf("\n\nResult of step %d ({{vars.%s_summary}}):\n{{nodes.%s.output}}", i+1, id, id)
		}
		cfg := map[string]any{"model": a.Model, "prompt": prompt}
		if a.Instructions != "" {
			cfg["instructions"] = a.Instructions
		}
		nodes = append(nodes, node{ID: "answer", Type: "agent", Config: cfg})
	}
	nodes = append(nodes, node{ID: "end", Type: "end"})
	vars[varAgent] = p.Agent
	edges := make([]edge, 0, len(nodes)-1)
	for i := 1; i < len(nodes); i++ {
		edges = append(edges, edge{ID: fmt.Sprintf("e%d", i), Source: nodes[i-1].ID, Target: nodes[i].ID})
	}
	def, err := json.Marshal(map[string]any{"name": "task plan of " + p.Agent, "nodes": nodes, "edges": edges})
	return def, vars, err
}

// plainKey reports whether k can follow "vars.step_1." in a reference.
func plainKey(k string) bool {
	if k == "" {
		return false
	}
	return strings.IndexFunc(k, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0
}

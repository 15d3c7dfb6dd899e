package autonomous

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentcraftlab/agentcraft/search"
)

// Memory is the execution memory: plans that reached their goal, kept per
// workspace in a search index over their goals, so that the next planning
// for a similar goal gets the closest one as a reference. With an embedder
// the search is hybrid (BM25 and vectors fused); without, full text.
type Memory struct {
	engine search.Engine
}

// NewMemory returns the execution memory over engine.
func NewMemory(engine search.Engine) *Memory { return &Memory{engine: engine} }

func plansIndex(workspaceID string) string { return workspaceID + "_plans" }

// DropWorkspace forgets the workspace's plans (its index), when the
// workspace is deleted. An engine that cannot delete an index is an
// error naming it.
func (m *Memory) DropWorkspace(ctx context.Context, workspaceID string) error {
	d, ok := m.engine.(interface {
		DeleteIndex(ctx context.Context, index string) error
	})
	if !ok {
		return fmt.Errorf("autonomous: drop plans of workspace %s: the search engine (%T) cannot delete an index", workspaceID, m.engine)
	}
	if err := d.DeleteIndex(ctx, plansIndex(workspaceID)); err != nil {
		return fmt.Errorf("autonomous: drop plans of workspace %s: %w", workspaceID, err)
	}
	return nil
}

// Remember keeps p under its goal; a plan for the same goal replaces the
// older one.
func (m *Memory) Remember(ctx context.Context, workspaceID string, p FlowPlan) error {
	goal := strings.TrimSpace(p.Goal)
	if goal == "" {
		return fmt.Errorf("autonomous: remember plan: the plan has no goal")
	}
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("autonomous: remember plan: %w", err)
	}
	sum := sha256.Sum256([]byte(goal))
	doc := search.Document{ID: hex.EncodeToString(sum[:12]), Index: plansIndex(workspaceID), Title: goal, Text: goal,
		Metadata: map[string]string{"plan": string(b)}}
	if err := m.engine.Index(ctx, doc); err != nil {
		return fmt.Errorf("autonomous: remember plan: %w", err)
	}
	return nil
}

// Closest returns the remembered plan whose goal best matches goal, or nil
// when none matches at all.
func (m *Memory) Closest(ctx context.Context, workspaceID, goal string) (*FlowPlan, error) {
	res, err := m.engine.Search(ctx, search.Query{Text: goal, TopK: 1, Indexes: []string{plansIndex(workspaceID)}})
	if err != nil {
		return nil, fmt.Errorf("autonomous: recall plan: %w", err)
	}
	if len(res.Hits) == 0 {
		return nil, nil
	}
	var p FlowPlan
	if err := json.Unmarshal([]byte(res.Hits[0].Metadata["plan"]), &p); err != nil {
		return nil, fmt.Errorf("autonomous: recall plan %s: %w", res.Hits[0].ID, err)
	}
	return &p, nil
}

// KeepPlan implements workflow.PlanKeeper: plan is a FlowPlan's JSON.
func (m *Memory) KeepPlan(ctx context.Context, workspaceID string, plan json.RawMessage) error {
	var p FlowPlan
	if err := json.Unmarshal(plan, &p); err != nil {
		return fmt.Errorf("autonomous: keep plan: %w", err)
	}
	return m.Remember(ctx, workspaceID, p)
}

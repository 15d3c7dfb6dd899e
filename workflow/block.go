package workflow

import (
	"fmt"

	"github.com/agentcraftlab/agentcraft/workflow/transform"
)

// Blocked reports why the plan's hooks.block_pattern refuses input, or ""
// when it does not (or the plan has none). It is the check a run makes
// before anything else, so a front end can refuse a run synchronously
// instead of learning it from the run's events.
func (p *Plan) Blocked(input any) string {
	if p.hooks == nil || p.hooks.block == nil {
		return ""
	}
	text, err := transform.Text(input)
	if err != nil {
		return "" // the run itself fails on such input
	}
	if m := p.hooks.block.FindString(text); m != "" {
		return fmt.Sprintf("input matches block_pattern (%q)", m)
	}
	return ""
}

package platform

import (
	"slices"
	"strings"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/skill"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

// Skills is the skill service: the built-in skills and each workspace's
// own, which agents name in their skills list.
func (p *Platform) Skills() *skill.Service { return p.skills }

// withSkills gives an agent its skills by progressive disclosure: the
// instructions get the "name — description" lines (skill.Prompt), the
// tools load_skill and read_skill_file, which read a skill when the model
// asks for it. A tool of the agent's already called load_skill or
// read_skill_file (an MCP server's, say) keeps its name and the skill
// tools are left out, with a warning.
func (p *Platform) withSkills(row store.Agent, set skill.Set, tools []tool.Tool, instructions string, warnings []string) ([]tool.Tool, string, []string) {
	warnings = append(warnings, set.Warnings...)
	if len(set.Skills) == 0 {
		return tools, instructions, warnings
	}
	for _, t := range tools {
		if n := t.Name(); n == skill.LoadSkillTool || n == skill.ReadSkillFileTool {
			return tools, instructions, append(warnings, "skills left out: the agent already has a tool called "+n)
		}
	}
	if instructions = strings.TrimRight(instructions, "\n"); instructions != "" {
		instructions += "\n\n"
	}
	instructions += skill.Prompt(set.Skills)
	tools = append(slices.Clip(tools), skill.Tools(p.skills, row.WorkspaceID, set.Skills, &skill.ToolOptions{PageBytes: skillPage(row.Params.MaxToolResultBytes)})...)
	return tools, instructions, warnings
}

// skillPage is how much of a skill one load_skill call returns: the
// default, or less when the agent cuts tool results shorter, so that a
// page is never cut (its note saying where to continue would be lost).
func skillPage(maxResult int) int {
	if maxResult <= 0 {
		maxResult = agent.DefaultMaxToolResultBytes
	}
	return max(1024, min(skill.DefaultPageBytes, maxResult-1024))
}

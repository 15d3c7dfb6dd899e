package workflow

import (
	"fmt"
	"slices"
	"strings"
)

// CheckAgents reports every config value of def that names an agent (a key
// marked [ConfigKey.NamesAgent], such as an agent node's "agent") which is
// not in agents, the names of the workspace's agents. [Validate] cannot
// know the workspace; callers that do (saving a workflow, lint with a
// configuration) run CheckAgents after it, so a typo in an agent's name is
// found before the first run rather than by it. Nodes of unknown kinds and
// values of the wrong type are left to Validate. A nil result means every
// named agent exists.
func CheckAgents(def *Definition, reg *Registry, agents []string) []Problem {
	if def == nil || reg == nil {
		return nil
	}
	known := slices.Clone(agents)
	slices.Sort(known)
	known = slices.Compact(known)
	var probs []Problem
	for i, n := range def.Nodes {
		k, ok := reg.Lookup(n.Type)
		if !ok {
			continue
		}
		probs = append(probs, checkAgentKeys(k.Config, n.Config, fmt.Sprintf("nodes[%d].config", i), known)...)
	}
	return probs
}

// maxNamedInHint bounds the agent names a hint lists.
const maxNamedInHint = 10

func checkAgentKeys(keys []ConfigKey, cfg map[string]any, at string, known []string) []Problem {
	var probs []Problem
	for _, k := range keys {
		if v, ok := cfg[k.Name]; ok {
			probs = append(probs, checkAgentValue(k, v, at+"."+k.Name, known)...)
		}
	}
	return probs
}

func checkAgentValue(k ConfigKey, v any, path string, known []string) []Problem {
	switch v := v.(type) {
	case string:
		if !k.NamesAgent {
			return nil
		}
		if _, found := slices.BinarySearch(known, v); found {
			return nil
		}
		hint := "the workspace has no agents yet: create one, or configure the agent inline with model"
		switch {
		case len(known) > maxNamedInHint:
			hint = "use one of: " + strings.Join(known[:maxNamedInHint], ", ") + ", …"
		case len(known) > 0:
			hint = "use one of: " + strings.Join(known, ", ")
		}
		return []Problem{{Path: path, Message: fmt.Sprintf("unknown agent %q", v), Hint: hint}}
	case []any:
		if k.Elem == nil {
			return nil
		}
		var probs []Problem
		for i, el := range v {
			probs = append(probs, checkAgentValue(*k.Elem, el, fmt.Sprintf("%s[%d]", path, i), known)...)
		}
		return probs
	case map[string]any:
		return checkAgentKeys(k.Fields, v, path, known)
	}
	return nil
}

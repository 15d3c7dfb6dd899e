package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentcraftlab/agentcraft/tool"
)

// workspaceTools holds tools that belong to one workspace, in groups (one
// group per imported OpenAPI document), so that agents of that workspace
// can name them and agents of other workspaces cannot. The imports behind
// them are stored (store.OpenAPIImports) and New rebuilds them.
type workspaceTools struct {
	change sync.Mutex // serializes imports, deletions and the load at start
	mu     sync.RWMutex
	byWS   map[string]map[string][]tool.Tool // workspace → group → tools; guarded by mu
	// loaded fingerprints the stored import each group was built from (or
	// failed to build from), for syncOpenAPI; guarded by change.
	loaded map[importKey]fingerprint
}

// take splits names into those it does not hold for ws and the tools it
// holds, in the order named.
func (w *workspaceTools) take(ws string, names []string) (rest []string, tools []tool.Tool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	groups := w.byWS[ws]
	if len(groups) == 0 {
		return names, nil
	}
	for _, n := range names {
		if t := findTool(groups, n); t != nil {
			tools = append(tools, t)
			continue
		}
		rest = append(rest, n)
	}
	return rest, tools
}

func findTool(groups map[string][]tool.Tool, name string) tool.Tool {
	for _, ts := range groups {
		for _, t := range ts {
			if t.Name() == name {
				return t
			}
		}
	}
	return nil
}

// SetWorkspaceTools makes tools callable by the agents of workspace ws
// under their names, replacing the tools group held before (a re-import of
// the same document name). It fails when a name is invalid, repeats, or is
// taken by a built-in tool, an MCP tool or another group of ws. Agents of
// ws built before pick the new tools up on their next run.
func (c *Catalog) SetWorkspaceTools(ws, group string, tools []tool.Tool) error {
	if ws == "" || group == "" {
		return errors.New("catalog: set workspace tools: workspace and group are required")
	}
	seen := map[string]bool{}
	for _, t := range tools {
		name := t.Name()
		if err := tool.ValidateName(name); err != nil {
			return fmt.Errorf("catalog: set workspace tools: %w", err)
		}
		if !t.Capability().Valid() {
			return fmt.Errorf("catalog: set workspace tools: %q has no capability", name)
		}
		if seen[name] {
			return fmt.Errorf("catalog: set workspace tools: %q is listed twice", name)
		}
		seen[name] = true
		if _, builtin := c.tools.Get(name); builtin || c.mcp != nil && c.mcp.Owns(name) {
			return fmt.Errorf("catalog: set workspace tools: %q is the name of a built-in or MCP tool: import under another name", name)
		}
	}
	w := &c.wsTools
	w.mu.Lock()
	for g, ts := range w.byWS[ws] {
		if g == group {
			continue
		}
		for _, t := range ts {
			if seen[t.Name()] {
				w.mu.Unlock()
				return fmt.Errorf("catalog: set workspace tools: %q is already a tool of %q in this workspace: import under another name", t.Name(), g)
			}
		}
	}
	if w.byWS == nil {
		w.byWS = map[string]map[string][]tool.Tool{}
	}
	if w.byWS[ws] == nil {
		w.byWS[ws] = map[string][]tool.Tool{}
	}
	w.byWS[ws][group] = slices.Clone(tools)
	w.mu.Unlock()
	c.touch(ws) // agents of ws built before hold the tools of before
	return nil
}

// group returns a copy of the tools of group in ws and whether it exists.
func (w *workspaceTools) group(ws, group string) ([]tool.Tool, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	ts, ok := w.byWS[ws][group]
	return slices.Clone(ts), ok
}

// removeWorkspaceTools drops the tools group of workspace ws, if any.
func (c *Catalog) removeWorkspaceTools(ws, group string) {
	w := &c.wsTools
	w.mu.Lock()
	_, ok := w.byWS[ws][group]
	delete(w.byWS[ws], group)
	w.mu.Unlock()
	if ok {
		c.touch(ws) // agents of ws built before hold the removed tools
	}
}

// WorkspaceTool is a tool added to a workspace and the group it came in.
type WorkspaceTool struct {
	Group string
	Tool  tool.Tool
}

// WorkspaceTools returns the tools added to workspace ws, sorted by name.
func (c *Catalog) WorkspaceTools(ws string) []WorkspaceTool {
	w := &c.wsTools
	w.mu.RLock()
	defer w.mu.RUnlock()
	var out []WorkspaceTool
	for g, ts := range w.byWS[ws] {
		for _, t := range ts {
			out = append(out, WorkspaceTool{Group: g, Tool: t})
		}
	}
	slices.SortFunc(out, func(a, b WorkspaceTool) int { return strings.Compare(a.Tool.Name(), b.Tool.Name()) })
	return out
}

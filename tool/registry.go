package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentcraftlab/agentcraft/llm"
)

// ErrUnknownTool reports a tool name that is not registered.
var ErrUnknownTool = errors.New("unknown tool")

// Registry maps names to tools. The zero value is an empty registry ready to
// use; it is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool // guarded by mu
}

// Register adds t. It fails if the name is invalid or taken, the capability
// is not set, or the schema is not a JSON object.
func (r *Registry) Register(t Tool) error {
	if t == nil {
		return errors.New("tool: register: nil tool")
	}
	name := t.Name()
	if err := ValidateName(name); err != nil {
		return fmt.Errorf("tool: register: %w", err)
	}
	if c := t.Capability(); !c.Valid() {
		return fmt.Errorf("tool: register %q: capability %v is not set: return CapabilityLow, CapabilityMedium or CapabilityHigh", name, c)
	}
	if s := t.Schema(); s != nil {
		var obj map[string]any
		if err := json.Unmarshal(s, &obj); err != nil {
			return fmt.Errorf("tool: register %q: schema must be a JSON object: %w", name, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[name]; dup {
		return fmt.Errorf("tool: register %q: a tool with this name is already registered", name)
	}
	if r.tools == nil {
		r.tools = make(map[string]Tool)
	}
	r.tools[name] = t
	return nil
}

// Get returns the tool named name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// List returns every tool, sorted by name.
func (r *Registry) List() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.tools))
	for name := range r.tools {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Resolve returns the tools named by names, in that order, as an agent's
// configuration lists them. An unknown name fails the whole list with an
// error wrapping ErrUnknownTool that names it and the available tools;
// a repeated name is an error too.
func (r *Registry) Resolve(names ...string) ([]Tool, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		t, ok := r.tools[name]
		if !ok {
			avail := make([]string, 0, len(r.tools))
			for n := range r.tools {
				avail = append(avail, n)
			}
			slices.Sort(avail)
			return nil, fmt.Errorf("tool: %w %q (available: %s)", ErrUnknownTool, name, strings.Join(avail, ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("tool: %q is listed twice", name)
		}
		seen[name] = true
		out = append(out, t)
	}
	return out, nil
}

// Defs returns the model-facing definitions of the tools named by names,
// with the same errors as Resolve.
func (r *Registry) Defs(names ...string) ([]llm.ToolDef, error) {
	tools, err := r.Resolve(names...)
	if err != nil {
		return nil, err
	}
	out := make([]llm.ToolDef, len(tools))
	for i, t := range tools {
		out[i] = Def(t)
	}
	return out, nil
}

// ValidateName checks a tool name against the rule providers enforce: 1 to
// 64 characters from a-z, A-Z, 0-9, '_' and '-'.
func ValidateName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("invalid tool name %q: use 1 to 64 characters", name)
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("invalid tool name %q: use only letters, digits, '_' and '-'", name)
		}
	}
	return nil
}

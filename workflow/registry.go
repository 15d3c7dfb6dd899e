package workflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Kind describes one node type: what the engines need to know about it
// (the flags), what its config looks like (for validation and the studio's
// forms) and which output handles its edges may leave by.
type Kind struct {
	// Type is the name used in Node.Type, such as "agent" or "http-request".
	Type string
	// Title is the kind's name in the studio's palette, such as "HTTP
	// request"; empty means Type.
	Title string
	// Doc is a one-line description for the studio's palette.
	Doc string
	// Category groups the kind in the palette; empty means CategoryOther.
	Category Category

	// IsExecutable: the node does work when a run reaches it.
	IsExecutable bool
	// RequiresImperative: the node branches, loops, pauses or fans out, which
	// only the imperative engine can run; its presence forces that strategy.
	RequiresImperative bool
	// IsAgentLike: the node is driven by a model; strategies are chosen by
	// how agent-like nodes are connected.
	IsAgentLike bool
	// IsMeta: the node marks the shape of the graph (start, end) rather than
	// doing work.
	IsMeta bool
	// IsDataNode: the node supplies data (retrieval) to the nodes after it.
	IsDataNode bool

	// WaitsForHuman: the node parks the run until a person answers (human);
	// the run ends waiting, and POST /api/runs/{id}/resume continues it.
	WaitsForHuman bool
	// Network: the node reaches other hosts through Services.HTTP, the
	// egress-guarded client (http-request, a2a-agent).
	Network bool
	// SideEffects: running the node may change something outside the run
	// (a POST to an API, a remote agent acting, an agent's tools), so a
	// re-run repeats that change.
	SideEffects bool

	// Compound, for loop, iteration and parallel, says the node owns a
	// body of nodes that the engine runs for it (CompoundLoop,
	// CompoundIteration, CompoundParallel); empty for every other kind.
	Compound string

	// Execute runs one execution of the node. Nil for meta kinds (start,
	// end), compound kinds (run by the engine itself) and kinds that are
	// Unavailable.
	Execute func(ctx context.Context, x *Exec) (Result, error)

	// Unavailable, when not empty, says why the kind cannot run yet (for
	// example, its executor lands with a later issue). Validation rejects
	// such nodes with this text instead of pretending they run.
	Unavailable string

	// Config describes the keys of Node.Config. Keys not listed are reported
	// as unknown, which catches typos such as "expresion".
	Config []ConfigKey

	// Handles, when set, returns the sourceHandle values the node's
	// outgoing edges must use, computed from its config (a router's route
	// names). Nil means edges leave without a handle.
	Handles func(config map[string]any) []string
	// HandlesFrom, for a kind whose handles come from its config, says
	// where, such as "routes[].name"; empty when the handles are fixed
	// (Handles returns them for any config).
	HandlesFrom string

	// Check, when set, reports problems that span several keys (a router's
	// default must name one of its routes). at is the JSON path of the
	// node's config, such as "nodes[3].config". It runs only when every key
	// already has the right type, so it may type-assert freely.
	Check func(config map[string]any, at string) []Problem
	// Rules describes in words what Check enforces, for the studio's
	// inline help (a JSON Schema of the keys cannot say it).
	Rules []string

	// Example is a small config that passes validation: every required key
	// and whatever Check needs besides. The studio offers it as the new
	// node's config; tests hold it valid.
	Example map[string]any
}

// ValueType is the type of a config value.
type ValueType string

// The config value types. Expression and Duration are strings with extra
// checks; Template is a string that may hold {{...}} references.
const (
	TypeString     ValueType = "string"
	TypeTemplate   ValueType = "template"   // string; {{nodes.<id>.output}} must name an ancestor
	TypeExpression ValueType = "expression" // string compiled by expr-lang/expr
	TypeDuration   ValueType = "duration"   // string parsed by time.ParseDuration, such as "30s"
	TypeRegexp     ValueType = "regexp"     // string compiled by regexp (RE2 syntax)
	TypeNumber     ValueType = "number"
	TypeInteger    ValueType = "integer"
	TypeBoolean    ValueType = "boolean"
	TypeObject     ValueType = "object"
	TypeArray      ValueType = "array"
	TypeAny        ValueType = "any"
)

// ConfigKey describes one key of a node's config.
type ConfigKey struct {
	Name     string
	Type     ValueType
	Required bool
	// Default is the value the executor uses when the key is absent; nil
	// when there is none. It is documentation for the studio and the docs;
	// validation does not fill it in.
	Default any
	// Enum, for strings, lists the accepted values.
	Enum []string
	// Min, for numbers and integers, is the smallest accepted value.
	Min *float64
	// Elem, for arrays, describes every element.
	Elem *ConfigKey
	// Fields, for objects, describes the keys; nil accepts any keys.
	Fields []ConfigKey
	// NamesAgent, for strings, marks the value as the name of a workspace
	// agent: [CheckAgents] reports names that are not among the known ones.
	NamesAgent bool
	// Doc is a one-line description.
	Doc string
}

// Registry holds the node kinds a server knows. Register every kind before
// use; lookups are safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex    // guards kinds
	kinds map[string]Kind // by Kind.Type
}

// NewRegistry returns an empty registry. Package workflow/nodes registers
// the built-in kinds.
func NewRegistry() *Registry {
	return &Registry{kinds: map[string]Kind{}}
}

// Register adds a kind. It refuses an empty or already registered type, so
// two packages cannot silently redefine the same kind.
func (r *Registry) Register(k Kind) error {
	if k.Type == "" {
		return errors.New("workflow: register kind: empty type")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.kinds[k.Type]; dup {
		return fmt.Errorf("workflow: register kind %q: already registered", k.Type)
	}
	r.kinds[k.Type] = k
	return nil
}

// Lookup returns the kind registered under typ.
func (r *Registry) Lookup(typ string) (Kind, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	k, ok := r.kinds[typ]
	return k, ok
}

// Kinds returns every registered kind, sorted by type.
func (r *Registry) Kinds() []Kind {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Kind, 0, len(r.kinds))
	for _, k := range r.kinds {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Kind) int {
		switch {
		case a.Type < b.Type:
			return -1
		case a.Type > b.Type:
			return 1
		}
		return 0
	})
	return out
}

// types returns the names of the kinds that can run, sorted, for hints.
func (r *Registry) types() []string {
	var out []string
	for _, k := range r.Kinds() {
		if k.Unavailable == "" {
			out = append(out, k.Type)
		}
	}
	return out
}

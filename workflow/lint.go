package workflow

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Warning is a likely design mistake in a definition that is nevertheless
// runnable. It has the shape of a [Problem].
type Warning struct {
	// Path is the JSON path of the value the warning is about, such as
	// "nodes[2].config.prompt".
	Path string `json:"path"`
	// Message says what looks wrong.
	Message string `json:"message"`
	// Hint says how to fix it.
	Hint string `json:"hint"`
}

func (w Warning) String() string {
	s := w.Path + ": " + w.Message
	if w.Hint != "" {
		s += " (" + w.Hint + ")"
	}
	return s
}

// The node kinds the lint rules are about. They are built-in kinds, named
// here rather than imported because package nodes depends on workflow.
const (
	typeNormalize = "normalize"
	typeContract  = "contract"
	typeCode      = "code"
)

// inputRef finds {{input}} references, with or without a path below them.
var inputRef = regexp.MustCompile(`\{\{\s*input\s*(?:[.\[]|\}\})`)

// fallbackOp finds a literal fallback in a script or expression: ||, ?? or
// Python's or, followed by a string, an empty list or an empty object.
var fallbackOp = regexp.MustCompile("(\\|\\||\\?\\?|\\bor\\b)\\s*(\"[^\"\\n]*\"|'[^'\\n]*'|`[^`]*`|\\[\\s*\\]|\\{\\s*\\})")

// implicitInput names, per kind, the config key whose absence makes the
// node read the output of the node before it (its {{input}}) although the
// key has no declared default.
var implicitInput = map[string]string{
	typeEnd:        "output",
	typeContract:   "source",
	"output_check": "source",
}

// Lint reports structural warnings about def: choices that validate and run
// but defeat the contract nodes the workflow itself declares.
//
//   - A node reads the start node's output (the raw run input) although a
//     normalize node normalizes that input: it bypasses the defaults the
//     normalize node fills.
//   - A node reads an agent's raw text although a contract node checks that
//     agent's output: it bypasses the schema check and repairs.
//   - A code node hides missing data behind a fixed fallback: a literal after
//     ||, ?? or or in a script or expression, or a template without any
//     {{reference}}, whose output is the same on every run.
//
// Lint does not repeat [Validate]; on an invalid definition it skips what it
// cannot judge (unknown kinds, duplicate ids, dangling edges). Warnings come
// in node order. A nil result means nothing was found.
func Lint(def *Definition, reg *Registry) []Warning {
	if def == nil || reg == nil {
		return nil
	}
	l := &linter{def: def, g: newGraph(def), kinds: make([]*Kind, len(def.Nodes))}
	for i, n := range def.Nodes {
		if k, ok := reg.Lookup(n.Type); ok {
			l.kinds[i] = &k
		}
	}
	for i := range def.Nodes {
		if !l.owned(i) {
			continue
		}
		l.readsStart(i)
		l.readsRawAgent(i)
		l.fixedFallback(i)
	}
	return l.warns
}

type linter struct {
	def   *Definition
	g     *graph
	kinds []*Kind // by node index; nil when the type is unknown
	warns []Warning
}

func (l *linter) add(path, msg, hint string) {
	l.warns = append(l.warns, Warning{Path: path, Message: msg, Hint: hint})
}

func (l *linter) owned(i int) bool {
	j, ok := l.g.index[l.def.Nodes[i].ID]
	return ok && j == i
}

// readsInput returns the config path through which node i reads its
// {{input}} (the output of the node before it), and whether it does: a
// template that mentions {{input}}, or a key left out whose default does.
// A code node's template and script see the value its input key chose,
// not the node's input, so only its input key counts.
func (l *linter) readsInput(i int) (string, bool) {
	n := l.def.Nodes[i]
	at := fmt.Sprintf("nodes[%d].config", i)
	if key, ok := implicitInput[n.Type]; ok {
		if _, set := n.Config[key]; !set {
			return at + "." + key, true
		}
	}
	k := l.kinds[i]
	if k == nil {
		return "", false
	}
	for _, ck := range k.Config {
		if ck.Type != TypeTemplate || (n.Type == typeCode && ck.Name != "input") {
			continue
		}
		v, set := n.Config[ck.Name]
		if !set {
			v = ck.Default
		}
		if s, ok := v.(string); ok && inputRef.MatchString(s) {
			return at + "." + ck.Name, true
		}
	}
	return "", false
}

// templates calls fn for every string of node i's config with the node ids
// it references as {{nodes.<id>.output}}.
func (l *linter) templates(i int, fn func(path string, ids []string)) {
	n := l.def.Nodes[i]
	walkStrings(n.Config, fmt.Sprintf("nodes[%d].config", i), func(path, s string) {
		var ids []string
		for _, m := range nodeRef.FindAllStringSubmatch(s, -1) {
			if !slices.Contains(ids, m[1]) {
				ids = append(ids, m[1])
			}
		}
		if len(ids) > 0 {
			fn(path, ids)
		}
	})
}

// readsStart warns when node i reads the raw run input although a normalize
// node normalizes it: every reader but the normalize nodes should see its
// output. A normalize node that normalizes something else (an agent's
// answer) does not count.
func (l *linter) readsStart(i int) {
	n := l.def.Nodes[i]
	if n.Type == typeNormalize || n.Type == typeStart {
		return
	}
	norm := -1
	for j, m := range l.def.Nodes {
		if m.Type == typeNormalize && l.owned(j) {
			if _, ok := l.startPath(j); ok {
				norm = j
				break
			}
		}
	}
	if norm < 0 {
		return
	}
	if path, ok := l.startPath(i); ok {
		normID := l.def.Nodes[norm].ID
		hint := fmt.Sprintf("read the normalize node's output instead, as {{nodes.%s.output.normalized}} (or a field below it)", normID)
		if !reach(l.g.pred, i)[norm] {
			hint += fmt.Sprintf(", and connect node %q after %q", n.ID, normID)
		}
		l.add(path, fmt.Sprintf("node %q reads the raw run input from start, bypassing the defaults of normalize node %q", n.ID, normID), hint)
	}
}

// startPath returns the config path through which node i reads the start
// node's output, and whether it does: a {{nodes.<start>.output}} reference,
// or {{input}} when start is its only predecessor.
func (l *linter) startPath(i int) (string, bool) {
	path := ""
	l.templates(i, func(p string, ids []string) {
		for _, id := range ids {
			if j, ok := l.g.index[id]; ok && l.def.Nodes[j].Type == typeStart && path == "" {
				path = p
			}
		}
	})
	if path != "" {
		return path, true
	}
	if !l.onlyAfterStart(i) {
		return "", false
	}
	return l.readsInput(i)
}

// onlyAfterStart reports whether every predecessor of node i is a start node.
func (l *linter) onlyAfterStart(i int) bool {
	pred := l.g.pred[i]
	if len(pred) == 0 {
		return false
	}
	for _, p := range pred {
		if l.def.Nodes[p].Type != typeStart {
			return false
		}
	}
	return true
}

// contractAfter returns the index of a contract node downstream of node a,
// preferring a direct successor, or -1.
func (l *linter) contractAfter(a int) int {
	for _, s := range l.g.succ[a] {
		if l.def.Nodes[s].Type == typeContract {
			return s
		}
	}
	seen := reach(l.g.succ, a)
	for j, ok := range seen {
		if ok && j != a && l.def.Nodes[j].Type == typeContract {
			return j
		}
	}
	return -1
}

func (l *linter) agentLike(i int) bool {
	return l.kinds[i] != nil && l.kinds[i].IsAgentLike
}

// readsRawAgent warns when node i consumes an agent's unchecked text
// although a contract node checks that agent's output: as the agent's
// successor next to the contract, or through {{nodes.<agent>.output}}.
// Contract nodes themselves, and nodes on the way from the agent to its
// contract (which prepare what the contract checks), are exempt.
func (l *linter) readsRawAgent(i int) {
	n := l.def.Nodes[i]
	if n.Type == typeContract {
		return
	}
	warned := map[int]bool{} // agents already reported for node i
	if path, ok := l.readsInput(i); ok {
		for _, a := range l.g.pred[i] {
			if !l.agentLike(a) {
				continue
			}
			c := -1
			for _, s := range l.g.succ[a] {
				if l.def.Nodes[s].Type == typeContract {
					c = s
					break
				}
			}
			if c < 0 || warned[a] {
				continue
			}
			warned[a] = true
			l.rawAgent(path, i, a, c)
		}
	}
	var feedsContract []bool // computed on the first reference
	l.templates(i, func(path string, ids []string) {
		for _, id := range ids {
			a, ok := l.g.index[id]
			if !ok || a == i || warned[a] || !l.agentLike(a) {
				continue
			}
			c := l.contractAfter(a)
			if c < 0 {
				continue
			}
			if feedsContract == nil {
				feedsContract = reach(l.g.succ, i)
			}
			if feedsContract[c] {
				continue // node i prepares what the contract checks
			}
			warned[a] = true
			l.rawAgent(path, i, a, c)
		}
	})
}

func (l *linter) rawAgent(path string, i, a, c int) {
	reader, agentID, contractID := l.def.Nodes[i].ID, l.def.Nodes[a].ID, l.def.Nodes[c].ID
	hint := fmt.Sprintf("read the contract node's output instead, as {{nodes.%s.output.normalized}}", contractID)
	if !reach(l.g.pred, i)[c] {
		hint += fmt.Sprintf(", and connect node %q after %q", reader, contractID)
	}
	l.add(path, fmt.Sprintf("node %q reads the raw text of agent %q, which contract node %q checks", reader, agentID, contractID), hint)
}

// fixedFallback warns about code nodes that produce a fixed value when data
// is missing, or always.
func (l *linter) fixedFallback(i int) {
	n := l.def.Nodes[i]
	if n.Type != typeCode {
		return
	}
	at := fmt.Sprintf("nodes[%d].config", i)
	const hint = "fail loudly when the value is missing, or fill defaults in a normalize node where they are visible and reported"
	for _, key := range []string{"script", "expression"} {
		s, ok := n.Config[key].(string)
		if !ok {
			continue
		}
		if m := fallbackOp.FindString(s); m != "" {
			l.add(at+"."+key, fmt.Sprintf("code node %q falls back to a fixed value (%s) when data is missing", n.ID, m), hint)
		}
	}
	if mode, _ := n.Config["mode"].(string); mode == "template" {
		if s, ok := n.Config["template"].(string); ok && !strings.Contains(s, "{{") {
			l.add(at+".template", fmt.Sprintf("code node %q has a template without any {{reference}}, so its output is the same fixed text on every run", n.ID),
				"reference the data, such as {{input}} or {{nodes.<id>.output.field}}; "+hint)
		}
	}
}

package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/agentcraftlab/agentcraft/workflow/transform"
)

// Defaults of the compound kinds (they match the defaults the kinds
// declare in workflow/nodes).
const (
	defaultMaxIterations = 10
	defaultMaxItems      = 50
)

// runCompound runs a loop, iteration or parallel node with its body.
func (r *run) runCompound(ctx context.Context, sr *scopeRun, m int, key string, in any) (Result, map[int]bool, error) {
	pn := &r.p.nodes[m]
	switch pn.kind.Compound {
	case CompoundLoop:
		return r.runLoop(ctx, sr, m, key, in)
	case CompoundIteration:
		out, err := r.runIteration(ctx, sr, m, key, in)
		return Result{Output: out, Handle: "done"}, nil, err
	case CompoundParallel:
		return r.runParallel(ctx, sr, m, key, in)
	}
	return Result{}, nil, fmt.Errorf("unknown compound %q", pn.kind.Compound)
}

// Eval evaluates a compiled boolean expression over the execution's data:
// input, vars and nodes.<id>.output, plus extra names.
func evalBool(prog *vm.Program, in any, vars map[string]any, nodes map[string]any, extra map[string]any) (bool, error) {
	env := map[string]any{"input": in, "vars": vars}
	nm := make(map[string]any, len(nodes))
	for id, out := range nodes {
		nm[id] = map[string]any{"output": out}
	}
	env["nodes"] = nm
	for k, v := range extra {
		env[k] = v
	}
	out, err := expr.Run(prog, env)
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("expression gave %T, want a boolean", out)
	}
	return b, nil
}

// runLoop runs the body while the condition holds, at most
// max_iterations times. The condition sees input (the loop's input, then
// the last body output), vars, nodes and iteration (body runs so far).
// The loop's output is the last body output, or its input if the body
// never ran; it leaves by its done edges.
func (r *run) runLoop(ctx context.Context, sr *scopeRun, m int, key string, in any) (Result, map[int]bool, error) {
	pn := &r.p.nodes[m]
	maxIter := intConfig(pn.node.Config, "max_iterations", defaultMaxIterations)
	last := in
	for visit := 0; ; visit++ {
		ok, err := evalBool(pn.programs[""], last, sr.vars, sr.snapshot(), map[string]any{"iteration": visit})
		if err != nil {
			return Result{}, nil, fmt.Errorf("condition: %w", err)
		}
		if !ok || visit >= maxIter || pn.body == nil {
			break
		}
		res := r.runScope(ctx, pn.body, key+"#"+strconv.Itoa(visit+1)+"/", last, sr.vars, sr)
		if res.err != nil {
			return Result{}, nil, res.err
		}
		if res.output != nil {
			last = res.output
		}
	}
	return Result{Output: last, Handle: "done"}, nil, nil
}

// runIteration runs the body once per item, concurrency at a time, and
// returns the body outputs in item order.
func (r *run) runIteration(ctx context.Context, sr *scopeRun, m int, key string, in any) (any, error) {
	pn := &r.p.nodes[m]
	cfg := pn.node.Config
	data := transform.Data{Input: in, Vars: sr.vars}
	if pn.readsNodes {
		data.Nodes = sr.snapshot()
	}
	tmpl, _ := cfg["items"].(string)
	v, err := transform.Resolve(tmpl, data)
	if err != nil {
		return nil, fmt.Errorf("config.items: %w", err)
	}
	items, err := splitItems(v, cfg)
	if err != nil {
		return nil, err
	}
	maxItems := intConfig(cfg, "max_items", defaultMaxItems)
	if len(items) > maxItems {
		return nil, fmt.Errorf("%d items, more than max_items (%d); raise max_items or shorten the list", len(items), maxItems)
	}
	conc := max(1, intConfig(cfg, "concurrency", 1))
	outs := make([]any, len(items))
	if pn.body == nil {
		return outs, nil
	}
	var (
		wg       sync.WaitGroup
		sem      = make(chan struct{}, conc)
		mu       sync.Mutex
		firstErr error
	)
	for i, item := range items {
		sem <- struct{}{}
		mu.Lock()
		stop := firstErr != nil
		mu.Unlock()
		if stop || ctx.Err() != nil || r.halted() {
			<-sem
			break
		}
		wg.Add(1)
		go func(i int, item any) {
			defer wg.Done()
			defer func() { <-sem }()
			vars := make(map[string]any, len(sr.vars)+2)
			for k, v := range sr.vars {
				vars[k] = v
			}
			vars["item"], vars["index"] = item, i
			res := r.runScope(ctx, pn.body, key+"["+strconv.Itoa(i)+"]/", item, vars, sr)
			mu.Lock()
			defer mu.Unlock()
			if res.err != nil {
				if firstErr == nil {
					firstErr = res.err
				}
				return
			}
			outs[i] = res.output
		}(i, item)
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return outs, nil
}

// splitItems turns the resolved items value into a list.
func splitItems(v any, cfg map[string]any) ([]any, error) {
	split, _ := cfg["split"].(string)
	if split == "" {
		split = "json"
	}
	if list, ok := v.([]any); ok && split == "json" {
		return list, nil
	}
	text, err := transform.Text(v)
	if err != nil {
		return nil, err
	}
	var parts []string
	switch split {
	case "json":
		var list []any
		if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &list); err != nil {
			return nil, fmt.Errorf("config.items: not a JSON array (%v); set split to lines, delimiter or regex for text", err)
		}
		return list, nil
	case "lines":
		parts = strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	case "delimiter":
		d, _ := cfg["delimiter"].(string)
		parts = strings.Split(text, d)
	case "regex":
		pat, _ := cfg["pattern"].(string)
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("config.pattern: %w", err)
		}
		parts = re.Split(text, -1)
	default:
		return nil, fmt.Errorf("config.split: unknown split %q", split)
	}
	var out []any
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

// runParallel runs every branch at once and merges their outputs:
// concatenate (text joined by separator), by_branch (an object keyed by
// each branch's first node) or first (the first branch to finish; the
// others are canceled).
func (r *run) runParallel(ctx context.Context, sr *scopeRun, m int, key string, in any) (Result, map[int]bool, error) {
	pn := &r.p.nodes[m]
	mode, _ := pn.node.Config["merge"].(string)
	if mode == "" {
		mode = "concatenate"
	}
	sep := "\n\n"
	if s, ok := pn.node.Config["separator"].(string); ok {
		sep = s
	}
	n := len(pn.branches)
	results := make([]scopeResult, n)
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first = -1
	)
	// Branches run in goroutines, except the last, which runs here.
	for i, b := range pn.branches {
		run := func(i int, b *scope) {
			res := r.runScope(bctx, b, sr.prefix, in, sr.vars, sr)
			results[i] = res
			if res.err == nil && mode == "first" {
				once.Do(func() { first = i; cancel() })
			}
		}
		if i == n-1 {
			run(i, b)
			continue
		}
		wg.Add(1)
		go func(i int, b *scope) { defer wg.Done(); run(i, b) }(i, b)
	}
	wg.Wait()
	exits := map[int]bool{}
	switch mode {
	case "first":
		if first < 0 {
			for _, res := range results {
				if res.err != nil {
					return Result{}, nil, res.err
				}
			}
			return Result{}, nil, fmt.Errorf("no branch finished")
		}
		for ei := range results[first].exits {
			exits[ei] = true
		}
		return Result{Output: results[first].output}, exits, nil
	}
	for _, res := range results {
		if res.err != nil {
			return Result{}, nil, res.err
		}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, nil, err
	}
	for _, res := range results {
		for ei := range res.exits {
			exits[ei] = true
		}
	}
	if mode == "by_branch" {
		obj := make(map[string]any, n)
		for i, b := range pn.branches {
			obj[branchName(r.p, b)] = results[i].output
		}
		return Result{Output: obj}, exits, nil
	}
	outs := make([]any, 0, n)
	for _, res := range results {
		if res.output != nil {
			outs = append(outs, res.output)
		}
	}
	if len(outs) == 1 {
		s, _ := transform.Text(outs[0])
		return Result{Output: s}, exits, nil
	}
	return Result{Output: merge(outs, sep)}, exits, nil
}

// branchName names a branch by its first node.
func branchName(p *Plan, b *scope) string {
	if len(b.entry) > 0 {
		return p.edges[b.entry[0]].Target
	}
	return strconv.Itoa(b.branch)
}

// intConfig reads an integer config key (JSON numbers are float64).
func intConfig(cfg map[string]any, key string, def int) int {
	switch v := cfg[key].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	return def
}

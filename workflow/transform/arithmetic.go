package transform

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/agentcraftlab/agentcraft/tool"
)

// runArithmetic evaluates "expression" with the calculator tool's
// evaluator, so that both share one whitelist (numbers, + - * / % ^ **,
// parentheses, pi, e and the math functions; no strings, comparisons,
// loops or expr built-ins) and one wording of errors.
//
// The calculator knows no names, so references are replaced by their
// numeric values in the parsed tree first: input, vars.<name>,
// nodes.<id>.output (also nodes["my-id"].output) and fields below them.
// The tree is then printed and handed to tool.Evaluate, which parses and
// checks it again; the substitution therefore cannot widen what an
// expression may do. A referenced value must be a number or a string
// holding one ("12.50"); anything else is an error naming the reference.
func runArithmetic(_ context.Context, _ *Runner, cfg map[string]any, in any, data Data) (any, error) {
	src, err := str(cfg, "expression", true)
	if err != nil {
		return nil, err
	}
	tree, err := parser.Parse(src)
	if err != nil {
		// tool.Evaluate words the syntax error as the calculator does.
		if _, evalErr := tool.Evaluate(src); evalErr != nil {
			err = evalErr
		}
		return nil, &ConfigError{Key: "expression", Message: err.Error()}
	}
	data.Input = in
	n, err := substitute(&tree.Node, data)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		src = tree.Node.String()
	}
	v, err := tool.Evaluate(src)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", src, err)
	}
	return v, nil
}

// substitute replaces references under *node by number nodes and returns
// how many it replaced. Nodes it does not know are left for tool.Evaluate
// to refuse.
func substitute(node *ast.Node, data Data) (int, error) {
	switch x := (*node).(type) {
	case *ast.IdentifierNode, *ast.MemberNode:
		ref, ok := reference(x)
		if !ok {
			return 0, nil // pi, e, a function name or something refused later
		}
		v, err := lookup(ref, data)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", ref, err)
		}
		f, err := number(v)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", ref, err)
		}
		if f < 0 {
			*node = &ast.UnaryNode{Operator: "-", Node: &ast.FloatNode{Value: -f}}
		} else {
			*node = &ast.FloatNode{Value: f}
		}
		return 1, nil
	case *ast.UnaryNode:
		return substitute(&x.Node, data)
	case *ast.BinaryNode:
		a, err := substitute(&x.Left, data)
		if err != nil {
			return 0, err
		}
		b, err := substitute(&x.Right, data)
		return a + b, err
	case *ast.CallNode:
		return substituteAll(x.Arguments, data)
	case *ast.BuiltinNode:
		return substituteAll(x.Arguments, data)
	}
	return 0, nil
}

func substituteAll(args []ast.Node, data Data) (int, error) {
	total := 0
	for i := range args {
		n, err := substitute(&args[i], data)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// reference turns input, vars.x or nodes.id.output(.field…) into the
// template reference syntax that lookup reads.
func reference(n ast.Node) (string, bool) {
	switch x := n.(type) {
	case *ast.IdentifierNode:
		switch x.Value {
		case "input", "vars", "nodes":
			return x.Value, true
		}
		return "", false
	case *ast.MemberNode:
		if x.Optional || x.Method {
			return "", false
		}
		base, ok := reference(x.Node)
		if !ok {
			return "", false
		}
		switch p := x.Property.(type) {
		case *ast.StringNode:
			if base == "vars" || base == "nodes" {
				// Names and ids are plain (letters, digits, '_', '-').
				return base + "." + p.Value, p.Value != "" && !strings.ContainsAny(p.Value, ".[")
			}
			if p.Value == "" || strings.ContainsAny(p.Value, ".[]\"' ") {
				return base + "[" + strconv.Quote(p.Value) + "]", !strings.Contains(p.Value, `"`)
			}
			return base + "." + p.Value, true
		case *ast.IntegerNode:
			return base + "[" + strconv.Itoa(p.Value) + "]", true
		}
	}
	return "", false
}

// number converts a referenced value to a finite float64.
func number(v any) (float64, error) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case json.Number:
		g, err := x.Float64()
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", x)
		}
		f = g
	case string:
		g, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", truncate(x, 40))
		}
		f = g
	default:
		return 0, fmt.Errorf("is %s, not a number", kindOf(v))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%v is not a finite number", f)
	}
	return f, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

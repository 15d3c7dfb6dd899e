package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
)

// MaxExpressionLen bounds the calculator's input, in bytes.
const MaxExpressionLen = 1000

// Calculator is the built-in "calculator" tool: it evaluates an arithmetic
// expression and returns the number. The zero value is ready to use.
//
// Expressions are parsed and run by expr-lang/expr, but nothing is compiled
// until every node of the parsed tree passed a whitelist: number literals,
// unary + and -, binary + - * / % ^ ** (^ and ** both mean power),
// parentheses, the constants pi and e, and calls of the functions in
// calcFuncs. Names, strings, arrays, maps, comparisons, member access,
// ranges, variables, closures and expr's own built-ins are refused, so an
// expression can neither reach the process nor allocate or loop without
// bound. All arithmetic is in float64; % is the floating-point remainder.
type Calculator struct{}

var _ Tool = Calculator{}

// calcFunc is one function an expression may call.
type calcFunc struct {
	arity int // number of arguments; -1 means one or more
	fn    func(args []float64) float64
}

// calcFuncs are the functions an expression may call, beyond which it
// reaches nothing.
var calcFuncs = map[string]calcFunc{
	"sqrt":  {1, func(a []float64) float64 { return math.Sqrt(a[0]) }},
	"pow":   {2, func(a []float64) float64 { return math.Pow(a[0], a[1]) }},
	"abs":   {1, func(a []float64) float64 { return math.Abs(a[0]) }},
	"floor": {1, func(a []float64) float64 { return math.Floor(a[0]) }},
	"ceil":  {1, func(a []float64) float64 { return math.Ceil(a[0]) }},
	"round": {1, func(a []float64) float64 { return math.Round(a[0]) }},
	"min":   {-1, func(a []float64) float64 { return foldFloats(a, math.Min) }},
	"max":   {-1, func(a []float64) float64 { return foldFloats(a, math.Max) }},
	"log":   {1, func(a []float64) float64 { return math.Log(a[0]) }},
	"log10": {1, func(a []float64) float64 { return math.Log10(a[0]) }},
	"exp":   {1, func(a []float64) float64 { return math.Exp(a[0]) }},
	"sin":   {1, func(a []float64) float64 { return math.Sin(a[0]) }},
	"cos":   {1, func(a []float64) float64 { return math.Cos(a[0]) }},
	"tan":   {1, func(a []float64) float64 { return math.Tan(a[0]) }},
}

// calcConsts are the names an expression may use as values.
var calcConsts = map[string]float64{"pi": math.Pi, "e": math.E}

// Division and remainder run as these functions, so that a zero divisor is
// reported as such instead of surfacing as Inf or NaN. Their names start
// with '_' and are not in calcFuncs, so expressions cannot call them.
const (
	calcDiv = "_div"
	calcMod = "_mod"
)

var errDivByZero = errors.New("division by zero")

func foldFloats(a []float64, f func(x, y float64) float64) float64 {
	r := a[0]
	for _, x := range a[1:] {
		r = f(r, x)
	}
	return r
}

// calcOptions configure expr for the calculator: no built-ins, only our
// functions, and the rewriting patch.
var calcOptions = func() []expr.Option {
	opts := []expr.Option{expr.DisableAllBuiltins(), expr.Patch(calcRewriter{})}
	unary := new(func(float64) float64)
	binary := new(func(float64, float64) float64)
	variadic := new(func(float64, ...float64) float64)
	for name, f := range calcFuncs {
		typ := any(unary)
		switch f.arity {
		case 2:
			typ = binary
		case -1:
			typ = variadic
		}
		opts = append(opts, expr.Function(name, func(params ...any) (any, error) {
			args, err := floatArgs(params)
			if err != nil {
				return nil, err
			}
			return f.fn(args), nil
		}, typ))
	}
	opts = append(opts,
		expr.Function(calcDiv, func(params ...any) (any, error) {
			a, err := floatArgs(params)
			if err != nil {
				return nil, err
			}
			if a[1] == 0 {
				return nil, errDivByZero
			}
			return a[0] / a[1], nil
		}, binary),
		expr.Function(calcMod, func(params ...any) (any, error) {
			a, err := floatArgs(params)
			if err != nil {
				return nil, err
			}
			if a[1] == 0 {
				return nil, errDivByZero
			}
			return math.Mod(a[0], a[1]), nil
		}, binary),
	)
	return opts
}()

func floatArgs(params []any) ([]float64, error) {
	out := make([]float64, len(params))
	for i, p := range params {
		switch v := p.(type) {
		case float64:
			out[i] = v
		case int:
			out[i] = float64(v)
		default:
			return nil, fmt.Errorf("argument %d is not a number", i+1)
		}
	}
	return out, nil
}

// Name implements Tool.
func (Calculator) Name() string { return "calculator" }

// Description implements Tool.
func (Calculator) Description() string {
	return "Evaluate an arithmetic expression exactly instead of computing it in your head. " +
		"Supports numbers, + - * / % (remainder), ^ or ** (power), parentheses, the constants pi and e, " +
		"and the functions " + strings.Join(calcFuncNames(), ", ") + ". Angles are in radians; log is the natural logarithm."
}

func calcFuncNames() []string {
	names := make([]string, 0, len(calcFuncs))
	for n := range calcFuncs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

var calculatorArgs = mustArgSchema("calculator",
	`{"type":"object","properties":{"expression":{"type":"string","description":"The expression, e.g. \"sqrt(2) * (3 + 4)^2\"."}},"required":["expression"],"additionalProperties":false}`,
	`{"expression": "2 * (3 + 4)"}`)

// Schema implements Tool.
func (Calculator) Schema() json.RawMessage { return calculatorArgs.raw }

// Capability implements Tool.
func (Calculator) Capability() Capability { return CapabilityLow }

// Call implements Tool. Every failure is an error Result.
func (Calculator) Call(_ context.Context, args json.RawMessage) (Result, error) {
	var in struct {
		Expression string `json:"expression"`
	}
	if res, ok := calculatorArgs.parse(args, &in); !ok {
		return res, nil
	}
	v, err := Evaluate(in.Expression)
	if err != nil {
		return Result{Content: err.Error(), IsError: true}, nil
	}
	return Result{Content: formatNumber(v)}, nil
}

// Evaluate computes an arithmetic expression as the calculator tool does.
// Its errors are worded for a model to read.
func Evaluate(expression string) (float64, error) {
	if len(expression) > MaxExpressionLen {
		return 0, fmt.Errorf("expression is too long (%d characters, at most %d)", len(expression), MaxExpressionLen)
	}
	if strings.TrimSpace(expression) == "" {
		return 0, errors.New("expression is empty")
	}
	// Check the tree before expr compiles anything: the compiler's
	// optimizer would otherwise fold constant ranges such as 1..1e9 into
	// arrays before a later check could refuse them.
	tree, err := parser.Parse(expression)
	if err != nil {
		return 0, fmt.Errorf("invalid expression: %s", exprMessage(err))
	}
	if err := checkCalcNode(tree.Node, false); err != nil {
		return 0, fmt.Errorf("invalid expression: %w", err)
	}
	prog, err := expr.Compile(expression, calcOptions...)
	if err != nil {
		return 0, fmt.Errorf("invalid expression: %s", exprMessage(err))
	}
	out, err := expr.Run(prog, nil)
	if err != nil {
		if errors.Is(err, errDivByZero) {
			return 0, errors.New("division by zero")
		}
		return 0, fmt.Errorf("cannot evaluate: %s", exprMessage(err))
	}
	var v float64
	switch x := out.(type) {
	case float64:
		v = x
	case int:
		v = float64(x)
	default:
		return 0, fmt.Errorf("expression does not evaluate to a number")
	}
	switch {
	case math.IsNaN(v):
		return 0, errors.New("the result is undefined (for example the square root or logarithm of a negative number)")
	case math.IsInf(v, 0):
		return 0, errors.New("the result is infinite or too large to represent")
	}
	return v, nil
}

// exprMessage returns expr's message without the multi-line source snippet.
func exprMessage(err error) string {
	var fe *file.Error
	if errors.As(err, &fe) {
		if fe.Column > 0 || fe.Line > 1 {
			return fmt.Sprintf("%s (at character %d)", fe.Message, fe.Column+1)
		}
		return fe.Message
	}
	return err.Error()
}

// checkCalcNode accepts only the arithmetic subset. callee is true when n is
// the function part of a call.
func checkCalcNode(n ast.Node, callee bool) error {
	switch n := n.(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		return nil
	case *ast.IdentifierNode:
		if callee {
			if _, ok := calcFuncs[n.Value]; ok {
				return nil
			}
			return fmt.Errorf("unknown function %q (available: %s)", n.Value, strings.Join(calcFuncNames(), ", "))
		}
		if _, ok := calcConsts[n.Value]; ok {
			return nil
		}
		if _, ok := calcFuncs[n.Value]; ok {
			return fmt.Errorf("function %s needs arguments in parentheses, e.g. %s(2)", n.Value, n.Value)
		}
		return fmt.Errorf("unknown name %q: only numbers, pi and e are allowed", n.Value)
	case *ast.UnaryNode:
		if n.Operator != "-" && n.Operator != "+" {
			return fmt.Errorf("operator %q is not allowed", n.Operator)
		}
		return checkCalcNode(n.Node, false)
	case *ast.BinaryNode:
		switch n.Operator {
		case "+", "-", "*", "/", "%", "^", "**":
		default:
			return fmt.Errorf("operator %q is not allowed: use + - * / %% ^ **", n.Operator)
		}
		if err := checkCalcNode(n.Left, false); err != nil {
			return err
		}
		return checkCalcNode(n.Right, false)
	case *ast.CallNode:
		if err := checkCalcNode(n.Callee, true); err != nil {
			return err
		}
		return checkCalcArgs(n.Callee.(*ast.IdentifierNode).Value, n.Arguments)
	case *ast.BuiltinNode:
		// Parsed with expr's default configuration, abs, min, max, round,
		// floor and ceil appear as built-ins; they compile to our functions.
		if _, ok := calcFuncs[n.Name]; !ok {
			return fmt.Errorf("unknown function %q (available: %s)", n.Name, strings.Join(calcFuncNames(), ", "))
		}
		return checkCalcArgs(n.Name, n.Arguments)
	}
	return fmt.Errorf("%s is not allowed: only numbers, operators, parentheses and math functions", describeNode(n))
}

func checkCalcArgs(name string, args []ast.Node) error {
	f := calcFuncs[name]
	switch {
	case f.arity == -1 && len(args) == 0:
		return fmt.Errorf("%s needs at least one argument", name)
	case f.arity >= 0 && len(args) != f.arity:
		return fmt.Errorf("%s takes %d argument(s), got %d", name, f.arity, len(args))
	}
	for _, a := range args {
		if err := checkCalcNode(a, false); err != nil {
			return err
		}
	}
	return nil
}

func describeNode(n ast.Node) string {
	switch n.(type) {
	case *ast.StringNode, *ast.BytesNode:
		return "a string"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.NilNode:
		return "nil"
	case *ast.ArrayNode:
		return "an array"
	case *ast.MapNode:
		return "a map"
	case *ast.MemberNode, *ast.ChainNode:
		return "member access"
	case *ast.ConditionalNode:
		return "a conditional"
	case *ast.VariableDeclaratorNode:
		return "a variable"
	case *ast.SequenceNode:
		return "a sequence of expressions"
	}
	return "this construct"
}

// calcRewriter runs inside expr.Compile, after checkCalcNode accepted the
// tree: it turns integers into floats (so that nothing overflows int and %
// applies to fractions), the constants into numbers, and / and % into calls
// that report division by zero.
type calcRewriter struct{}

func (calcRewriter) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.IntegerNode:
		ast.Patch(node, &ast.FloatNode{Value: float64(n.Value)})
	case *ast.IdentifierNode:
		if v, ok := calcConsts[n.Value]; ok {
			ast.Patch(node, &ast.FloatNode{Value: v})
		}
	case *ast.BinaryNode:
		name := ""
		switch n.Operator {
		case "/":
			name = calcDiv
		case "%":
			name = calcMod
		default:
			return
		}
		ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: name}, Arguments: []ast.Node{n.Left, n.Right}})
	}
}

// formatNumber writes v as the calculator reports it: integers below 1e15
// in full, other numbers with 15 significant digits, which hides float
// noise such as 0.1+0.2 = 0.30000000000000004.
func formatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		if v == 0 {
			return "0" // not "-0"
		}
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 15, 64)
}

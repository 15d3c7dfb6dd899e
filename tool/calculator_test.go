package tool

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func callCalc(t *testing.T, expression string) Result {
	t.Helper()
	args, err := json.Marshal(map[string]string{"expression": expression})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Calculator{}.Call(context.Background(), args)
	if err != nil {
		t.Fatalf("Call(%q) returned Go error %v; failures must be error results", expression, err)
	}
	return res
}

func TestCalculator(t *testing.T) {
	tests := []struct {
		expr string
		want string
	}{
		{"1 + 2", "3"},
		{"2 * (3 + 4)", "14"},
		{"7 / 2", "3.5"},
		{"7 % 3", "1"},
		{"7.5 % 2", "1.5"},
		{"2 ^ 10", "1024"},
		{"2 ** 10", "1024"},
		{"2 ^ 3 ^ 2", "512"}, // right associative
		{"-2 ^ 2", "-4"},     // power binds tighter than unary minus
		{"-(3 - 5)", "2"},
		{"+4", "4"},
		{"sqrt(16)", "4"},
		{"pow(2, 0.5) * pow(2, 0.5)", "2"},
		{"abs(-3.25)", "3.25"},
		{"floor(2.7) + ceil(2.2)", "5"},
		{"round(2.5)", "3"},
		{"min(3, 1, 2)", "1"},
		{"max(3, 1, 2)", "3"},
		{"max(4)", "4"},
		{"log(e)", "1"},
		{"log10(1000)", "3"},
		{"exp(0)", "1"},
		{"sin(pi / 2)", "1"},
		{"cos(0)", "1"},
		{"round(tan(pi / 4))", "1"},
		{"pi", "3.14159265358979"},
		{"0.1 + 0.2", "0.3"},
		{"1 / 3", "0.333333333333333"},
		{"9223372036854775807 + 1", "9.22337203685478e+18"}, // no int overflow
		{"1e3 * 2", "2000"},
		{"10 / 4 * 2", "5"},
		{"  (( 1 ))  ", "1"},
	}
	for _, tt := range tests {
		res := callCalc(t, tt.expr)
		if res.IsError || res.Content != tt.want {
			t.Errorf("calculator(%q) = %+v, want %q", tt.expr, res, tt.want)
		}
	}
}

func TestCalculatorRejects(t *testing.T) {
	tests := []struct {
		expr string
		want string // substring of the error message
	}{
		{"1 / 0", "division by zero"},
		{"5 % 0", "division by zero"},
		{"1 / (2 - 2)", "division by zero"},
		{"sqrt(-1)", "undefined"},
		{"log(0)", "infinite"},
		{"10 ^ 400", "infinite"},
		{"", "empty"},
		{"1 +", "invalid expression"},
		{"(1", "invalid expression"},
		{"foo", `unknown name "foo"`},
		{"foo(1)", `unknown function "foo"`},
		{"sqrt", "needs arguments"},
		{"sqrt(1, 2)", "takes 1 argument"},
		{"min()", "at least one"},
		{"_div(1, 0)", `unknown function "_div"`},
		{"len([1,2])", `unknown function "len"`},
		{"now()", `unknown function "now"`},
		{"env()", `unknown function "env"`},
		{`"abc"`, "a string"},
		{"1 == 1", `operator "=="`},
		{"1 < 2 ? 1 : 2", "not allowed"},
		{"[1, 2]", "an array"},
		{"{a: 1}", "a map"},
		{"1..1000000000", `operator ".."`},
		{"let x = 1; x", "a variable"},
		{"1; 2", "not allowed"},
		{"!1", `operator "!"`},
		{"true", "a boolean"},
		{"nil", "nil"},
		{"sqrt.foo", "not allowed"},
		{"map([1], # * 2)", `unknown function "map"`},
		{strings.Repeat("1+", 600) + "1", "too long"},
	}
	for _, tt := range tests {
		res := callCalc(t, tt.expr)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("calculator(%q) = %+v, want error containing %q", tt.expr, res, tt.want)
		}
	}
}

func TestCalculatorBadArguments(t *testing.T) {
	for _, args := range []string{``, `{`, `[]`, `{}`, `{"expression": 12}`} {
		res, err := Calculator{}.Call(context.Background(), json.RawMessage(args))
		if err != nil {
			t.Fatalf("Call(%s) returned Go error %v", args, err)
		}
		if !res.IsError || !strings.Contains(res.Content, "expression") {
			t.Errorf("Call(%s) = %+v, want an error result mentioning expression", args, res)
		}
	}
}

func TestCalculatorLengthLimit(t *testing.T) {
	ok := strings.Repeat("1+", (MaxExpressionLen-1)/2) + "1"
	if len(ok) > MaxExpressionLen {
		t.Fatalf("test bug: %d characters", len(ok))
	}
	if res := callCalc(t, ok); res.IsError {
		t.Errorf("expression of %d characters refused: %s", len(ok), res.Content)
	}
}

func TestFormatNumber(t *testing.T) {
	if got := formatNumber(math.Copysign(0, -1)); got != "0" {
		t.Errorf("formatNumber(-0) = %q, want 0", got)
	}
	tests := map[float64]string{0: "0", 42: "42", -7: "-7", 1e15: "1e+15", 2.5e-7: "2.5e-07", 123456789.125: "123456789.125"}
	for v, want := range tests {
		if got := formatNumber(v); got != want {
			t.Errorf("formatNumber(%v) = %q, want %q", v, got, want)
		}
	}
}

// FuzzCalculator checks that no input panics, hangs, or yields a success
// that is not a finite number.
func FuzzCalculator(f *testing.F) {
	for _, s := range []string{"1+2", "2^3^4", "sqrt(-1)", "1/0", "max(1,2,3)", "((((1))))", "1..9", "\"x\"", "let a=1;a", "pi*e", "-+-1", "1e308*10", "7%0.5", "9223372036854775807*9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		done := make(chan Result, 1)
		go func() { done <- callCalc(t, s) }()
		select {
		case res := <-done:
			if res.IsError {
				if res.Content == "" {
					t.Errorf("calculator(%q): empty error message", s)
				}
				return
			}
			if _, err := strconv.ParseFloat(res.Content, 64); err != nil {
				t.Errorf("calculator(%q) = %q, not a number", s, res.Content)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("calculator(%q) did not finish within 2s", s)
		}
	})
}

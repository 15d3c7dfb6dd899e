package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentcraftlab/agentcraft/workflow"
)

// codeModes maps each code mode to the config key it cannot do without.
var codeModes = map[string]string{
	"template":      "template",
	"json_path":     "path",
	"regex_extract": "pattern",
	"regex_replace": "pattern",
	"split":         "separator",
	"join":          "separator",
	"json_parse":    "",
	"json_format":   "",
	"text":          "operation",
	"arithmetic":    "expression",
	"javascript":    "script",
	"starlark":      "script",
}

var codeModeNames = []string{"template", "json_path", "regex_extract", "regex_replace", "split", "join", "json_parse", "json_format", "text", "arithmetic", "javascript", "starlark"}

// code transforms data deterministically, or with a script (JavaScript or
// Starlark) in a sandbox.
func code() workflow.Kind {
	return workflow.Kind{
		Type:               "code",
		Title:              "Code",
		Category:           workflow.CategoryData,
		Rules:              codeRules(),
		Example:            map[string]any{"mode": "text", "operation": "trim"},
		Doc:                "Transforms data: nine deterministic modes, or JavaScript or Starlark (Python) in a sandbox.",
		Execute:            execCode,
		IsExecutable:       true,
		RequiresImperative: true,
		Config: []workflow.ConfigKey{
			{Name: "mode", Type: workflow.TypeString, Required: true, Enum: codeModeNames, Doc: "the transform to apply"},
			inputKey("the value to transform"),
			{Name: "template", Type: workflow.TypeTemplate, Doc: "output template (template mode)"},
			{Name: "path", Type: workflow.TypeString, Doc: "JSON path to extract, such as $.items[0].title (json_path mode)"},
			{Name: "pattern", Type: workflow.TypeRegexp, Doc: "RE2 regular expression (regex modes)"},
			{Name: "replacement", Type: workflow.TypeString, Default: "", Doc: "replacement with $1 groups (regex_replace mode)"},
			{Name: "separator", Type: workflow.TypeString, Doc: "separator (split and join modes)"},
			{Name: "operation", Type: workflow.TypeString, Enum: []string{"trim", "upper", "lower", "title"}, Doc: "text operation (text mode)"},
			{Name: "expression", Type: workflow.TypeString, Doc: "arithmetic such as input * 1.1 (arithmetic mode)"},
			{Name: "script", Type: workflow.TypeString, Doc: "JavaScript whose last value is the output (javascript mode), or Starlark that assigns the output to result (starlark mode)"},
			{Name: "timeout", Type: workflow.TypeDuration, Default: "5s", Doc: "time limit of a script (javascript and starlark modes)"},
		},
		Check: func(cfg map[string]any, at string) []workflow.Problem {
			mode := cfg["mode"].(string)
			need := codeModes[mode]
			if need == "" {
				return nil
			}
			if _, ok := cfg[need]; !ok {
				return []workflow.Problem{{Path: at + "." + need, Message: fmt.Sprintf("mode %s needs %q", mode, need), Hint: fmt.Sprintf("add %q, or choose another mode (%s)", need, strings.Join(codeModeNames, ", "))}}
			}
			return nil
		},
	}
}

// execCode runs the code node's transform.
func execCode(ctx context.Context, x *workflow.Exec) (workflow.Result, error) {
	out, err := x.Services.Transform.Run(ctx, x.Node.Config, x.Data)
	if err != nil {
		return workflow.Result{}, err
	}
	return workflow.Result{Output: out}, nil
}

// codeRules says in words which key each mode needs, from codeModes.
func codeRules() []string {
	var rules []string
	for _, m := range codeModeNames {
		if need := codeModes[m]; need != "" {
			rules = append(rules, fmt.Sprintf("mode %s needs %s", m, need))
		}
	}
	return rules
}

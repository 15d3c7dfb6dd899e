package contract_test

import (
	"fmt"

	"github.com/agentcraftlab/agentcraft/workflow/contract"
)

// A planning agent wrapped its answer in a "handoff" object and sent the
// word count as a string; the contract repairs both and says so.
func ExampleCheck() {
	s, err := contract.Compile(map[string]any{
		"type":     "object",
		"required": []any{"topic", "audience"},
		"properties": map[string]any{
			"topic":      map[string]any{"type": "string"},
			"audience":   map[string]any{"type": "string"},
			"word_count": map[string]any{"type": "integer"},
		},
	})
	if err != nil {
		panic(err)
	}
	out := "Here is the plan:\n```json\n" +
		`{"handoff": {"topic": "Go 1.26", "audience": "developers", "word_count": "900"}}` +
		"\n```"
	res := contract.Check(out, s, true, nil)
	fmt.Println(res.Contract.Status)
	fmt.Println(res.Contract.MovedFields)
	fmt.Println(res.Contract.CoercedFields)
	for _, n := range res.Contract.Notes {
		fmt.Println(n)
	}
	// Output:
	// normalized
	// [handoff.audience handoff.topic handoff.word_count]
	// [word_count]
	// moved the fields of wrapper object "handoff" to the top level (handoff.audience, handoff.topic, handoff.word_count): the schema requires topic, audience at the top level (schema rule #/required)
	// converted string "900" at word_count to a number (schema rule #/properties/word_count/type = integer)
}

// A writer agent echoed its template instead of writing posts.
func ExampleOutputCheck() {
	res := contract.OutputCheck(`{"title": "Go 1.26", "x_posts": ["x_posts"]}`, contract.OutputRules{
		Required: []string{"title", "x_posts"},
		Types:    map[string]string{"x_posts": "array"},
	})
	fmt.Println(res.OK)
	for _, p := range res.Problems {
		fmt.Printf("%s: %s\n", p.Field, p.Message)
	}
	// Output:
	// false
	// x_posts: every item is the field name "x_posts": the template was echoed instead of filled
}

// Plain text start input is kept under "input" next to the defaults.
func ExampleNormalize() {
	res := contract.Normalize("Write about Go 1.26", map[string]any{"tone": "neutral"})
	fmt.Println(res.Normalized)
	fmt.Println(res.DefaultsApplied)
	// Output:
	// map[input:Write about Go 1.26 tone:neutral]
	// [tone]
}

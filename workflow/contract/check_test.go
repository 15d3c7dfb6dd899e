package contract

import (
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// planSchema is the planning agent's contract in the content pipeline that
// failed silently: the writer needs topic, audience and outline.
const planSchema = `{
	"type": "object",
	"title": "Plan",
	"required": ["topic", "audience", "outline"],
	"properties": {
		"topic":    {"type": "string", "minLength": 1},
		"audience": {"type": "string"},
		"outline":  {"type": "array", "items": {"type": "string"}},
		"meta":     {"type": "object"}
	}
}`

// postSchema exercises type repairs and defaults.
const postSchema = `{
	"type": "object",
	"required": ["title"],
	"properties": {
		"title":      {"type": "string"},
		"word_count": {"type": "integer", "default": 800},
		"score":      {"type": "number"},
		"draft":      {"type": "boolean"},
		"tone":       {"type": "string", "default": "neutral", "enum": ["neutral", "playful"]},
		"tags":       {"type": "array", "items": {"type": "string"}},
		"counts":     {"type": "array", "items": {"type": "integer"}},
		"sections":   {"type": "array", "items": {"$ref": "#/$defs/section"}},
		"author":     {"type": "object", "required": ["name"], "properties": {
			"name": {"type": "string"},
			"lang": {"type": "string", "default": "en"}
		}}
	},
	"$defs": {
		"section": {"type": "object", "required": ["heading"], "properties": {
			"heading": {"type": "string"},
			"words":   {"type": "integer"}
		}}
	}
}`

func TestCheck(t *testing.T) {
	type want struct {
		status     Status
		normalized string // JSON; "" means nil
		report     Report // compared without Status, SchemaValid... and Notes
		notes      [][]string
	}
	tests := []struct {
		name   string
		schema string
		raw    any
		repair bool
		opts   *Options
		want   want
	}{
		{
			name:   "valid object is ok",
			schema: planSchema,
			raw:    obj(t, `{"topic":"Go","audience":"devs","outline":["a","b"]}`),
			repair: true,
			want:   want{status: StatusOK, normalized: `{"topic":"Go","audience":"devs","outline":["a","b"]}`},
		},
		{
			name:   "JSON text is parsed",
			schema: planSchema,
			raw:    ` {"topic":"Go","audience":"devs","outline":[]} `,
			repair: true,
			want:   want{status: StatusOK, normalized: `{"topic":"Go","audience":"devs","outline":[]}`},
		},
		{
			name:   "prose with a json fence is extracted",
			schema: planSchema,
			raw: "Here is the plan you asked for:\n\n```json\n" +
				`{"topic":"Go","audience":"devs","outline":["intro"]}` + "\n```\nLet me know {if} you need more.",
			repair: true,
			want:   want{status: StatusOK, normalized: `{"topic":"Go","audience":"devs","outline":["intro"]}`},
		},
		{
			name:   "json fence wins over an earlier plain fence",
			schema: planSchema,
			raw: "Example:\n```\n{\"topic\":\"x\"}\n```\nAnswer:\n```JSON\n" +
				`{"topic":"Go","audience":"devs","outline":["intro"]}` + "\n```",
			repair: true,
			want:   want{status: StatusOK, normalized: `{"topic":"Go","audience":"devs","outline":["intro"]}`},
		},
		{
			name:   "plain fence is extracted",
			schema: planSchema,
			raw:    "Sure.\n```\n" + `{"topic":"Go","audience":"devs","outline":["intro"]}` + "\n```",
			repair: true,
			want:   want{status: StatusOK, normalized: `{"topic":"Go","audience":"devs","outline":["intro"]}`},
		},
		{
			name:   "balanced object in prose is extracted, skipping a citation array and a broken brace",
			schema: planSchema,
			raw:    `As noted in [1], {not json}. Result: {"topic":"Go {1.26}","audience":"devs","outline":["a]"]} Thanks!`,
			repair: true,
			want:   want{status: StatusOK, normalized: `{"topic":"Go {1.26}","audience":"devs","outline":["a]"]}`},
		},
		{
			name:   "prose without JSON fails",
			schema: planSchema,
			raw:    "I could not complete the plan, sorry.",
			repair: true,
			want: want{status: StatusFailed, notes: [][]string{
				{"no JSON value", "```json"},
			}},
		},
		{
			name:   "pipeline: handoff-only planning output fails naming every missing field",
			schema: planSchema,
			raw:    obj(t, `{"handoff":{"summary":"Plan a post about Go","next":"writer"}}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{MissingRequired: []string{"audience", "outline", "topic"}},
				notes: [][]string{
					{"missing required field audience", "#/required", "never invent"},
					{"missing required field outline", "#/required"},
					{"missing required field topic", "#/required"},
				},
			},
		},
		{
			name:   "pipeline: handoff wrapping every field is unwrapped",
			schema: planSchema,
			raw:    obj(t, `{"handoff":{"topic":"Go","audience":"devs","outline":["a"],"note":"x"}}`),
			repair: true,
			want: want{
				status:     StatusNormalized,
				normalized: `{"topic":"Go","audience":"devs","outline":["a"],"note":"x"}`,
				report:     Report{MovedFields: []string{"handoff.audience", "handoff.note", "handoff.outline", "handoff.topic"}},
				notes:      [][]string{{`wrapper object "handoff"`, "#/required"}},
			},
		},
		{
			name:   "wrapper named data is unwrapped next to siblings",
			schema: planSchema,
			raw:    obj(t, `{"data":{"topic":"Go","audience":"devs","outline":["a"]},"model":"m1"}`),
			repair: true,
			want: want{
				status:     StatusNormalized,
				normalized: `{"topic":"Go","audience":"devs","outline":["a"],"model":"m1"}`,
				report:     Report{MovedFields: []string{"data.audience", "data.outline", "data.topic"}},
			},
		},
		{
			name:   "wrapper named after the schema title is unwrapped",
			schema: planSchema,
			raw:    obj(t, `{"plan":{"topic":"Go","audience":"devs","outline":["a"]},"status":"done"}`),
			repair: true,
			want: want{
				status:     StatusNormalized,
				normalized: `{"topic":"Go","audience":"devs","outline":["a"],"status":"done"}`,
				report:     Report{MovedFields: []string{"plan.audience", "plan.outline", "plan.topic"}},
			},
		},
		{
			name: "wrapper named after a multi-word title in snake case is unwrapped",
			schema: `{"type":"object","title":"Content Plan","required":["topic"],
				"properties":{"topic":{"type":"string"}}}`,
			raw:    obj(t, `{"content_plan":{"topic":"Go"},"status":"done"}`),
			repair: true,
			want: want{
				status:     StatusNormalized,
				normalized: `{"topic":"Go","status":"done"}`,
				report:     Report{MovedFields: []string{"content_plan.topic"}},
			},
		},
		{
			name:   "bytes are read as text",
			schema: planSchema,
			raw:    []byte("```json\n{\"topic\":\"Go\",\"audience\":\"devs\",\"outline\":[]}\n```"),
			repair: true,
			want:   want{status: StatusOK, normalized: `{"topic":"Go","audience":"devs","outline":[]}`},
		},
		{
			name:   "required fields one level down are lifted field by field",
			schema: planSchema,
			raw:    obj(t, `{"handoff":{"topic":"Go","audience":"devs"},"extra":{"x":1},"outline":["a"]}`),
			repair: true,
			want: want{
				status:     StatusNormalized,
				normalized: `{"topic":"Go","audience":"devs","outline":["a"],"extra":{"x":1}}`,
				report:     Report{MovedFields: []string{"handoff.audience", "handoff.topic"}},
				notes:      [][]string{{"moved handoff.topic to topic"}},
			},
		},
		{
			name:   "partial wrapper: found fields move, the rest fail",
			schema: planSchema,
			raw:    obj(t, `{"handoff":{"topic":"Go","summary":"s"}}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{
					MissingRequired: []string{"audience", "outline"},
					MovedFields:     []string{"handoff.topic"},
				},
			},
		},
		{
			name:   "a wrapper emptied by lifting is removed",
			schema: planSchema,
			raw:    obj(t, `{"handoff":{"audience":"devs"},"topic":"Go","next":"writer"}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{MissingRequired: []string{"outline"}, MovedFields: []string{"handoff.audience"}},
			},
		},
		{
			name:   "a declared object property is not a wrapper",
			schema: planSchema,
			raw:    obj(t, `{"meta":{"topic":"Go","audience":"devs","outline":["a"]}}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{MissingRequired: []string{"audience", "outline", "topic"}},
			},
		},
		{
			name:   "a field in two wrappers is not moved",
			schema: planSchema,
			raw:    obj(t, `{"a":{"topic":"Go"},"b":{"topic":"Rust"},"audience":"devs","outline":["x"]}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{MissingRequired: []string{"topic"}},
				notes:  [][]string{{`did not move required field "topic"`, "a, b"}},
			},
		},
		{
			name:   "unwrap refuses to overwrite a different top-level value",
			schema: planSchema,
			raw:    obj(t, `{"data":{"topic":"Go","audience":"devs","outline":["a"],"id":1},"id":2}`),
			repair: true,
			want: want{
				// Falls back to moving only the missing fields; id stays.
				status:     StatusNormalized,
				normalized: `{"topic":"Go","audience":"devs","outline":["a"],"data":{"id":1},"id":2}`,
				report:     Report{MovedFields: []string{"data.audience", "data.outline", "data.topic"}},
			},
		},
		{
			name:   "numbers and booleans as strings are converted",
			schema: postSchema,
			raw:    obj(t, `{"title":"T","word_count":" 1200 ","score":"4.5","draft":"TRUE","tone":"playful","counts":["1","2"]}`),
			repair: true,
			want: want{
				status:     StatusNormalized,
				normalized: `{"title":"T","word_count":1200,"score":4.5,"draft":true,"tone":"playful","counts":[1,2]}`,
				report:     Report{CoercedFields: []string{"counts[0]", "counts[1]", "draft", "score", "word_count"}},
				notes: [][]string{
					{`converted string " 1200 " at word_count to a number`, "#/properties/word_count/type"},
					{`converted string "TRUE" at draft to a boolean`},
				},
			},
		},
		{
			name:   "a fractional string for an integer is an invalid type",
			schema: postSchema,
			raw:    obj(t, `{"title":"T","word_count":"12.5","tone":"neutral"}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{InvalidTypes: []string{"word_count"}},
				notes:  [][]string{{"word_count is string, want integer", "#/properties/word_count/type"}},
			},
		},
		{
			name:   "a non-numeric string for a number is an invalid type",
			schema: postSchema,
			raw:    obj(t, `{"title":"T","score":"high","draft":"yes","tone":"neutral"}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{InvalidTypes: []string{"draft", "score"}, DefaultedOptional: []string{"word_count"}},
			},
		},
		{
			name:   "a single tag string becomes an array",
			schema: postSchema,
			raw:    obj(t, `{"title":"T","tags":"golang","tone":"neutral"}`),
			repair: true,
			want: want{
				status:     StatusNormalized,
				normalized: `{"title":"T","tags":["golang"],"tone":"neutral","word_count":800}`,
				report: Report{
					CoercedFields:     []string{"tags"},
					DefaultedOptional: []string{"word_count"},
				},
				notes: [][]string{{"wrapped the single string at tags in a one-element array", "#/properties/tags/type"}},
			},
		},
		{
			name:   "a single numeric string for an array of integers is converted and wrapped",
			schema: postSchema,
			raw:    obj(t, `{"title":"T","counts":"3","tone":"neutral","word_count":1}`),
			repair: true,
			want: want{
				status:     StatusNormalized,
				normalized: `{"title":"T","counts":[3],"tone":"neutral","word_count":1}`,
				report:     Report{CoercedFields: []string{"counts", "counts[0]"}},
			},
		},
		{
			name:   "a single object for an array of $ref objects is wrapped",
			schema: postSchema,
			raw:    obj(t, `{"title":"T","sections":{"heading":"Intro","words":"120"},"tone":"neutral","word_count":1}`),
			repair: true,
			want: want{
				status:     StatusNormalized,
				normalized: `{"title":"T","sections":[{"heading":"Intro","words":120}],"tone":"neutral","word_count":1}`,
				report:     Report{CoercedFields: []string{"sections", "sections[0].words"}},
			},
		},
		{
			name:   "a value that does not match the items is not wrapped",
			schema: postSchema,
			raw:    obj(t, `{"title":"T","counts":"many","tone":"neutral","word_count":1}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{InvalidTypes: []string{"counts"}},
			},
		},
		{
			name:   "a number where a string is wanted is not converted",
			schema: planSchema,
			raw:    obj(t, `{"topic":42,"audience":"devs","outline":["a"]}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{InvalidTypes: []string{"topic"}},
				notes:  [][]string{{"topic is number, want string", "#/properties/topic/type"}},
			},
		},
		{
			name:   "optional defaults fill missing and null fields, nested too",
			schema: postSchema,
			raw:    obj(t, `{"title":"T","tone":null,"author":{"name":"Ann"},"score":"1"}`),
			repair: true,
			want: want{
				status:     StatusNormalized,
				normalized: `{"title":"T","tone":"neutral","word_count":800,"author":{"name":"Ann","lang":"en"},"score":1}`,
				report: Report{
					DefaultedOptional: []string{"author.lang", "tone", "word_count"},
					CoercedFields:     []string{"score"},
				},
				notes: [][]string{
					{"filled optional field tone, which was null", `"neutral"`, "#/properties/tone/default"},
					{"filled optional field word_count, which was missing", "800"},
				},
			},
		},
		{
			name: "a required field is never filled from its default",
			schema: `{"type":"object","required":["lang"],"properties":{
				"lang":{"type":"string","default":"en"},"n":{"type":"integer"}}}`,
			raw:    obj(t, `{"n":"1"}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{MissingRequired: []string{"lang"}, CoercedFields: []string{"n"}},
			},
		},
		{
			name:   "missing nested required field is reported with its path",
			schema: postSchema,
			raw:    obj(t, `{"title":"T","author":{},"sections":[{"words":1}]}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{
					MissingRequired:   []string{"author.name", "sections[0].heading"},
					DefaultedOptional: []string{"author.lang", "tone", "word_count"},
				},
			},
		},
		{
			name:   "a wrong item type is reported with its path",
			schema: planSchema,
			raw:    obj(t, `{"topic":"Go","audience":"devs","outline":["a",{"b":1}]}`),
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{InvalidTypes: []string{"outline[1]"}},
			},
		},
		{
			name:   "other schema rules fail with the rule named",
			schema: planSchema,
			raw:    obj(t, `{"topic":"","audience":"devs","outline":["a"]}`),
			repair: true,
			want: want{
				status: StatusFailed,
				notes:  [][]string{{"topic:", "#/properties/topic/minLength"}},
			},
		},
		{
			name:   "without repair, fixable values fail",
			schema: postSchema,
			raw:    obj(t, `{"title":"T","word_count":"1200","tags":"go"}`),
			repair: false,
			want: want{
				status: StatusFailed,
				report: Report{InvalidTypes: []string{"tags", "word_count"}},
			},
		},
		{
			name:   "without repair, a wrapper is not unwrapped",
			schema: planSchema,
			raw:    obj(t, `{"handoff":{"topic":"Go","audience":"devs","outline":["a"]}}`),
			repair: false,
			want: want{
				status: StatusFailed,
				report: Report{MissingRequired: []string{"audience", "outline", "topic"}},
			},
		},
		{
			name:   "start fallback is off by default",
			schema: planSchema,
			raw:    obj(t, `{"topic":"Go","outline":["a"]}`),
			repair: true,
			opts:   &Options{Start: map[string]any{"audience": "devs"}},
			want: want{
				status: StatusFailed,
				report: Report{MissingRequired: []string{"audience"}},
			},
		},
		{
			name:   "start fallback fills a missing required field when allowed",
			schema: planSchema,
			raw:    obj(t, `{"topic":"Go","outline":["a"]}`),
			repair: true,
			opts:   &Options{Start: map[string]any{"audience": "devs", "topic": "ignored"}, AllowStartFallback: true},
			want: want{
				status:     StatusNormalized,
				normalized: `{"topic":"Go","audience":"devs","outline":["a"]}`,
				report:     Report{FallbackFromStart: []string{"audience"}},
				notes:      [][]string{{`took required field "audience" from the run's start input`}},
			},
		},
		{
			name:   "start fallback does not use an empty start value",
			schema: planSchema,
			raw:    obj(t, `{"topic":"Go","outline":["a"]}`),
			repair: true,
			opts:   &Options{Start: map[string]any{"audience": "  "}, AllowStartFallback: true},
			want: want{
				status: StatusFailed,
				report: Report{MissingRequired: []string{"audience"}},
			},
		},
		{
			name:   "null output fails as an invalid type at the root",
			schema: planSchema,
			raw:    nil,
			repair: true,
			want: want{
				status: StatusFailed,
				report: Report{InvalidTypes: []string{"$"}},
			},
		},
		{
			name:   "NaN is not JSON",
			schema: `{"type":"number"}`,
			raw:    math.NaN(),
			repair: true,
			want:   want{status: StatusFailed, notes: [][]string{{"not JSON"}}},
		},
		{
			name:   "a string contract takes prose as it is",
			schema: `{"type":"string","minLength":5}`,
			raw:    "A post {with braces} about Go.",
			repair: true,
			want:   want{status: StatusOK, normalized: `"A post {with braces} about Go."`},
		},
		{
			name:   "an array contract prefers the array in prose",
			schema: `{"type":"array","items":{"type":"object"}}`,
			raw:    `Posts for {user}: [{"text":"a"},{"text":"b"}]`,
			repair: true,
			want:   want{status: StatusOK, normalized: `[{"text":"a"},{"text":"b"}]`},
		},
		{
			name:   "large integers in text keep their digits",
			schema: `{"type":"object","properties":{"id":{"type":"integer"}}}`,
			raw:    `{"id": 1234567890123456789}`,
			repair: true,
			want:   want{status: StatusOK, normalized: `{"id":1234567890123456789}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := compile(t, tt.schema)
			if tt.raw != nil && !isNaN(tt.raw) {
				before := canon(t, tt.raw)
				defer func() {
					if diff := cmp.Diff(before, canon(t, tt.raw)); diff != "" {
						t.Errorf("Check modified its input (-before +after):\n%s", diff)
					}
				}()
			}
			got := Check(tt.raw, s, tt.repair, tt.opts)
			rep := got.Contract
			if rep.Status != tt.want.status {
				t.Errorf("status = %q, want %q; notes: %q", rep.Status, tt.want.status, rep.Notes)
			}
			if rep.SchemaValidBeforeNormalization != (tt.want.status == StatusOK) {
				t.Errorf("schema_valid_before_normalization = %v for status %q", rep.SchemaValidBeforeNormalization, rep.Status)
			}
			if tt.want.status == StatusFailed && got.Normalized != nil {
				t.Errorf("failed check has normalized value %v, want nil", got.Normalized)
			}
			if tt.want.normalized != "" {
				if diff := cmp.Diff(canonJSON(t, tt.want.normalized), canon(t, got.Normalized)); diff != "" {
					t.Errorf("normalized (-want +got):\n%s", diff)
				}
				if strings.Contains(tt.name, "large integers") {
					b, _ := json.Marshal(got.Normalized)
					if !strings.Contains(string(b), "1234567890123456789") {
						t.Errorf("normalized = %s, lost the integer's digits", b)
					}
				}
			}
			opts := []cmp.Option{
				cmpopts.IgnoreFields(Report{}, "Status", "SchemaValidBeforeNormalization", "Notes"),
				cmpopts.EquateEmpty(),
			}
			if diff := cmp.Diff(tt.want.report, rep, opts...); diff != "" {
				t.Errorf("report (-want +got):\n%s\nnotes: %q", diff, rep.Notes)
			}
			for _, parts := range tt.want.notes {
				if !hasNote(rep.Notes, parts...) {
					t.Errorf("no note contains %q; notes:\n%s", parts, strings.Join(rep.Notes, "\n"))
				}
			}
			if rep.Status == StatusFailed && len(rep.Notes) == 0 {
				t.Error("failed check without a note")
			}
		})
	}
}

func isNaN(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}

// TestCheckNormalizedMatchesSchema guards the promise downstream nodes rely
// on: whatever Check passes on validates against the schema.
func TestCheckNormalizedMatchesSchema(t *testing.T) {
	s := compile(t, postSchema)
	for _, raw := range []string{
		`{"title":"T","tags":"go","counts":"4","draft":"false","score":"-1e3"}`,
		`{"result":{"title":"T"}}`,
		"```json\n{\"title\":\"T\",\"author\":{\"name\":\"A\",\"lang\":null}}\n```",
	} {
		res := Check(raw, s, true, nil)
		if res.Contract.Status != StatusNormalized {
			t.Errorf("Check(%s) status = %q, want normalized; notes %q", raw, res.Contract.Status, res.Contract.Notes)
			continue
		}
		if err := s.compiled.Validate(res.Normalized); err != nil {
			t.Errorf("Check(%s) normalized %v does not validate: %v", raw, res.Normalized, err)
		}
	}
}

// TestCheckJSONShape pins the wire format the engine stores and the UI reads:
// the documented keys, and lists that are [] rather than null.
func TestCheckJSONShape(t *testing.T) {
	s := compile(t, planSchema)
	res := Check(`{"topic":"Go","audience":"devs","outline":["a"]}`, s, true, nil)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"raw":        `{"topic":"Go","audience":"devs","outline":["a"]}`,
		"normalized": map[string]any{"topic": "Go", "audience": "devs", "outline": []any{"a"}},
		"contract": map[string]any{
			"status":                            "ok",
			"schema_valid_before_normalization": true,
			"missing_required":                  []any{},
			"defaulted_optional":                []any{},
			"fallback_from_start":               []any{},
			"moved_fields":                      []any{},
			"coerced_fields":                    []any{},
			"invalid_types":                     []any{},
			"notes":                             []any{},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

func TestCheckNilSchema(t *testing.T) {
	res := Check(`{}`, nil, true, nil)
	if res.Contract.Status != StatusFailed || !hasNote(res.Contract.Notes, "no schema") {
		t.Errorf("Check with nil schema = %+v, want failed with a note", res.Contract)
	}
}

func TestCheckDeterministic(t *testing.T) {
	s := compile(t, postSchema)
	raw := `{"title":5,"word_count":"x","score":"y","draft":"z","tone":"loud","tags":[1,2,3],"author":{"lang":4}}`
	first := Check(raw, s, true, nil)
	for range 20 {
		if diff := cmp.Diff(first, Check(raw, s, true, nil)); diff != "" {
			t.Fatalf("Check is not deterministic (-first +now):\n%s", diff)
		}
	}
}

// TestCheckConcurrent shares one compiled schema between goroutines, as the
// engine's node cache will.
func TestCheckConcurrent(t *testing.T) {
	s := compile(t, postSchema)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				raw := map[string]any{"title": "T", "word_count": "12", "tags": "x", "n": i}
				if res := Check(raw, s, true, nil); res.Contract.Status != StatusNormalized {
					t.Errorf("status = %q, want normalized: %q", res.Contract.Status, res.Contract.Notes)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCompile(t *testing.T) {
	tests := []struct {
		name    string
		schema  map[string]any
		wantErr string // "" means success
	}{
		{name: "nil schema", schema: nil, wantErr: "schema is required"},
		{name: "unknown type", schema: map[string]any{"type": "strng"}, wantErr: "contract: compile schema"},
		{name: "remote ref is refused", schema: map[string]any{"$ref": "https://example.com/s.json"}, wantErr: "contracts resolve only references inside the schema"},
		{name: "file ref is refused", schema: map[string]any{"$ref": "/etc/passwd"}, wantErr: "contract: compile schema"},
		{name: "Go ints from YAML are accepted", schema: map[string]any{"type": "array", "minItems": 1, "maxItems": int64(3)}},
		{name: "empty schema accepts anything", schema: map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(tt.schema)
			if tt.wantErr == "" {
				if err != nil || s == nil {
					t.Fatalf("Compile = %v, %v; want a schema", s, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Compile error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestCompileIntsValidate checks that a schema built in Go with int limits
// still enforces them.
func TestCompileIntsValidate(t *testing.T) {
	s, err := Compile(map[string]any{"type": "array", "maxItems": 1})
	if err != nil {
		t.Fatal(err)
	}
	if res := Check(`[1,2]`, s, true, nil); res.Contract.Status != StatusFailed || !hasNote(res.Contract.Notes, "#/maxItems") {
		t.Errorf("Check([1,2]) against maxItems 1 = %+v, want failed naming #/maxItems", res.Contract)
	}
}

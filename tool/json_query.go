package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/itchyny/gojq"

	"github.com/agentcraftlab/agentcraft/internal/scriptrun"
)

// Defaults of JSONQuery.
const (
	DefaultJSONQueryTimeout   = 2 * time.Second
	DefaultJSONQueryMaxOutput = 64 << 10
	DefaultJSONQueryMaxMemory = 64 << 20
)

// JSONQuery is the built-in "json_query" tool: it runs a jq program
// (github.com/itchyny/gojq, a pure-Go jq) over a JSON document and returns
// the results, one JSON value per line. The zero value uses the defaults.
//
// The program sees no environment ($ENV and env are {}), cannot read
// further inputs, files or modules, and is stopped when it runs past
// Timeout, grows the heap by more than MaxMemory (gojq has no allocator
// hook, so the heap is sampled as for run_javascript) or writes more than
// MaxOutputBytes, whichever comes first.
type JSONQuery struct {
	// Timeout bounds one query. Default DefaultJSONQueryTimeout.
	Timeout time.Duration
	// MaxOutputBytes bounds the results returned; later results are
	// dropped with a note. Default DefaultJSONQueryMaxOutput.
	MaxOutputBytes int
	// MaxMemory caps how much the heap may grow during one query.
	// Default DefaultJSONQueryMaxMemory.
	MaxMemory int64
}

var _ Tool = JSONQuery{}

var jsonQueryArgs = mustArgSchema("json_query",
	`{"type":"object","properties":{`+
		`"json":{"description":"The JSON document to query: any JSON value, or a string holding JSON text."},`+
		`"query":{"type":"string","minLength":1,"description":"A jq program, e.g. \".items[] | select(.price > 10) | .name\"."}},`+
		`"required":["json","query"],"additionalProperties":false}`,
	`{"json": {"items": [{"name": "a", "price": 12}]}, "query": ".items[] | select(.price > 10) | .name"}`)

// Name implements Tool.
func (JSONQuery) Name() string { return "json_query" }

// Description implements Tool.
func (JSONQuery) Description() string {
	return "Run a jq program over a JSON document to filter, select, reshape or aggregate it, instead of reading large JSON by eye. " +
		"Returns each result as one line of compact JSON; an empty output means the program produced no results."
}

// Schema implements Tool.
func (JSONQuery) Schema() json.RawMessage { return jsonQueryArgs.raw }

// Capability implements Tool.
func (JSONQuery) Capability() Capability { return CapabilityLow }

// Call implements Tool. Every failure of the arguments or the program is
// an error Result.
func (q JSONQuery) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	var in struct {
		JSON  json.RawMessage `json:"json"`
		Query string          `json:"query"`
	}
	if res, ok := jsonQueryArgs.parse(args, &in); !ok {
		return res, nil
	}
	doc, err := decodeJSONNumbers(in.JSON)
	if err != nil {
		return ErrorResult(`"json" is not valid JSON: %v`, err), nil
	}
	// A string holding JSON text is the document it holds: models often
	// pass a tool's output along as a string.
	if s, ok := doc.(string); ok {
		if t := strings.TrimSpace(s); t != "" && (t[0] == '{' || t[0] == '[') {
			v, err := decodeJSONNumbers([]byte(t))
			if err != nil {
				return ErrorResult(`"json" is a string that looks like JSON but does not parse (%v): pass the document itself or valid JSON text`, err), nil
			}
			doc = v
		}
	}
	parsed, err := gojq.Parse(in.Query)
	if err != nil {
		return ErrorResult("invalid jq program: %v", err), nil
	}
	code, err := gojq.Compile(parsed, gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		return ErrorResult("invalid jq program: %v", err), nil
	}

	timeout := orDefault(q.Timeout, DefaultJSONQueryTimeout)
	maxOut := orDefault(q.MaxOutputBytes, DefaultJSONQueryMaxOutput)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errJQTimeout)
	defer cancel()
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	unwatch := scriptrun.WatchHeap(uint64(orDefault(q.MaxMemory, DefaultJSONQueryMaxMemory)), 5*time.Millisecond, stop)
	defer unwatch()

	var out strings.Builder
	n := 0
	iter := code.RunWithContext(runCtx, doc)
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			if cerr := context.Cause(runCtx); cerr != nil {
				return q.stopped(ctx, cerr, timeout)
			}
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				break // halt: stop without error
			}
			return ErrorResult("jq error after %d result(s): %v", n, err), nil
		}
		b, err := gojq.Marshal(v)
		if err != nil {
			return ErrorResult("result %d cannot be written as JSON: %v", n+1, err), nil
		}
		if out.Len()+len(b)+1 > maxOut {
			fmt.Fprintf(&out, "[output truncated after %d result(s) at the %d-byte limit: narrow the query, e.g. with limit(10; ...) or first(...)]", n, maxOut)
			return Result{Content: out.String()}, nil
		}
		out.Write(b)
		out.WriteByte('\n')
		n++
	}
	if cerr := context.Cause(runCtx); cerr != nil {
		return q.stopped(ctx, cerr, timeout)
	}
	return Result{Content: strings.TrimSuffix(out.String(), "\n")}, nil
}

var errJQTimeout = errors.New("jq time limit exceeded")

// stopped reports a query stopped by its limits, or passes on the caller's
// cancellation as a Go error: the agent stops, the model reads nothing.
func (JSONQuery) stopped(ctx context.Context, cause error, timeout time.Duration) (Result, error) {
	switch {
	case errors.Is(cause, errJQTimeout):
		return ErrorResult("the jq program ran longer than %v: simplify it or query a smaller part of the document", timeout), nil
	case errors.Is(cause, scriptrun.ErrMemory):
		return ErrorResult("the jq program used too much memory (%v): avoid building large arrays, e.g. [range(1e9)]", cause), nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	return Result{}, cause
}

// decodeJSONNumbers decodes one JSON value keeping numbers as json.Number,
// so that large integers keep their digits through jq.
func decodeJSONNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one value: wrap several documents in an array")
	}
	return v, nil
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

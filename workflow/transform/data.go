package transform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/agentcraftlab/agentcraft/internal/scriptrun"
)

// Data is what a template, an arithmetic expression or a script can read.
type Data struct {
	// Input is the value the node received: {{input}}.
	Input any
	// Vars are the run's variables: {{vars.<name>}}.
	Vars map[string]any
	// Nodes maps a node id to that node's output:
	// {{nodes.<id>.output}}. A node that has not run has no entry.
	Nodes map[string]any
}

// Sentinel errors; test for them with errors.Is.
var (
	// ErrTooLarge: an input or output exceeds its size limit. It is
	// the script engines' (scriptrun's), so the script modes' size
	// errors match it too.
	ErrTooLarge = scriptrun.ErrTooLarge
	// ErrNoMatch: regex_extract found no match.
	ErrNoMatch = errors.New("no match")
	// ErrTimeout: a script ran past its time limit.
	ErrTimeout = scriptrun.ErrTimeout
	// ErrReference: a template, expression or script refers to a
	// variable, node output or field that does not exist.
	ErrReference = errors.New("unknown reference")
)

// Text returns v as text: a string as it is, nil as "", anything else as
// compact JSON (3, true, [1,2], {"a":1}). Render and the text modes use it.
func Text(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case nil:
		return "", nil
	case float64:
		// The common case, without the JSON encoder.
		if b, err := json.Marshal(x); err == nil {
			return string(b), nil
		}
	case bool:
		return strconv.FormatBool(x), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("cannot write %T as text: %w", v, err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

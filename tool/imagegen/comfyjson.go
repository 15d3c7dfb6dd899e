package imagegen

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The answers of ComfyUI's HTTP API that a call reads. They come from
// another server, so every parser here is fuzzed (FuzzParseQueued,
// FuzzParseHistory): whatever the bytes, an error or a result, never a
// panic.

// comfyError is ComfyUI's error object: in a /prompt refusal and in every
// node error.
type comfyError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Details string `json:"details"`
}

func (e comfyError) String() string {
	s := cmp.Or(e.Message, e.Type)
	if e.Details != "" {
		s += ": " + e.Details
	}
	return s
}

// nodeError is one entry of node_errors.
type nodeError struct {
	ClassType string       `json:"class_type"`
	Errors    []comfyError `json:"errors"`
}

// parseQueued reads the answer to POST /prompt: the prompt's id on 200;
// on a refusal, an error naming ComfyUI's reason and each node's problems
// (sorted by node id). Older ComfyUIs send error as a string and
// node_errors as a list; both are read.
func parseQueued(status int, data []byte) (string, error) {
	if status == http.StatusOK {
		var ok struct {
			PromptID string `json:"prompt_id"`
		}
		if err := json.Unmarshal(data, &ok); err != nil || ok.PromptID == "" {
			return "", fmt.Errorf("POST /prompt answered 200 without a prompt_id: %s", snippet(data))
		}
		return ok.PromptID, nil
	}
	var refusal struct {
		Error      json.RawMessage `json:"error"`
		NodeErrors json.RawMessage `json:"node_errors"`
	}
	if err := json.Unmarshal(data, &refusal); err != nil || len(refusal.Error) == 0 {
		return "", fmt.Errorf("POST /prompt: HTTP %d: %s", status, snippet(data))
	}
	var reason string
	var obj comfyError
	if err := json.Unmarshal(refusal.Error, &reason); err != nil {
		if err := json.Unmarshal(refusal.Error, &obj); err == nil {
			reason = obj.String()
		} else {
			reason = snippet(refusal.Error)
		}
	}
	msg := "ComfyUI refused the workflow: " + strings.TrimSpace(reason)
	var nodes map[string]nodeError
	if json.Unmarshal(refusal.NodeErrors, &nodes) == nil {
		for _, id := range sortedIDs(nodes) {
			ne := nodes[id]
			var probs []string
			for _, e := range ne.Errors {
				probs = append(probs, e.String())
			}
			msg += fmt.Sprintf("; node %s (%s): %s", id, ne.ClassType, strings.Join(probs, ", "))
		}
	}
	return "", fmt.Errorf("POST /prompt: HTTP %d: %s", status, msg)
}

// comfyFile is an image of a prompt's outputs, as /view takes it.
type comfyFile struct {
	Filename  string `json:"filename"`
	Subfolder string `json:"subfolder"`
	Type      string `json:"type"`
}

// historyEntry is one prompt's entry of GET /history/{id}. Status is
// missing in ComfyUIs before 2024; the entry's presence then means done.
type historyEntry struct {
	Outputs map[string]struct {
		Images []comfyFile `json:"images"`
	} `json:"outputs"`
	Status *struct {
		StatusStr string            `json:"status_str"`
		Completed bool              `json:"completed"`
		Messages  []json.RawMessage `json:"messages"`
	} `json:"status"`
}

// parseHistory reads GET /history/{id}: done is false while the prompt
// has no entry yet ({}); once it has, the files of its outputs — those of
// type output (SaveImage) in node order, else the temp previews
// (PreviewImage) — or the error that ended it.
func parseHistory(data []byte, id string) (done bool, files []comfyFile, err error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return false, nil, fmt.Errorf("GET /history/%s: the answer is not a JSON object: %s", id, snippet(data))
	}
	raw, ok := all[id]
	if !ok {
		return false, nil, nil
	}
	var e historyEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return true, nil, fmt.Errorf("GET /history/%s: the prompt's entry is not ComfyUI's history (%v): %s", id, err, snippet(raw))
	}
	if s := e.Status; s != nil && (s.StatusStr != "success" || !s.Completed) {
		return true, nil, fmt.Errorf("prompt %s failed: %s", id, executionError(s.StatusStr, s.Messages))
	}
	var output, temp []comfyFile
	for _, node := range sortedIDs(e.Outputs) {
		for i, f := range e.Outputs[node].Images {
			if f.Filename == "" {
				return true, nil, fmt.Errorf("prompt %s: outputs[%s].images[%d] has no filename", id, node, i)
			}
			switch f.Type {
			case "output":
				output = append(output, f)
			case "temp":
				temp = append(temp, f)
			}
		}
	}
	if len(output) == 0 {
		output = temp
	}
	if len(output) == 0 {
		return true, nil, fmt.Errorf("prompt %s finished without images: does the workflow end in a SaveImage node?", id)
	}
	return true, output, nil
}

// executionError words why a prompt failed from its status messages
// (["execution_error", {node_id, node_type, exception_type,
// exception_message}], ["execution_interrupted", {...}]).
func executionError(status string, messages []json.RawMessage) string {
	for _, m := range messages {
		var pair []json.RawMessage
		if json.Unmarshal(m, &pair) != nil || len(pair) != 2 {
			continue
		}
		var event string
		var d struct {
			NodeID           string `json:"node_id"`
			NodeType         string `json:"node_type"`
			ExceptionType    string `json:"exception_type"`
			ExceptionMessage string `json:"exception_message"`
		}
		if json.Unmarshal(pair[0], &event) != nil || json.Unmarshal(pair[1], &d) != nil {
			continue
		}
		switch event {
		case "execution_error":
			msg := strings.TrimSpace(d.ExceptionMessage)
			if d.ExceptionType != "" {
				msg = d.ExceptionType + ": " + msg
			}
			return fmt.Sprintf("node %s (%s) raised %s", d.NodeID, d.NodeType, msg)
		case "execution_interrupted":
			return fmt.Sprintf("interrupted at node %s (%s)", d.NodeID, d.NodeType)
		}
	}
	if status == "" {
		return "ComfyUI marked it not completed without saying why"
	}
	return fmt.Sprintf("ComfyUI reports status %q without saying why", status)
}

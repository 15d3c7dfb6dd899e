package openai

import (
	"encoding/json"
	"fmt"

	"github.com/agentcraftlab/agentcraft/llm"
)

// emptySchema stands for a tool without parameters: several compatible
// servers reject a function definition that has none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// wireRequest is a Chat Completions request: the fields the adapter sends,
// each left out when unset, as OpenAI and compatible servers expect.
type wireRequest struct {
	Model               string             `json:"model"`
	Messages            []wireMessage      `json:"messages"`
	Tools               []wireTool         `json:"tools,omitempty"`
	ToolChoice          any                `json:"tool_choice,omitempty"` // a word or a wireNamedChoice
	ParallelToolCalls   *bool              `json:"parallel_tool_calls,omitempty"`
	Temperature         *float64           `json:"temperature,omitempty"`
	TopP                *float64           `json:"top_p,omitempty"`
	MaxTokens           int                `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                `json:"max_completion_tokens,omitempty"`
	Stop                []string           `json:"stop,omitempty"`
	User                string             `json:"user,omitempty"`
	Stream              bool               `json:"stream,omitempty"`
	StreamOptions       *wireStreamOptions `json:"stream_options,omitempty"`
}

type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// wireMessage is one message; Content is a string, or a []wirePart for a
// user message with images, or nil (left out) for an assistant turn that
// only calls tools.
type wireMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content,omitempty"`
	Name       string         `json:"name,omitempty"`
	ToolCalls  []wireCallSent `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wirePart struct {
	Type     string        `json:"type"` // text or image_url
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type wireCallSent struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // function
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string          `json:"type"` // function
	Function wireFunctionDef `json:"function"`
}

type wireFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// wireNamedChoice forces one tool.
type wireNamedChoice struct {
	Type     string `json:"type"` // function
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// params maps req onto the wire request. Bad input is a KindCaller error
// naming the field.
func (c *Client) params(req llm.Request) (*wireRequest, error) {
	if req.Model == "" {
		return nil, c.callerError("request model is empty; set Request.Model to the provider's model id, e.g. gpt-4o-mini")
	}
	p := &wireRequest{Model: req.Model, Messages: make([]wireMessage, 0, len(req.Messages))}
	for i, m := range req.Messages {
		msg, err := c.message(i, m)
		if err != nil {
			return nil, err
		}
		p.Messages = append(p.Messages, msg)
	}

	names := make(map[string]bool, len(req.Tools))
	for i, t := range req.Tools {
		if t.Name == "" {
			return nil, c.callerError("tools[%d].name is empty; every tool needs a name", i)
		}
		// The schema is sent as given, which keeps the order of its
		// properties: models follow it when they write arguments.
		schema := emptySchema
		if len(t.Parameters) > 0 {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(t.Parameters, &obj); err != nil {
				return nil, c.callerError("tools[%d].parameters of %q is not a JSON Schema object: %v", i, t.Name, err)
			}
			if obj != nil {
				schema = t.Parameters
			}
		}
		p.Tools = append(p.Tools, wireTool{Type: "function",
			Function: wireFunctionDef{Name: t.Name, Description: t.Description, Parameters: schema}})
		names[t.Name] = true
	}
	switch req.ToolChoice {
	case "":
	case "auto", "none", "required":
		if len(req.Tools) > 0 {
			p.ToolChoice = req.ToolChoice
		}
	default:
		if !names[req.ToolChoice] {
			return nil, c.callerError("tool_choice %q names no tool of the request; use auto, none, required or one of Request.Tools", req.ToolChoice)
		}
		named := wireNamedChoice{Type: "function"}
		named.Function.Name = req.ToolChoice
		p.ToolChoice = named
	}
	// OpenAI refuses parallel_tool_calls on a request without tools.
	if req.ParallelToolCalls != nil && len(req.Tools) > 0 {
		p.ParallelToolCalls = req.ParallelToolCalls
	}
	p.Temperature, p.TopP = req.Temperature, req.TopP
	switch {
	case req.MaxTokens < 0:
		return nil, c.callerError("max_tokens is %d; use 0 for the provider's default or a positive count", req.MaxTokens)
	case c.maxCompletionTokens:
		p.MaxCompletionTokens = req.MaxTokens
	default:
		p.MaxTokens = req.MaxTokens
	}
	p.Stop = req.Stop
	p.User = req.User
	return p, nil
}

// message maps the i-th message of a request.
func (c *Client) message(i int, m llm.Message) (wireMessage, error) {
	for j, part := range m.Content {
		switch {
		case part.Type == llm.PartText:
		case part.Type == llm.PartImage && m.Role == llm.RoleUser:
			if part.ImageURL == "" {
				return wireMessage{}, c.callerError("messages[%d].content[%d].image_url is empty; give an http(s) URL or a data: URI", i, j)
			}
		case part.Type == llm.PartImage:
			return wireMessage{}, c.callerError("messages[%d].content[%d] is an image in a %s message; only user messages carry images", i, j, m.Role)
		default:
			return wireMessage{}, c.callerError("messages[%d].content[%d].type %q is not text or image", i, j, part.Type)
		}
	}
	w := wireMessage{Role: string(m.Role), Name: m.Name}
	switch m.Role {
	case llm.RoleSystem:
		w.Content = m.Text()
	case llm.RoleUser:
		if textOnly(m.Content) {
			w.Content = m.Text()
			break
		}
		parts := make([]wirePart, 0, len(m.Content))
		for _, part := range m.Content {
			if part.Type == llm.PartText {
				parts = append(parts, wirePart{Type: "text", Text: part.Text})
				continue
			}
			parts = append(parts, wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: part.ImageURL, Detail: part.Detail}})
		}
		w.Content = parts
	case llm.RoleAssistant:
		if text := m.Text(); text != "" || len(m.ToolCalls) == 0 {
			w.Content = text
		}
		for j, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				return wireMessage{}, c.callerError("messages[%d].tool_calls[%d] needs both id and name", i, j)
			}
			args := tc.Arguments
			if args == "" {
				args = "{}" // strict servers reject an empty arguments string
			}
			w.ToolCalls = append(w.ToolCalls, wireCallSent{ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: args}})
		}
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return wireMessage{}, c.callerError("messages[%d].tool_call_id is empty; a tool result must name the call it answers", i)
		}
		// A tool message has no name on the wire.
		w.Name, w.ToolCallID, w.Content = "", m.ToolCallID, m.Text()
	default:
		return wireMessage{}, c.callerError("messages[%d].role %q is not system, user, assistant or tool", i, m.Role)
	}
	return w, nil
}

func textOnly(parts []llm.Part) bool {
	for _, p := range parts {
		if p.Type != llm.PartText {
			return false
		}
	}
	return true
}

// callerError reports bad input: KindCaller, never retried.
func (c *Client) callerError(format string, args ...any) error {
	return &llm.Error{Kind: llm.KindCaller, Provider: c.name, Message: fmt.Sprintf(format, args...)}
}

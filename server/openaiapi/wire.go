package openaiapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/server/apierr"
)

// chatRequest is the subset of OpenAI's chat completion request that
// AgentCraft honours. Unknown fields are ignored, as OpenAI SDKs send many.
type chatRequest struct {
	Model         string          `json:"model"`
	Messages      []Message       `json:"messages"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
	Tools         []chatTool      `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	Temperature   *float64        `json:"temperature"`
	TopP          *float64        `json:"top_p"`
	MaxTokens     *int            `json:"max_tokens"`
	// MaxCompletionTokens is the newer name of max_tokens.
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stop                json.RawMessage `json:"stop"`
	User                string          `json:"user"`
	N                   *int            `json:"n"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	// Files names uploads (POST /api/upload) for the whole conversation,
	// as Open WebUI-style clients send them: [{"id": "..."}]. File
	// content parts ({"type":"file","file":{"file_id":"..."}}) do the
	// same from inside a message.
	Files []struct {
		ID string `json:"id"`
	} `json:"files"`

	// Conversation continues a stored conversation: its id, as a string
	// or {"id": "..."} (AgentCraft's extension; OpenAI's own API has no
	// such field on chat completions).
	Conversation json.RawMessage `json:"conversation"`

	// fileIDs are every upload the request references, in order of first
	// mention, filled by decodeChatRequest.
	fileIDs []string
	// conversation is the id Conversation names, filled by
	// decodeChatRequest.
	conversation string
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one message of an OpenAI-style conversation, as
// /v1/chat/completions and AgentCraft's own chat API (/api/chat) take it.
// DecodeMessages checks and converts it.
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
	File *struct {
		FileID string `json:"file_id"`
	} `json:"file"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// requestError is a client mistake, reported as 400 invalid_request_error
// naming the offending parameter.
type requestError struct {
	Param   string
	Message string
}

func (e *requestError) Error() string { return e.Message }

func badParam(param, format string, args ...any) error {
	return &requestError{Param: param, Message: fmt.Sprintf(format, args...)}
}

// decodeChatRequest parses and validates a request body into the
// provider-neutral form.
func decodeChatRequest(body []byte) (chatRequest, []llm.Message, error) {
	var req chatRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil, badParam("", "request body is empty: send a JSON object with model and messages")
	}
	if err := json.Unmarshal(body, &req); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return req, nil, badParam("", "request body is not valid JSON: %v (at byte %d)", syn, syn.Offset)
		case errors.As(err, &typ):
			return req, nil, badParam(typ.Field, "%s must be %s, not a JSON %s", orBody(typ.Field), typ.Type, typ.Value)
		}
		return req, nil, badParam("", "request body is not valid JSON: %v", err)
	}
	if req.Model == "" {
		return req, nil, badParam("model", "model is required: name an agent from GET /v1/models")
	}
	if len(req.Messages) == 0 {
		return req, nil, badParam("messages", "messages is required and must hold at least one message")
	}
	if c := bytes.TrimSpace(req.Conversation); len(c) > 0 && string(c) != "null" {
		var obj struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(c, &req.conversation) != nil && (json.Unmarshal(c, &obj) != nil || obj.ID == "") {
			return req, nil, badParam("conversation", "conversation must be a conversation id (POST /api/conversations) or {\"id\": \"...\"}")
		}
		if req.conversation == "" {
			req.conversation = obj.ID
		}
		if req.conversation = strings.TrimSpace(req.conversation); req.conversation == "" {
			return req, nil, badParam("conversation", "conversation is empty: name a conversation id or leave it out")
		}
	}
	if req.N != nil && *req.N != 1 {
		return req, nil, badParam("n", "n must be 1: one choice per request is supported")
	}
	msgs, ae := DecodeMessages(req.Messages, &MessageOptions{Files: &req.fileIDs, EmptyAssistant: true})
	if ae != nil {
		return req, nil, badParam(ae.Param, "%s", ae.Message)
	}
	for i, f := range req.Files {
		if f.ID == "" {
			return req, nil, badParam(fmt.Sprintf("files[%d].id", i), "files[%d].id is required: the fileId POST /api/upload returned", i)
		}
		req.fileIDs = appendUnique(req.fileIDs, f.ID)
	}
	for i, t := range req.Tools {
		if t.Type != "" && t.Type != "function" {
			return req, nil, badParam(fmt.Sprintf("tools[%d].type", i), "tools[%d].type %q is not supported; use \"function\"", i, t.Type)
		}
		if t.Function.Name == "" {
			return req, nil, badParam(fmt.Sprintf("tools[%d].function.name", i), "tools[%d].function.name is required", i)
		}
	}
	return req, msgs, nil
}

func orBody(field string) string {
	if field == "" {
		return "the request body"
	}
	return field
}

// appendUnique appends v to list unless it is there already.
func appendUnique(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// MessageOptions say what DecodeMessages accepts beyond text, images and
// tool calls. The zero value (or nil) accepts only those.
type MessageOptions struct {
	// Files, when not nil, accepts file content parts
	// ({"type":"file","file":{"file_id":"..."}}) and appends their upload
	// ids here, each once, instead of adding content: the caller turns
	// them into retrieved context or images. Default: file parts are
	// refused.
	Files *[]string
	// EmptyAssistant accepts an assistant message with neither content
	// nor tool calls. Default: its content is required.
	EmptyAssistant bool
}

// DecodeMessages converts the messages of a request to the
// provider-neutral form. A malformed message is a 400 error naming the
// field (messages[2].content) and what it must hold.
func DecodeMessages(msgs []Message, opts *MessageOptions) ([]llm.Message, *apierr.Error) {
	var o MessageOptions
	if opts != nil {
		o = *opts
	}
	out := make([]llm.Message, 0, len(msgs))
	for i, m := range msgs {
		lm, ae := m.toLLM(i, o)
		if ae != nil {
			return nil, ae
		}
		out = append(out, lm)
	}
	return out, nil
}

// toLLM converts message i.
func (m Message) toLLM(i int, o MessageOptions) (llm.Message, *apierr.Error) {
	bad := func(field, format string, args ...any) *apierr.Error {
		param := fmt.Sprintf("messages[%d].%s", i, field)
		return apierr.BadRequest(param, param+" "+fmt.Sprintf(format, args...))
	}
	out := llm.Message{Name: m.Name, ToolCallID: m.ToolCallID}
	switch m.Role {
	case "system", "developer":
		out.Role = llm.RoleSystem
	case "user":
		out.Role = llm.RoleUser
	case "assistant":
		out.Role = llm.RoleAssistant
	case "tool":
		out.Role = llm.RoleTool
		if m.ToolCallID == "" {
			return out, bad("tool_call_id", "is required in a tool message: the id of the call it answers")
		}
	case "":
		return out, bad("role", "is required: system, developer, user, assistant or tool")
	default:
		return out, bad("role", "%q is not one of system, developer, user, assistant, tool", m.Role)
	}
	content := bytes.TrimSpace(m.Content)
	switch {
	case len(content) == 0 || string(content) == "null":
		if out.Role != llm.RoleAssistant || (len(m.ToolCalls) == 0 && !o.EmptyAssistant) {
			return out, bad("content", "is required")
		}
	case content[0] == '"':
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return out, bad("content", "is not a valid JSON string")
		}
		out.Content = []llm.Part{{Type: llm.PartText, Text: s}}
	case content[0] == '[':
		var parts []contentPart
		if err := json.Unmarshal(content, &parts); err != nil {
			return out, bad("content", "must be a string or an array of content parts")
		}
		for j, p := range parts {
			switch {
			case p.Type == "text" || p.Type == "input_text":
				out.Content = append(out.Content, llm.Part{Type: llm.PartText, Text: p.Text})
			case p.Type == "image_url":
				if p.ImageURL == nil || p.ImageURL.URL == "" {
					return out, bad(fmt.Sprintf("content[%d].image_url.url", j), "is required")
				}
				out.Content = append(out.Content, llm.Part{Type: llm.PartImage, ImageURL: p.ImageURL.URL, Detail: p.ImageURL.Detail})
			case p.Type == "file" && o.Files != nil:
				if p.File == nil || p.File.FileID == "" {
					return out, bad(fmt.Sprintf("content[%d].file.file_id", j), "is required: the fileId POST /api/upload returned")
				}
				*o.Files = appendUnique(*o.Files, p.File.FileID)
			case o.Files != nil:
				return out, bad(fmt.Sprintf("content[%d].type", j), "%q is not supported; use text, image_url or file", p.Type)
			default:
				return out, bad(fmt.Sprintf("content[%d].type", j), "%q is not supported; use text or image_url", p.Type)
			}
		}
	default:
		return out, bad("content", "must be a string or an array of content parts")
	}
	for j, tc := range m.ToolCalls {
		if tc.ID == "" || tc.Function.Name == "" {
			return out, bad(fmt.Sprintf("tool_calls[%d]", j), "needs id and function.name")
		}
		out.ToolCalls = append(out.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return out, nil
}

// toolChoice maps OpenAI's tool_choice ("auto", "none", "required" or
// {"type":"function","function":{"name":...}}) to llm.Request.ToolChoice.
func (r *chatRequest) toolChoice() (string, error) {
	raw := bytes.TrimSpace(r.ToolChoice)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		switch s {
		case "auto", "none", "required":
			return s, nil
		}
		return "", badParam("tool_choice", "tool_choice %q is not auto, none or required", s)
	}
	var obj struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Function.Name == "" {
		return "", badParam("tool_choice", `tool_choice must be a string or {"type":"function","function":{"name":...}}`)
	}
	return obj.Function.Name, nil
}

func (r *chatRequest) stop() ([]string, error) {
	raw := bytes.TrimSpace(r.Stop)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, badParam("stop", "stop must be a string or an array of strings")
		}
		return []string{s}, nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		return nil, badParam("stop", "stop must be a string or an array of strings")
	}
	return ss, nil
}

func (r *chatRequest) maxTokens() int {
	switch {
	case r.MaxCompletionTokens != nil:
		return *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		return *r.MaxTokens
	}
	return 0
}

func (r *chatRequest) clientTools() []llm.ToolDef {
	if len(r.Tools) == 0 {
		return nil
	}
	defs := make([]llm.ToolDef, len(r.Tools))
	for i, t := range r.Tools {
		defs[i] = llm.ToolDef{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters}
	}
	return defs
}

// isOpenWebUITask reports whether the conversation is one of Open WebUI's
// background tasks (title, tags, follow-ups, query generation...). Those
// prompts start with "### Task:" and are answered by the bare model: running
// the agent's tools for them would waste tokens and trigger side effects.
func isOpenWebUITask(msgs []llm.Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			return strings.HasPrefix(strings.TrimSpace(msgs[i].Text()), "### Task:")
		}
	}
	return false
}

// Response shapes.

type chatCompletion struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	Choices           []choice `json:"choices"`
	Usage             *usage   `json:"usage,omitempty"`
	SystemFingerprint *string  `json:"system_fingerprint"`
}

type choice struct {
	Index        int         `json:"index"`
	Message      *outMessage `json:"message,omitempty"`
	Delta        *outMessage `json:"delta,omitempty"`
	FinishReason *string     `json:"finish_reason"`
	Logprobs     *struct{}   `json:"logprobs"`
}

type outMessage struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	Refusal          *string        `json:"refusal,omitempty"`
}

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func toWireUsage(u llm.Usage) *usage {
	w := &usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.Total()}
	w.PromptTokensDetails.CachedTokens = u.CachedTokens
	return w
}

type modelList struct {
	Object string      `json:"object"`
	Data   []modelInfo `json:"data"`
}

type modelInfo struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

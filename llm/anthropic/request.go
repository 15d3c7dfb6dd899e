package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/agentcraftlab/agentcraft/llm"
)

// wireRequest is the body of POST /v1/messages: the fields the adapter
// sends, each omitted when unset as the API expects.
type wireRequest struct {
	Model         string          `json:"model"`
	MaxTokens     int             `json:"max_tokens"`
	System        []wireContent   `json:"system,omitempty"`
	Messages      []wireTurn      `json:"messages"`
	Tools         []wireTool      `json:"tools,omitempty"`
	ToolChoice    *wireToolChoice `json:"tool_choice,omitempty"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Metadata      *wireMetadata   `json:"metadata,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
}

// wireTurn is one message of the conversation.
type wireTurn struct {
	Role    string        `json:"role"`
	Content []wireContent `json:"content"`
}

// wireContent is a content block of a request; one struct serves every
// block type, each filling its own fields.
type wireContent struct {
	Type string `json:"type"`
	// Text is the text of a text block; empty blocks are never sent.
	Text   string      `json:"text,omitempty"`
	Source *wireSource `json:"source,omitempty"` // image
	// ID, Name and Input make a tool_use block.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, IsError and Content make a tool_result block.
	ToolUseID string        `json:"tool_use_id,omitempty"`
	IsError   bool          `json:"is_error,omitempty"`
	Content   []wireContent `json:"content,omitempty"`
}

// wireSource is an image's source: base64 data or a URL.
type wireSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type wireTool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// InputSchema is the caller's JSON Schema, kept raw so that its
	// property order (which models read) survives.
	InputSchema json.RawMessage `json:"input_schema"`
}

type wireToolChoice struct {
	Type                   string `json:"type"` // auto, any, tool, none
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type wireMetadata struct {
	UserID string `json:"user_id"`
}

// params maps a provider-neutral request onto the Messages API. Input
// the API would reject for certain (missing model, unknown role, bad
// image URL) fails here with KindCaller and the field to fix.
func (c *Client) params(req llm.Request) (wireRequest, error) {
	var p wireRequest
	if req.Model == "" {
		return p, c.callerError("request.Model is empty; set it to an Anthropic model id such as claude-sonnet-4-5")
	}
	if req.MaxTokens < 0 {
		return p, c.callerError("request.MaxTokens is %d; use 0 for the default or a positive count", req.MaxTokens)
	}
	p.Model = req.Model
	p.MaxTokens = req.MaxTokens
	if p.MaxTokens == 0 {
		p.MaxTokens = c.maxTokens
	}
	if err := c.messagesParam(&p, req.Messages); err != nil {
		return p, err
	}
	if err := c.toolsParam(&p, req); err != nil {
		return p, err
	}
	p.StopSequences = req.Stop
	if req.User != "" {
		p.Metadata = &wireMetadata{UserID: req.User}
	}
	p.Temperature, p.TopP = req.Temperature, req.TopP
	return p, nil
}

func (c *Client) messagesParam(p *wireRequest, msgs []llm.Message) error {
	// results is the index in p.Messages of the user message collecting
	// tool_result blocks of consecutive RoleTool messages, -1 when the
	// last message was not one.
	results := -1
	for i, m := range msgs {
		if m.Role != llm.RoleTool {
			results = -1
		}
		switch m.Role {
		case llm.RoleSystem:
			for j, part := range m.Content {
				if part.Type != llm.PartText {
					return c.callerError("messages[%d].content[%d]: a system message holds text only, not %q", i, j, part.Type)
				}
				if part.Text != "" {
					p.System = append(p.System, wireContent{Type: "text", Text: part.Text})
				}
			}
		case llm.RoleUser:
			blocks, err := c.contentBlocks(i, m.Content)
			if err != nil {
				return err
			}
			if len(blocks) == 0 {
				return c.callerError("messages[%d]: user message has no content; Anthropic rejects empty messages", i)
			}
			p.Messages = append(p.Messages, wireTurn{Role: "user", Content: blocks})
		case llm.RoleAssistant:
			blocks, err := c.contentBlocks(i, m.Content)
			if err != nil {
				return err
			}
			for _, call := range m.ToolCalls {
				blocks = append(blocks, wireContent{Type: "tool_use", ID: call.ID, Name: call.Name, Input: toolInput(call.Arguments)})
			}
			// An assistant turn with nothing to say (an empty answer
			// replayed from history) is dropped: the API rejects empty
			// content and loses nothing by its absence.
			if len(blocks) > 0 {
				p.Messages = append(p.Messages, wireTurn{Role: "assistant", Content: blocks})
			}
		case llm.RoleTool:
			if m.ToolCallID == "" {
				return c.callerError("messages[%d]: tool message has no ToolCallID; set it to the id of the call it answers", i)
			}
			blocks, err := c.contentBlocks(i, m.Content)
			if err != nil {
				return err
			}
			block := wireContent{Type: "tool_result", ToolUseID: m.ToolCallID, IsError: m.IsError, Content: blocks}
			if results >= 0 {
				p.Messages[results].Content = append(p.Messages[results].Content, block)
				continue
			}
			p.Messages = append(p.Messages, wireTurn{Role: "user", Content: []wireContent{block}})
			results = len(p.Messages) - 1
		default:
			return c.callerError("messages[%d].role is %q; use system, user, assistant or tool", i, m.Role)
		}
	}
	if len(p.Messages) == 0 {
		return c.callerError("request.Messages has no user or assistant message; Anthropic needs at least one")
	}
	return nil
}

// toolInput turns a call's argument text into the object tool_use needs.
// Arguments that are not a JSON object (a call cut off by max_tokens,
// replayed from history) are sent as {}: failing the request would break
// every later turn of the conversation, and the tool's error result that
// followed the bad call still tells the model what went wrong.
func toolInput(args string) json.RawMessage {
	raw := json.RawMessage(strings.TrimSpace(args))
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return json.RawMessage("{}")
	}
	return raw
}

// contentBlocks maps the text and image parts of message i; empty text
// parts are dropped, as the API rejects empty text blocks.
func (c *Client) contentBlocks(i int, parts []llm.Part) ([]wireContent, error) {
	blocks := make([]wireContent, 0, len(parts))
	for j, part := range parts {
		switch part.Type {
		case llm.PartText, "":
			if part.Text != "" {
				blocks = append(blocks, wireContent{Type: "text", Text: part.Text})
			}
		case llm.PartImage:
			src, err := c.imageSource(i, j, part.ImageURL)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, wireContent{Type: "image", Source: src})
		default:
			return nil, c.callerError("messages[%d].content[%d].type is %q; use text or image", i, j, part.Type)
		}
	}
	return blocks, nil
}

// imageSource maps a data: URI to a base64 source and an http(s) URL to a
// url source, the two forms Anthropic takes inline.
func (c *Client) imageSource(i, j int, u string) (*wireSource, error) {
	switch {
	case strings.HasPrefix(u, "https://"), strings.HasPrefix(u, "http://"):
		return &wireSource{Type: "url", URL: u}, nil
	case strings.HasPrefix(u, "data:"):
		meta, data, ok := strings.Cut(u[len("data:"):], ",")
		mediaType, enc, _ := strings.Cut(meta, ";")
		if !ok || enc != "base64" {
			return nil, c.callerError("messages[%d].content[%d].image_url: data URI is not base64; use data:image/png;base64,...", i, j)
		}
		switch mediaType {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
		default:
			return nil, c.callerError("messages[%d].content[%d].image_url: media type %q is not supported; use image/jpeg, image/png, image/gif or image/webp", i, j, mediaType)
		}
		return &wireSource{Type: "base64", MediaType: mediaType, Data: data}, nil
	}
	return nil, c.callerError("messages[%d].content[%d].image_url must be an http(s) URL or a data: URI", i, j)
}

func (c *Client) toolsParam(p *wireRequest, req llm.Request) error {
	for i, t := range req.Tools {
		if t.Name == "" {
			return c.callerError("tools[%d].name is empty", i)
		}
		schema, err := inputSchema(t.Parameters)
		if err != nil {
			return c.callerError("tools[%d] (%s).parameters: %v", i, t.Name, err)
		}
		p.Tools = append(p.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}

	noParallel := req.ParallelToolCalls != nil && !*req.ParallelToolCalls
	switch req.ToolChoice {
	case "", "auto":
		if len(req.Tools) > 0 && (req.ToolChoice == "auto" || noParallel) {
			p.ToolChoice = &wireToolChoice{Type: "auto", DisableParallelToolUse: noParallel}
		}
	case "none":
		if len(req.Tools) > 0 {
			p.ToolChoice = &wireToolChoice{Type: "none"}
		}
	case "required":
		if len(req.Tools) == 0 {
			return c.callerError("request.ToolChoice is required but request.Tools is empty")
		}
		p.ToolChoice = &wireToolChoice{Type: "any", DisableParallelToolUse: noParallel}
	default:
		found := false
		for _, t := range req.Tools {
			found = found || t.Name == req.ToolChoice
		}
		if !found {
			return c.callerError("request.ToolChoice names %q, which is not in request.Tools", req.ToolChoice)
		}
		p.ToolChoice = &wireToolChoice{Type: "tool", Name: req.ToolChoice, DisableParallelToolUse: noParallel}
	}
	return nil
}

// emptySchema is the input_schema of a tool without parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// inputSchema turns a JSON Schema into Anthropic's input_schema, which
// must be an object schema: nil becomes {"type":"object","properties":{}}
// and a missing "type" (and, for an object, "properties") is put first.
// Everything else is sent byte for byte: decoding into a map and encoding
// again would sort the properties, and models read them in order.
func inputSchema(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return emptySchema, nil
	}
	// A map checks that raw is one JSON object and tells which keys it has.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	rawType, hasType := fields["type"]
	_, hasProps := fields["properties"]
	typ := "object"
	if hasType {
		// A type that is not a string (["object","null"]) is the caller's
		// business; only "object" needs properties.
		typ = ""
		_ = json.Unmarshal(rawType, &typ)
	}
	var prefix []byte
	if !hasType {
		prefix = append(prefix, `"type":"object",`...)
	}
	if !hasProps && typ == "object" {
		prefix = append(prefix, `"properties":{},`...)
	}
	if len(prefix) == 0 {
		return raw, nil
	}
	if len(fields) == 0 {
		prefix = prefix[:len(prefix)-1] // no member follows
	}
	out := make([]byte, 0, len(raw)+len(prefix))
	out = append(out, '{')
	out = append(out, prefix...)
	out = append(out, bytes.TrimSpace(raw[1:])...)
	return out, nil
}

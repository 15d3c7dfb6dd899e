package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/agentcraftlab/agentcraft/llm"
)

// params maps a provider-neutral request onto the Messages API. Input
// the API would reject for certain (missing model, unknown role, bad
// image URL) fails here with KindCaller and the field to fix.
func (c *Client) params(req llm.Request) (anthropic.MessageNewParams, error) {
	var p anthropic.MessageNewParams
	if req.Model == "" {
		return p, c.callerError("request.Model is empty; set it to an Anthropic model id such as claude-sonnet-4-5")
	}
	if req.MaxTokens < 0 {
		return p, c.callerError("request.MaxTokens is %d; use 0 for the default or a positive count", req.MaxTokens)
	}
	p.Model = anthropic.Model(req.Model)
	p.MaxTokens = int64(req.MaxTokens)
	if p.MaxTokens == 0 {
		p.MaxTokens = int64(c.maxTokens)
	}
	if err := c.messagesParam(&p, req.Messages); err != nil {
		return p, err
	}
	if err := c.toolsParam(&p, req); err != nil {
		return p, err
	}
	p.StopSequences = req.Stop
	if req.User != "" {
		p.Metadata.UserID = param.NewOpt(req.User)
	}
	// This SDK version has no typed temperature or top_p fields; the API
	// still takes them.
	extra := map[string]any{}
	if req.Temperature != nil {
		extra["temperature"] = *req.Temperature
	}
	if req.TopP != nil {
		extra["top_p"] = *req.TopP
	}
	if len(extra) > 0 {
		p.SetExtraFields(extra)
	}
	return p, nil
}

func (c *Client) messagesParam(p *anthropic.MessageNewParams, msgs []llm.Message) error {
	// results is the user message collecting tool_result blocks of
	// consecutive RoleTool messages, nil when the last message was not one.
	var results *anthropic.UserMessageParam
	for i, m := range msgs {
		if m.Role != llm.RoleTool {
			results = nil
		}
		switch m.Role {
		case llm.RoleSystem:
			for j, part := range m.Content {
				if part.Type != llm.PartText {
					return c.callerError("messages[%d].content[%d]: a system message holds text only, not %q", i, j, part.Type)
				}
				if part.Text != "" {
					p.System = append(p.System, anthropic.TextBlockParam{Text: part.Text})
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
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		case llm.RoleAssistant:
			blocks, err := c.contentBlocks(i, m.Content)
			if err != nil {
				return err
			}
			for _, call := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(call.ID, toolInput(call.Arguments), call.Name))
			}
			// An assistant turn with nothing to say (an empty answer
			// replayed from history) is dropped: the API rejects empty
			// content and loses nothing by its absence.
			if len(blocks) > 0 {
				p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
			}
		case llm.RoleTool:
			if m.ToolCallID == "" {
				return c.callerError("messages[%d]: tool message has no ToolCallID; set it to the id of the call it answers", i)
			}
			blocks, err := c.contentBlocks(i, m.Content)
			if err != nil {
				return err
			}
			tr := &anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.IsError {
				tr.IsError = param.NewOpt(true)
			}
			for _, b := range blocks {
				switch {
				case b.OfText != nil:
					tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfText: b.OfText})
				case b.OfImage != nil:
					tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: b.OfImage})
				}
			}
			block := anthropic.ContentBlockParamUnion{OfToolResult: tr}
			if results != nil {
				results.Content = append(results.Content, block)
				continue
			}
			p.Messages = append(p.Messages, anthropic.NewUserMessage(block))
			results = p.Messages[len(p.Messages)-1].OfUser
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

func (c *Client) contentBlocks(i int, parts []llm.Part) ([]anthropic.ContentBlockParamUnion, error) {
	blocks := make([]anthropic.ContentBlockParamUnion, 0, len(parts))
	for j, part := range parts {
		switch part.Type {
		case llm.PartText, "":
			// The API rejects empty text blocks.
			if part.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(part.Text))
			}
		case llm.PartImage:
			b, err := c.imageBlock(i, j, part.ImageURL)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
		default:
			return nil, c.callerError("messages[%d].content[%d].type is %q; use text or image", i, j, part.Type)
		}
	}
	return blocks, nil
}

// imageBlock maps a data: URI to a base64 source and an http(s) URL to a
// url source, the two forms Anthropic takes inline.
func (c *Client) imageBlock(i, j int, u string) (anthropic.ContentBlockParamUnion, error) {
	switch {
	case strings.HasPrefix(u, "https://"), strings.HasPrefix(u, "http://"):
		return anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: u}), nil
	case strings.HasPrefix(u, "data:"):
		meta, data, ok := strings.Cut(u[len("data:"):], ",")
		mediaType, enc, _ := strings.Cut(meta, ";")
		if !ok || enc != "base64" {
			return anthropic.ContentBlockParamUnion{}, c.callerError("messages[%d].content[%d].image_url: data URI is not base64; use data:image/png;base64,...", i, j)
		}
		switch mediaType {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
		default:
			return anthropic.ContentBlockParamUnion{}, c.callerError("messages[%d].content[%d].image_url: media type %q is not supported; use image/jpeg, image/png, image/gif or image/webp", i, j, mediaType)
		}
		return anthropic.NewImageBlockBase64(mediaType, data), nil
	}
	return anthropic.ContentBlockParamUnion{}, c.callerError("messages[%d].content[%d].image_url must be an http(s) URL or a data: URI", i, j)
}

func (c *Client) toolsParam(p *anthropic.MessageNewParams, req llm.Request) error {
	for i, t := range req.Tools {
		if t.Name == "" {
			return c.callerError("tools[%d].name is empty", i)
		}
		schema, err := inputSchema(t.Parameters)
		if err != nil {
			return c.callerError("tools[%d] (%s).parameters: %v", i, t.Name, err)
		}
		tp := &anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: tp})
	}

	noParallel := req.ParallelToolCalls != nil && !*req.ParallelToolCalls
	var disable param.Opt[bool]
	if noParallel {
		disable = param.NewOpt(true)
	}
	switch req.ToolChoice {
	case "", "auto":
		if len(req.Tools) > 0 && (req.ToolChoice == "auto" || noParallel) {
			p.ToolChoice.OfAuto = &anthropic.ToolChoiceAutoParam{DisableParallelToolUse: disable}
		}
	case "none":
		if len(req.Tools) > 0 {
			p.ToolChoice.OfNone = &anthropic.ToolChoiceNoneParam{}
		}
	case "required":
		if len(req.Tools) == 0 {
			return c.callerError("request.ToolChoice is required but request.Tools is empty")
		}
		p.ToolChoice.OfAny = &anthropic.ToolChoiceAnyParam{DisableParallelToolUse: disable}
	default:
		found := false
		for _, t := range req.Tools {
			found = found || t.Name == req.ToolChoice
		}
		if !found {
			return c.callerError("request.ToolChoice names %q, which is not in request.Tools", req.ToolChoice)
		}
		p.ToolChoice.OfTool = &anthropic.ToolChoiceToolParam{Name: req.ToolChoice, DisableParallelToolUse: disable}
	}
	return nil
}

// inputSchema turns a JSON Schema into Anthropic's input_schema, which
// must be an object schema: nil becomes {"type":"object","properties":{}}
// and a missing "type" is filled in. Everything else passes unchanged.
func inputSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var s anthropic.ToolInputSchemaParam
	m := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return s, err
		}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if _, ok := m["properties"]; !ok && m["type"] == "object" {
		m["properties"] = map[string]any{}
	}
	data, err := json.Marshal(m)
	if err != nil {
		return s, err
	}
	param.SetJSON(data, &s)
	return s, nil
}

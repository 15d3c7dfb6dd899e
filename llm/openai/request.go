package openai

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentcraftlab/agentcraft/llm"
)

// emptySchema stands for a tool without parameters: several compatible
// servers reject a function definition that has none.
var emptySchema = map[string]json.RawMessage{"type": json.RawMessage(`"object"`), "properties": json.RawMessage(`{}`)}

// params maps req onto the SDK's request. Bad input is a KindCaller error
// naming the field.
func (c *Client) params(req llm.Request) (openai.ChatCompletionNewParams, error) {
	var p openai.ChatCompletionNewParams
	if req.Model == "" {
		return p, c.callerError("request model is empty; set Request.Model to the provider's model id, e.g. gpt-4o-mini")
	}
	p.Model = shared.ChatModel(req.Model)
	p.Messages = make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages))
	for i, m := range req.Messages {
		msg, err := c.message(i, m)
		if err != nil {
			return p, err
		}
		p.Messages = append(p.Messages, msg)
	}

	names := make(map[string]bool, len(req.Tools))
	for i, t := range req.Tools {
		if t.Name == "" {
			return p, c.callerError("tools[%d].name is empty; every tool needs a name", i)
		}
		// Keeping each member raw preserves the order of properties, which
		// models follow when they write arguments.
		var schema map[string]json.RawMessage
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return p, c.callerError("tools[%d].parameters of %q is not a JSON Schema object: %v", i, t.Name, err)
			}
		}
		if schema == nil {
			schema = emptySchema
		}
		fp := make(shared.FunctionParameters, len(schema))
		for k, v := range schema {
			fp[k] = v
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: fp}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
		names[t.Name] = true
	}
	switch req.ToolChoice {
	case "":
	case "auto", "none", "required":
		if len(req.Tools) > 0 {
			p.ToolChoice.OfAuto = param.NewOpt(req.ToolChoice)
		}
	default:
		if !names[req.ToolChoice] {
			return p, c.callerError("tool_choice %q names no tool of the request; use auto, none, required or one of Request.Tools", req.ToolChoice)
		}
		p.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice})
	}
	// OpenAI refuses parallel_tool_calls on a request without tools.
	if req.ParallelToolCalls != nil && len(req.Tools) > 0 {
		p.ParallelToolCalls = param.NewOpt(*req.ParallelToolCalls)
	}

	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.TopP != nil {
		p.TopP = param.NewOpt(*req.TopP)
	}
	switch {
	case req.MaxTokens < 0:
		return p, c.callerError("max_tokens is %d; use 0 for the provider's default or a positive count", req.MaxTokens)
	case req.MaxTokens > 0 && c.maxCompletionTokens:
		p.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
	case req.MaxTokens > 0:
		p.MaxTokens = param.NewOpt(int64(req.MaxTokens))
	}
	if len(req.Stop) > 0 {
		p.Stop.OfStringArray = req.Stop
	}
	if req.User != "" {
		p.User = param.NewOpt(req.User)
	}
	return p, nil
}

// message maps the i-th message of a request.
func (c *Client) message(i int, m llm.Message) (openai.ChatCompletionMessageParamUnion, error) {
	var u openai.ChatCompletionMessageParamUnion
	for j, part := range m.Content {
		switch {
		case part.Type == llm.PartText:
		case part.Type == llm.PartImage && m.Role == llm.RoleUser:
			if part.ImageURL == "" {
				return u, c.callerError("messages[%d].content[%d].image_url is empty; give an http(s) URL or a data: URI", i, j)
			}
		case part.Type == llm.PartImage:
			return u, c.callerError("messages[%d].content[%d] is an image in a %s message; only user messages carry images", i, j, m.Role)
		default:
			return u, c.callerError("messages[%d].content[%d].type %q is not text or image", i, j, part.Type)
		}
	}
	switch m.Role {
	case llm.RoleSystem:
		s := &openai.ChatCompletionSystemMessageParam{}
		s.Content.OfString = param.NewOpt(m.Text())
		if m.Name != "" {
			s.Name = param.NewOpt(m.Name)
		}
		u.OfSystem = s
	case llm.RoleUser:
		um := &openai.ChatCompletionUserMessageParam{}
		if textOnly(m.Content) {
			um.Content.OfString = param.NewOpt(m.Text())
		} else {
			for _, part := range m.Content {
				if part.Type == llm.PartText {
					um.Content.OfArrayOfContentParts = append(um.Content.OfArrayOfContentParts, openai.TextContentPart(part.Text))
					continue
				}
				um.Content.OfArrayOfContentParts = append(um.Content.OfArrayOfContentParts,
					openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: part.ImageURL, Detail: part.Detail}))
			}
		}
		if m.Name != "" {
			um.Name = param.NewOpt(m.Name)
		}
		u.OfUser = um
	case llm.RoleAssistant:
		a := &openai.ChatCompletionAssistantMessageParam{}
		if text := m.Text(); text != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(text)
		}
		for j, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				return u, c.callerError("messages[%d].tool_calls[%d] needs both id and name", i, j)
			}
			args := tc.Arguments
			if args == "" {
				args = "{}" // strict servers reject an empty arguments string
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
				},
			})
		}
		if m.Name != "" {
			a.Name = param.NewOpt(m.Name)
		}
		u.OfAssistant = a
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return u, c.callerError("messages[%d].tool_call_id is empty; a tool result must name the call it answers", i)
		}
		t := &openai.ChatCompletionToolMessageParam{ToolCallID: m.ToolCallID}
		t.Content.OfString = param.NewOpt(m.Text())
		u.OfTool = t
	default:
		return u, c.callerError("messages[%d].role %q is not system, user, assistant or tool", i, m.Role)
	}
	return u, nil
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

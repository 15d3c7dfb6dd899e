package aguiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/tool"
)

// runInput is AG-UI's RunAgentInput as this server reads it. state is
// accepted and not used: AgentCraft agents keep no shared state with the
// front end. forwardedProps may name uploads to attach (fileId, fileIds);
// its other fields are ignored.
type runInput struct {
	ThreadID       string          `json:"threadId"`
	RunID          string          `json:"runId"`
	ParentRunID    string          `json:"parentRunId"`
	State          json.RawMessage `json:"state"`
	Messages       []inMessage     `json:"messages"`
	Tools          []inTool        `json:"tools"`
	Context        []inContext     `json:"context"`
	ForwardedProps json.RawMessage `json:"forwardedProps"`
	Resume         json.RawMessage `json:"resume"`
}

// inMessage is one AG-UI message: user, assistant, system, developer,
// tool, or the UI-only activity and reasoning messages.
type inMessage struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []inToolCall    `json:"toolCalls"`
	ToolCallID string          `json:"toolCallId"`
	Error      string          `json:"error"`
}

type inToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// inContent is one part of a user message's content.
type inContent struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	MimeType string `json:"mimeType"`
	ID       string `json:"id"`
	URL      string `json:"url"`
	Data     string `json:"data"`
}

type inTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type inContext struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

// input is a decoded, checked run request.
type input struct {
	ThreadID, RunID, ParentRunID string
	// Messages are the client's messages as the model reads them, the
	// application's context first.
	Messages []llm.Message
	// Tools are the client's (frontend) tools.
	Tools []llm.ToolDef
	// FileIDs are the uploads (POST /api/upload) attached to the run,
	// from forwardedProps.fileId and forwardedProps.fileIds, without
	// repeats.
	FileIDs []string
}

// forwardedFiles reads the uploads forwardedProps attaches: fileId (one
// fileId of POST /api/upload) and fileIds (a list of them).
func forwardedFiles(raw json.RawMessage) ([]string, *apierr.Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(raw, &props); err != nil {
		return nil, apierr.BadRequest("forwardedProps", "forwardedProps must be a JSON object, such as {\"fileId\":\"<fileId of POST /api/upload>\"}")
	}
	var ids []string
	add := func(id string) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if v, ok := props["fileId"]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		var id string
		if err := json.Unmarshal(v, &id); err != nil || strings.TrimSpace(id) == "" {
			return nil, apierr.BadRequest("forwardedProps.fileId", "forwardedProps.fileId must be a non-empty string: the fileId POST /api/upload returned")
		}
		add(strings.TrimSpace(id))
	}
	if v, ok := props["fileIds"]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		var list []string
		if err := json.Unmarshal(v, &list); err != nil {
			return nil, apierr.BadRequest("forwardedProps.fileIds", "forwardedProps.fileIds must be an array of strings: the fileIds POST /api/upload returned")
		}
		for i, id := range list {
			if strings.TrimSpace(id) == "" {
				param := fmt.Sprintf("forwardedProps.fileIds[%d]", i)
				return nil, apierr.BadRequest(param, param+" is empty: each entry is a fileId POST /api/upload returned")
			}
			add(strings.TrimSpace(id))
		}
	}
	return ids, nil
}

// decodeInput reads a RunAgentInput. Every refusal is a 400 naming the
// field and what it must hold.
func decodeInput(body []byte) (input, *apierr.Error) {
	var in runInput
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&in); err != nil {
		return input{}, apierr.BadRequest("", "the body must be a RunAgentInput JSON object: "+jsonProblem(err))
	}
	if dec.More() {
		return input{}, apierr.BadRequest("", "the body must hold one RunAgentInput JSON object, not several values")
	}
	switch {
	case in.ThreadID == "":
		return input{}, apierr.BadRequest("threadId", "threadId is required: the id of the conversation this run belongs to, the same for every run of it")
	case in.RunID == "":
		return input{}, apierr.BadRequest("runId", "runId is required: a new id for this run")
	case len(in.Messages) == 0:
		return input{}, apierr.BadRequest("messages", `messages is required and must hold at least one message, such as {"id":"1","role":"user","content":"Hello"}`)
	}
	if r := bytes.TrimSpace(in.Resume); len(r) > 0 && !bytes.Equal(r, []byte("null")) && !bytes.Equal(r, []byte("[]")) {
		return input{}, apierr.BadRequest("resume", "resume answers interrupts, and this server never interrupts a run: leave resume out, and send a frontend tool's result as a tool message")
	}
	out := input{ThreadID: in.ThreadID, RunID: in.RunID, ParentRunID: in.ParentRunID}
	files, ae := forwardedFiles(in.ForwardedProps)
	if ae != nil {
		return input{}, ae
	}
	out.FileIDs = files
	if ctx := contextMessage(in.Context); ctx != nil {
		out.Messages = append(out.Messages, *ctx)
	}
	conversation := 0
	for i, m := range in.Messages {
		lm, keep, ae := m.toLLM(i)
		if ae != nil {
			return input{}, ae
		}
		if keep {
			out.Messages = append(out.Messages, lm)
			if lm.Role != llm.RoleSystem {
				conversation++
			}
		}
	}
	if conversation == 0 {
		return input{}, apierr.BadRequest("messages", "messages holds no user, assistant or tool message for the agent to answer: send at least one user message")
	}
	seen := make(map[string]bool, len(in.Tools))
	for i, t := range in.Tools {
		param := fmt.Sprintf("tools[%d].name", i)
		if err := tool.ValidateName(t.Name); err != nil {
			return input{}, apierr.BadRequest(param, param+": "+err.Error())
		}
		if seen[t.Name] {
			return input{}, apierr.BadRequest(param, fmt.Sprintf("%s: tool %q is listed twice: send each tool once", param, t.Name))
		}
		seen[t.Name] = true
		def := llm.ToolDef{Name: t.Name, Description: t.Description}
		if p := bytes.TrimSpace(t.Parameters); len(p) > 0 && !bytes.Equal(p, []byte("null")) {
			if p[0] != '{' {
				return input{}, apierr.BadRequest(fmt.Sprintf("tools[%d].parameters", i), fmt.Sprintf("tools[%d].parameters must be a JSON Schema object", i))
			}
			def.Parameters = append(json.RawMessage(nil), p...)
		}
		out.Tools = append(out.Tools, def)
	}
	return out, nil
}

// contextMessage is the application context of a run as one system
// message, or nil when there is none.
func contextMessage(cs []inContext) *llm.Message {
	var b strings.Builder
	for _, c := range cs {
		if c.Description == "" && c.Value == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("Context from the application:")
		}
		b.WriteString("\n- ")
		if c.Description != "" {
			b.WriteString(c.Description)
			b.WriteString(": ")
		}
		b.WriteString(c.Value)
	}
	if b.Len() == 0 {
		return nil
	}
	m := llm.Text(llm.RoleSystem, b.String())
	return &m
}

// toLLM converts message i; keep is false for the messages only the UI
// reads (activity, reasoning) and for an empty assistant message.
func (m inMessage) toLLM(i int) (out llm.Message, keep bool, ae *apierr.Error) {
	bad := func(field, format string, args ...any) *apierr.Error {
		param := fmt.Sprintf("messages[%d].%s", i, field)
		return apierr.BadRequest(param, param+" "+fmt.Sprintf(format, args...))
	}
	switch m.Role {
	case "user":
		parts, ae := userContent(m.Content, bad)
		if ae != nil {
			return out, false, ae
		}
		return llm.Message{Role: llm.RoleUser, Content: parts, Name: m.Name}, true, nil
	case "system", "developer":
		s, ok := stringContent(m.Content)
		if !ok {
			return out, false, bad("content", "must be a string")
		}
		return llm.Message{Role: llm.RoleSystem, Content: textParts(s), Name: m.Name}, true, nil
	case "assistant":
		s, ok := stringContent(m.Content)
		if !ok {
			return out, false, bad("content", "must be a string or left out")
		}
		out = llm.Message{Role: llm.RoleAssistant, Content: textParts(s), Name: m.Name}
		for k, c := range m.ToolCalls {
			switch {
			case c.ID == "":
				return out, false, bad(fmt.Sprintf("toolCalls[%d].id", k), "is required: the id the tool message answering the call names")
			case c.Function.Name == "":
				return out, false, bad(fmt.Sprintf("toolCalls[%d].function.name", k), "is required: the name of the tool called")
			case c.Type != "" && c.Type != "function":
				return out, false, bad(fmt.Sprintf("toolCalls[%d].type", k), "must be \"function\"")
			}
			out.ToolCalls = append(out.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		return out, len(out.Content) > 0 || len(out.ToolCalls) > 0, nil
	case "tool":
		if m.ToolCallID == "" {
			return out, false, bad("toolCallId", "is required: the id of the tool call this message answers")
		}
		s, ok := stringContent(m.Content)
		if !ok {
			return out, false, bad("content", "must be a string: the tool's result")
		}
		if s == "" && m.Error != "" {
			s = m.Error
		}
		return llm.ToolResult(m.ToolCallID, s, m.Error != ""), true, nil
	case "activity", "reasoning":
		return out, false, nil
	case "":
		return out, false, bad("role", "is required: user, assistant, system, developer or tool")
	}
	return out, false, bad("role", "%q is not a role: use user, assistant, system, developer or tool", m.Role)
}

func textParts(s string) []llm.Part {
	if s == "" {
		return nil
	}
	return []llm.Part{{Type: llm.PartText, Text: s}}
}

// stringContent reads content that must be a string or absent.
func stringContent(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// userContent reads a user message's content: a string, or text and
// binary parts; binary parts must be images, by URL or base64 data.
func userContent(raw json.RawMessage, bad func(field, format string, args ...any) *apierr.Error) ([]llm.Part, *apierr.Error) {
	if s, ok := stringContent(raw); ok {
		if s == "" {
			return nil, bad("content", "is required: the user's text, or an array of text and binary parts")
		}
		return textParts(s), nil
	}
	var parts []inContent
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, bad("content", "must be a string or an array of parts such as {\"type\":\"text\",\"text\":\"Hello\"}")
	}
	out := make([]llm.Part, 0, len(parts))
	for k, p := range parts {
		field := fmt.Sprintf("content[%d]", k)
		switch p.Type {
		case "text":
			if p.Text != "" {
				out = append(out, llm.Part{Type: llm.PartText, Text: p.Text})
			}
		case "binary":
			if !strings.HasPrefix(p.MimeType, "image/") {
				return nil, bad(field+".mimeType", "%q is not accepted: binary parts must be images (image/png, image/jpeg, …)", p.MimeType)
			}
			switch {
			case p.URL != "":
				out = append(out, llm.Part{Type: llm.PartImage, ImageURL: p.URL})
			case p.Data != "":
				out = append(out, llm.Part{Type: llm.PartImage, ImageURL: "data:" + p.MimeType + ";base64," + p.Data})
			default:
				return nil, bad(field, "needs url or data: an image referenced only by id cannot be read by this server")
			}
		default:
			return nil, bad(field+".type", "%q is not a content type: use text or binary", p.Type)
		}
	}
	if len(out) == 0 {
		return nil, bad("content", "holds no text and no image")
	}
	return out, nil
}

// jsonProblem says what is wrong with a body that did not decode.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("field %s must be a JSON %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "slice":
		return "array"
	case "struct", "map":
		return "object"
	case "bool":
		return "boolean"
	}
	return "number"
}

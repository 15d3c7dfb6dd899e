package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcraftlab/agentcraft/tool"
)

// mcpTool is one tool of an MCP server, as agents see it.
type mcpTool struct {
	srv        *server
	name       string // model-facing
	mcpName    string // the server's
	desc       string
	schema     json.RawMessage
	capability tool.Capability
}

func newTool(s *server, name string, t *mcp.Tool) *mcpTool {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	var schema json.RawMessage
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
			schema = b
		}
	}
	return &mcpTool{srv: s, name: name, mcpName: t.Name, desc: desc, schema: schema, capability: capabilityOf(t.Annotations)}
}

// capabilityOf grades a tool by its annotations: read-only tools are low,
// tools that declare destructive updates high, the rest medium. Hints
// are the server's claims; medium is the default because a tool that
// says nothing may well have side effects.
func capabilityOf(a *mcp.ToolAnnotations) tool.Capability {
	switch {
	case a == nil:
		return tool.CapabilityMedium
	case a.ReadOnlyHint:
		return tool.CapabilityLow
	case a.DestructiveHint != nil && *a.DestructiveHint:
		return tool.CapabilityHigh
	}
	return tool.CapabilityMedium
}

func (t *mcpTool) Name() string                { return t.name }
func (t *mcpTool) Description() string         { return t.desc }
func (t *mcpTool) Schema() json.RawMessage     { return t.schema }
func (t *mcpTool) Capability() tool.Capability { return t.capability }

// Call runs the tool on its server. Everything that goes wrong — the
// server is down, the arguments are not an object, the call fails — comes
// back as an error Result: the model can retry, use another tool or
// answer without it.
func (t *mcpTool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	if len(args) > tool.MaxArgsBytes {
		return tool.ErrorResult("arguments are %d bytes, more than the limit of %d: pass less data", len(args), tool.MaxArgsBytes), nil
	}
	obj := argsObject(args)
	if !json.Valid(obj) || !bytes.HasPrefix(obj, []byte("{")) {
		return tool.ErrorResult("arguments must be a JSON object matching the tool's schema"), nil
	}
	cs, err := t.srv.currentSession()
	if err != nil {
		return tool.ErrorResult("tool %s is unavailable: %v. Answer without it or try again later.", t.name, errors.Unwrap(err)), nil
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: t.mcpName, Arguments: obj})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.ErrorResult("tool %s failed on MCP server %q: %v", t.name, t.srv.cfg.Name, err), nil
	}
	return convertResult(res), nil
}

// argsObject trims args and maps empty and null to {}.
func argsObject(args json.RawMessage) json.RawMessage {
	a := bytes.TrimSpace(args)
	if len(a) == 0 || string(a) == "null" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(a)
}

// convertResult turns an MCP result into text for the model: text content
// as it is, other content summarised, structured content as JSON when
// there is nothing else.
func convertResult(res *mcp.CallToolResult) tool.Result {
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[resource %s: %s]", c.Name, c.URI)
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil && r.Text != "" {
				b.WriteString(r.Text)
			} else if r != nil {
				fmt.Fprintf(&b, "[resource %s, %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob))
			}
		default:
			fmt.Fprintf(&b, "[%T content]", c)
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(j)
		}
	}
	if res.IsError {
		if b.Len() == 0 {
			b.WriteString("the tool reported an error without a message")
		}
		return tool.Result{Content: b.String(), IsError: true}
	}
	return tool.Result{Content: b.String()}
}

package mcpclient

import (
	"encoding/json"
	"testing"

	"github.com/agentcraftlab/agentcraft/tool"
)

// BenchmarkDispatch measures one tool call as the agent makes it
// (tool.Tool.Call with the model's JSON arguments): the built-in
// calculator, and the echo tool of the npm server-everything over stdio
// and over streamable HTTP on loopback. The MCP cases skip without node.
func BenchmarkDispatch(b *testing.B) {
	b.Run("builtin-calculator", func(b *testing.B) {
		var calc tool.Tool = tool.Calculator{}
		args := json.RawMessage(`{"expression":"2*(3+4)"}`)
		b.ReportAllocs()
		for b.Loop() {
			if res, err := calc.Call(b.Context(), args); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	})
	bench := func(b *testing.B, cfg ServerConfig) {
		m, err := New([]ServerConfig{cfg}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Start(b.Context()); err != nil {
			b.Fatal(err)
		}
		defer m.Stop()
		tools, err := m.Resolve("everything__echo")
		if err != nil {
			b.Fatal(err)
		}
		echo := tools[0]
		args := json.RawMessage(`{"message":"ping"}`)
		b.ReportAllocs()
		for b.Loop() {
			if res, err := echo.Call(b.Context(), args); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	}
	b.Run("mcp-stdio", func(b *testing.B) {
		node, dir := npmServers(b)
		bench(b, ServerConfig{Name: "everything", Command: node, Args: []string{serverScript(dir, "server-everything"), "stdio"}})
	})
	b.Run("mcp-http", func(b *testing.B) {
		bench(b, ServerConfig{Name: "everything", URL: startEverythingHTTP(b)})
	})
}

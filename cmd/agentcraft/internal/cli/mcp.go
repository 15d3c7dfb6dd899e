package cli

import "github.com/spf13/cobra"

// mcpCmd groups the Model Context Protocol commands: a client for
// debugging MCP servers (tools, call) and AgentCraft's own MCP server
// (serve --stdio, clients).
func mcpCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Model Context Protocol: call MCP servers, serve AgentCraft as one",
	}
	cmd.AddCommand(mcpClientCommands(e)...)
	cmd.AddCommand(mcpServerCommands(e)...)
	return cmd
}

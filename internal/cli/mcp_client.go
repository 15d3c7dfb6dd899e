package cli

import "github.com/spf13/cobra"

// mcpClientCommands: TODO(helper-mcp-client) tools and call.
func mcpClientCommands(e *env) []*cobra.Command { return nil }

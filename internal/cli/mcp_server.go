package cli

import "github.com/spf13/cobra"

// mcpServerCommands: TODO(helper-mcp-server) serve and clients.
func mcpServerCommands(e *env) []*cobra.Command { return nil }

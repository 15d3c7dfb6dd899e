// Command agentcraft is the AgentCraft server and its command-line tools.
// See `agentcraft --help`.
package main

import (
	"os"

	"github.com/agentcraftlab/agentcraft/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}

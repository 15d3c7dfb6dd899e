// Command agentcraft is the AgentCraft server and its command-line tools.
// See `agentcraft --help`.
package main

import (
	"os"
	// The built-in current_time tool resolves IANA zones; embedding the
	// database keeps it working on hosts without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}

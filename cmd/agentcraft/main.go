// Command agentcraft is the AgentCraft server and its command-line tools.
// See `agentcraft --help`.
package main

import (
	"os"
	// The built-in current_time tool resolves IANA zones; embedding the
	// database keeps it working on hosts without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/cli"
	"github.com/agentcraftlab/agentcraft/internal/sandbox"
)

func main() {
	// First: a sandbox child (a script or an uploaded file's parser, see
	// internal/sandbox) runs its job here and exits.
	sandbox.Main()
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}

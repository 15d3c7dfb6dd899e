package cli

import (
	"os"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/sandbox"
)

// childEnv makes the test binary run the command line with its arguments
// instead of the tests, so that a test can start real agentcraft
// processes (startChild).
const childEnv = "AGENTCRAFT_CLI_TEST_CHILD"

// TestMain lets the test binary serve as the sandbox child that runs
// scripts and file parsers (see internal/sandbox) — first, since a child
// command such as serve starts sandbox children of the same binary — and
// as a child agentcraft process.
func TestMain(m *testing.M) {
	sandbox.Main()
	if os.Getenv(childEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

package cli

import (
	"os"
	"testing"
)

// childEnv makes the test binary run the command line with its arguments
// instead of the tests, so that a test can start real agentcraft
// processes (startChild).
const childEnv = "AGENTCRAFT_CLI_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

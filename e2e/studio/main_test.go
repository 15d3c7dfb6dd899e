package studio

import (
	"os"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/sandbox"
)

// TestMain lets the test binary serve as the sandbox child that parses
// uploaded files (see internal/sandbox): ingest and chat attachments need it.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

package trigger_test

import (
	"os"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/sandbox"
)

// TestMain lets the test binary serve as the sandbox child of the workflow
// engine's script nodes (see internal/sandbox).
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

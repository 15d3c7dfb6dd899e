package starlarkrun

import (
	"os"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/sandbox"
)

// TestMain lets the test binary serve as the sandbox child Run starts.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

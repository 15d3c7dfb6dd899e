package tool

import (
	"os"
	"testing"

	isolation "github.com/agentcraftlab/agentcraft/internal/sandbox"
)

// TestMain lets the test binary serve as the sandbox child that runs
// scripts and file parsers (see internal/sandbox).
func TestMain(m *testing.M) {
	isolation.Main()
	os.Exit(m.Run())
}

package task_test

import (
	"os"
	"testing"

	"github.com/agentcraftlab/agentcraft/internal/sandbox"
)

// TestMain lets the test binary serve as the sandbox child that code
// nodes run in (see internal/sandbox).
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

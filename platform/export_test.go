package platform

import (
	"testing"
	"time"
)

// SetAgentRecheck makes Agent re-read an agent's row once d has passed
// since the last read, until t ends. Tests calling it must not be parallel.
func SetAgentRecheck(t testing.TB, d time.Duration) {
	t.Helper()
	old := agentRecheck
	agentRecheck = d
	t.Cleanup(func() { agentRecheck = old })
}

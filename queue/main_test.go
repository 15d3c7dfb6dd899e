package queue

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: Stop
// and Close must end every goroutine River started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

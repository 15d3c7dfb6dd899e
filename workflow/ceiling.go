package workflow

import (
	"fmt"
	"time"
)

// Ceilings are the server's upper bounds on a definition's settings: a
// definition asking for more steps or a longer timeout is refused, since
// one run with max_steps 100000000 can fill the database with checkpoints
// in seconds. Zero fields mean no bound.
type Ceilings struct {
	MaxSteps int
	Timeout  time.Duration
}

// Check returns a problem for each setting of s above c, with the path
// ("settings.max_steps", "settings.timeout") and the bound.
func (c Ceilings) Check(s Settings) []Problem {
	var probs []Problem
	if c.MaxSteps > 0 && s.MaxSteps > c.MaxSteps {
		probs = append(probs, Problem{Path: "settings.max_steps",
			Message: fmt.Sprintf("max_steps %d is above this server's ceiling of %d", s.MaxSteps, c.MaxSteps),
			Hint:    fmt.Sprintf("use at most %d, or ask the operator to raise workflows.max_steps_ceiling", c.MaxSteps)})
	}
	if c.Timeout > 0 && s.Timeout > c.Timeout {
		probs = append(probs, Problem{Path: "settings.timeout",
			Message: fmt.Sprintf("timeout %v is above this server's ceiling of %v", s.Timeout, c.Timeout),
			Hint:    fmt.Sprintf("use at most %v, or ask the operator to raise workflows.timeout_ceiling", c.Timeout)})
	}
	return probs
}

package tool

import "fmt"

// RegisterBuiltins registers the built-in tools: calculator and
// current_time. It fails if one of their names is already taken.
func RegisterBuiltins(r *Registry) error {
	for _, t := range []Tool{Calculator{}, CurrentTime{}} {
		if err := r.Register(t); err != nil {
			return fmt.Errorf("tool: register built-ins: %w", err)
		}
	}
	return nil
}

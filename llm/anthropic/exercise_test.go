package anthropic_test

import (
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/anthropic"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

// TestConformance runs the provider-neutral suite against the adapter and
// the Anthropic fake. It must not run in parallel: it checks for leaked
// goroutines.
func TestConformance(t *testing.T) {
	llmtest.Exercise(t, llmtest.NewAnthropic, func(srv *llmtest.Server) llm.Model {
		c, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "test-key"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}

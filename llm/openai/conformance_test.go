package openai_test

import (
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/openai"
)

func TestConformance(t *testing.T) {
	llmtest.Exercise(t, llmtest.NewOpenAI, func(srv *llmtest.Server) llm.Model {
		return newClient(t, srv, nil)
	})
}

// newClient returns a Client on srv; opts may be nil.
func newClient(t testing.TB, srv *llmtest.Server, opts *openai.Options) *openai.Client {
	t.Helper()
	var o openai.Options
	if opts != nil {
		o = *opts
	}
	o.BaseURL = srv.URL + "/v1"
	c, err := openai.New(&o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

package apierr_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/anthropic"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/openai"
	"github.com/agentcraftlab/agentcraft/server/apierr"
)

// TestUpstreamKeyNeverReachesClient: a provider's 401 whose body quotes
// the API key it was given becomes an API error (502, the operator's
// problem) whose message holds no fragment of the key, from either
// provider adapter.
func TestUpstreamKeyNeverReachesClient(t *testing.T) {
	const key = "sk-proj-SECRETabcdef0123456789"
	fault := &llmtest.Fault{Status: http.StatusUnauthorized, Message: "Incorrect API key provided: " + key + ". You can find your API key at https://platform.openai.com/account/api-keys."}
	models := map[string]func(t *testing.T) llm.Model{
		"openai": func(t *testing.T) llm.Model {
			srv := llmtest.NewOpenAI(t, llmtest.Turn{Fault: fault})
			m, err := openai.New(&openai.Options{BaseURL: srv.URL + "/v1", APIKey: "sk-other"})
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
		"anthropic": func(t *testing.T) llm.Model {
			srv := llmtest.NewAnthropic(t, llmtest.Turn{Fault: fault})
			m, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "sk-ant-other"})
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
	}
	for name, model := range models {
		t.Run(name, func(t *testing.T) {
			_, err := model(t).Generate(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}})
			if err == nil {
				t.Fatal("Generate succeeded against a 401")
			}
			e := apierr.FromLLM(err)
			if e.Status != http.StatusBadGateway || !strings.Contains(e.Message, "Incorrect API key provided") {
				t.Errorf("FromLLM = %d %q, want 502 keeping the provider's words", e.Status, e.Message)
			}
			for _, s := range []string{e.Message, err.Error()} {
				for _, frag := range []string{"SECRET", "abcdef", "0123456789", "sk-proj"} {
					if strings.Contains(s, frag) {
						t.Errorf("error text %q holds %q of the key", s, frag)
					}
				}
			}
		})
	}
}

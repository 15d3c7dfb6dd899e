package openaiapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/openaiapi"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// An autonomous agent answers /v1/chat/completions as a durable run: the
// model lists it, its steps stream as reasoning_content, the answer is the
// content, and the run's id is in the header. A question parks the run
// and the answer says so.
func TestAutonomousAgentOverV1(t *testing.T) {
	fake := llmtest.NewOpenAI(t,
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "calculator", Arguments: `{"expression":"6*7"}`}}},
		llmtest.Turn{Text: "The answer is 42."},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "q1", Name: "ask_user", Arguments: `{"question":"Which currency?"}`}}},
	)
	env := servertest.New(t, &servertest.Options{
		Providers: []platform.ProviderConfig{{Name: "fake", Type: "openai", BaseURL: fake.URL + "/v1", APIKey: "k", Middleware: fastRetry()}},
		Agents:    []platform.AgentSpec{{Name: "scout", Model: "fake/fake-model", Tools: []string{"calculator"}, Autonomous: &store.AgentAutonomous{MaxSteps: 5}}},
		Workflows: true,
	})
	post := func(body string) *http.Response {
		req, _ := http.NewRequest("POST", env.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+env.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	req, _ := http.NewRequest("GET", env.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+env.Key)
	models, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := io.ReadAll(models.Body)
	models.Body.Close()
	if !strings.Contains(string(list), `"id":"scout"`) {
		t.Fatalf("/v1/models does not list the autonomous agent: %s", list)
	}
	resp := post(`{"model":"scout","stream":true,"messages":[{"role":"user","content":"What is six times seven?"}]}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get(openaiapi.RunIDHeader) == "" {
		t.Fatalf("status %s, run id %q", resp.Status, resp.Header.Get(openaiapi.RunIDHeader))
	}
	var reasoning, content strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content          string `json:"content"`
					ReasoningContent string `json:"reasoning_content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		for _, c := range chunk.Choices {
			reasoning.WriteString(c.Delta.ReasoningContent)
			content.WriteString(c.Delta.Content)
		}
	}
	if content.String() != "The answer is 42." {
		t.Errorf("content = %q", content.String())
	}
	for _, want := range []string{"[root] Calling calculator", "[root] calculator returned: 42"} {
		if !strings.Contains(reasoning.String(), want) {
			t.Errorf("reasoning lacks %q:\n%s", want, reasoning.String())
		}
	}

	resp = post(`{"model":"scout","messages":[{"role":"user","content":"Convert 10 dollars."}]}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "waiting for input") || !strings.Contains(string(b), "Which currency?") {
		t.Fatalf("parked run answered %s: %s", resp.Status, b)
	}
	id := resp.Header.Get(openaiapi.RunIDHeader)
	run, err := env.Runs.Run(t.Context(), env.Workspace.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != store.RunWaiting {
		t.Errorf("run %s is %s, want waiting", id, run.Status)
	}
}

package middleware_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/llm/openai"
)

type auditEvent struct {
	action  string
	details map[string]any
}

// auditSink collects what BuildOptions.Audit receives.
type auditSink struct {
	mu     sync.Mutex
	events []auditEvent // guarded by mu
}

func (s *auditSink) record(_ context.Context, action string, details map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, auditEvent{action, details})
}

func (s *auditSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.events)
}

// TestSafetyAuditEventsCarryNoPII: guard rules that match on personal data
// (a card number, an e-mail address) give audit lines and events whose
// match excerpt is redacted, and PII events carry counts only.
func TestSafetyAuditEventsCarryNoPII(t *testing.T) {
	var s middleware.Settings
	if err := yaml.Unmarshal([]byte(`
guard:
  rules:
    - {name: card-digits, pattern: '[0-9]{4} [0-9]{4} [0-9]{4} [0-9]{4}', action: warn}
    - {name: mail-keyword, keywords: ["taro.yamada@example.co.jp"], action: log}
    - {name: leak, keywords: ["hanako@example.jp"], action: block, direction: output}
  scan_output: true
pii: {}
`), &s); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	user := "My data: email " + tenKinds[0] + ", card " + tenKinds[1] + ", IBAN " + tenKinds[2] + ", IP " + tenKinds[3] +
		", 身分證 " + tenKinds[4] + ", 手機 " + tenKinds[5] + ", マイナンバー " + tenKinds[6] + ", NHS number " + tenKinds[7] +
		", SSN " + tenKinds[8] + ", 住所 " + tenKinds[9] + "."
	srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: "Noted [EMAIL_1]."}, llmtest.Turn{Text: "Write to hanako@example.jp."})
	m, err := openai.New(&openai.Options{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var sink auditSink
	// Info, not Debug: Logging writes completions at Debug, and the second
	// answer is a raw address the model made up (masking covers what the
	// user sent, not what the model invents).
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	model := llm.Chain(m, middleware.BuildWith(s, &middleware.BuildOptions{Logger: logger, Audit: sink.record})...)

	if _, err := model.Generate(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, user)}}); err != nil {
		t.Fatal(err)
	}
	resp, err := model.Generate(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "Whom do I write to?")}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(resp.Message.Text(), "hanako") {
		t.Errorf("blocked answer reached the client: %q", resp.Message.Text())
	}

	counts := map[string]int{}
	for _, e := range sink.events {
		counts[e.action]++
		if e.action == "pii.detected" && e.details["direction"] == "input" {
			if n := e.details["count"]; n != 10 {
				t.Errorf("pii.detected input count = %v, want 10: %v", n, e.details)
			}
			if ents, _ := e.details["entities"].(map[string]int); ents["Global.Email"] != 1 || ents["Global.CreditCard"] != 1 {
				t.Errorf("pii.detected entities = %v, want one email and one card among them", e.details["entities"])
			}
		}
		if strings.HasPrefix(e.action, "guard.") && e.details["match"] != "***" {
			t.Errorf("%s match = %q, want it redacted to ***", e.action, e.details["match"])
		}
	}
	for _, want := range []string{"guard.warn", "guard.log", "guard.block", "pii.detected"} {
		if counts[want] == 0 {
			t.Errorf("no %s event; got %s", want, sink.String())
		}
	}
	if !strings.Contains(logs.String(), `rule="card-digits" match="***"`) && !strings.Contains(logs.String(), `rule=\"card-digits\" match=\"***\"`) {
		t.Errorf("guard audit line lacks the redacted match:\n%s", logs.String())
	}
	all := logs.String() + sink.String()
	for _, v := range append(tenKinds, "hanako@example.jp") {
		if strings.Contains(all, v) {
			t.Errorf("logs or audit events contain %q:\n%s", v, all)
		}
	}
}

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
// (a card number, an e-mail address) give audit lines and events that name
// the rule and the match's length, and PII events carry counts only.
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
		if _, ok := e.details["match"]; strings.HasPrefix(e.action, "guard.") && (ok || e.details["match_len"] == nil) {
			t.Errorf("%s details = %v, want match_len and no match text", e.action, e.details)
		}
	}
	for _, want := range []string{"guard.warn", "guard.log", "guard.block", "pii.detected"} {
		if counts[want] == 0 {
			t.Errorf("no %s event; got %s", want, sink.String())
		}
	}
	if !strings.Contains(logs.String(), `rule="card-digits" kind=regex match_len=19`) && !strings.Contains(logs.String(), `rule=\"card-digits\" kind=regex match_len=19`) {
		t.Errorf("guard audit line lacks the rule and the match's length:\n%s", logs.String())
	}
	all := logs.String() + sink.String()
	for _, v := range append(tenKinds, "hanako@example.jp") {
		if strings.Contains(all, v) {
			t.Errorf("logs or audit events contain %q:\n%s", v, all)
		}
	}
}

// TestGuardAuditCarriesNoSecret: a rule matching an API key records its
// rule and length in the audit events and the WARN line, and no fragment
// of the key (redaction used to leave "sk-SECRETabcdef***").
func TestGuardAuditCarriesNoSecret(t *testing.T) {
	const secret = "sk-SECRETabcdef0123456789xyz"
	var s middleware.Settings
	if err := yaml.Unmarshal([]byte(`
guard:
  rules:
    - {name: api-key, pattern: 'sk-[A-Za-z0-9]{20,}', action: warn}
logging: {enabled: false}   # its Info input_preview is the prompt itself, by design; this test is about guard's lines
`), &s); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: "Noted."})
	m, err := openai.New(&openai.Options{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var sink auditSink
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	model := llm.Chain(m, middleware.BuildWith(s, &middleware.BuildOptions{Logger: logger, Audit: sink.record})...)
	if _, err := model.Generate(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "my key is "+secret+", keep it")}}); err != nil {
		t.Fatal(err)
	}
	if len(sink.events) != 1 || sink.events[0].action != "guard.warn" {
		t.Fatalf("audit events %s, want one guard.warn", sink.String())
	}
	d := sink.events[0].details
	if d["rule"] != "api-key" || d["match_len"] != len(secret) {
		t.Errorf("guard.warn details %v, want rule api-key and match_len %d", d, len(secret))
	}
	if !strings.Contains(logs.String(), `"level":"WARN"`) || !strings.Contains(logs.String(), "match_len=28") {
		t.Errorf("no WARN audit line with the match's length:\n%s", logs.String())
	}
	all := logs.String() + sink.String()
	for _, frag := range []string{"sk-SECRET", "SECRET", "abcdef", "0123456789", "xyz"} {
		if strings.Contains(all, frag) {
			t.Errorf("logs or audit events contain %q:\n%s", frag, all)
		}
	}
}

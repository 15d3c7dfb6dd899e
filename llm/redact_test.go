package llm_test

import (
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
)

func TestRedactSecrets(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"Incorrect API key provided: sk-proj-AbC123def456GHI789. Find your key at https://platform.openai.com/account/api-keys.",
			"Incorrect API key provided: [redacted]. Find your key at https://platform.openai.com/account/api-keys."},
		{"key sk-ant-api03-XyZ_0123456789-abc is invalid", "key [redacted] is invalid"},
		{"masked sk-proj-********************abcd", "masked [redacted]"},
		{"header Authorization: Bearer eyJhbGciOi.abc-def_123 refused", "header Authorization: Bearer [redacted] refused"},
		{"google AIzaSyA1234567890abcdefghijklmnopqrstu", "google [redacted]"},
		{"token 0123456789abcdef0123456789abcdef0123 expired", "token [redacted] expired"},
		{"secret dGhpcyBpcyBhIHNlY3JldCB0b2tlbiAxMjM0NTY3ODkw== leaked", "secret [redacted] leaked"},
		// Ordinary text stays: words, model names, URLs, a UUID.
		{"model gpt-4o-mini not found at /v1/chat/completions", "model gpt-4o-mini not found at /v1/chat/completions"},
		{"run 01a2335f-7a67-7272-9af1-8c946ed538ab failed", "run 01a2335f-7a67-7272-9af1-8c946ed538ab failed"},
		{"supercalifragilisticexpialidociousandevenlongerwordsthanthat", "supercalifragilisticexpialidociousandevenlongerwordsthanthat"},
		{"ask a skilled person: task-runner", "ask a skilled person: task-runner"},
	}
	for _, tt := range tests {
		if got := llm.RedactSecrets(tt.in); got != tt.want {
			t.Errorf("RedactSecrets(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestErrorTextIsRedacted(t *testing.T) {
	err := &llm.Error{Kind: llm.KindAuth, Status: 401, Message: "Incorrect API key provided: sk-live-0123456789abcdef",
		Err: &llm.Error{Kind: llm.KindAuth, Message: "echo: Bearer sk-live-0123456789abcdef"}}
	if s := err.Error(); strings.Contains(s, "0123456789") || !strings.Contains(s, llm.Redacted) {
		t.Errorf("Error() = %q, want the key redacted", s)
	}
}

// BenchmarkRedactSecrets measures the cost Error adds to every error text.
func BenchmarkRedactSecrets(b *testing.B) {
	s := "openai: auth (status 401): Incorrect API key provided: sk-proj-AbC123def456GHI789. You can find your API key at https://platform.openai.com/account/api-keys.: openai: create chat completion: status 401"
	b.ReportAllocs()
	for b.Loop() {
		llm.RedactSecrets(s)
	}
}

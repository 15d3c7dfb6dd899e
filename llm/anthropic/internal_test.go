package anthropic

import (
	"net/http"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentcraftlab/agentcraft/llm"
)

func TestFinishReason(t *testing.T) {
	tests := map[anthropic.StopReason]llm.FinishReason{
		"end_turn":                      llm.FinishStop,
		"stop_sequence":                 llm.FinishStop,
		"pause_turn":                    llm.FinishStop,
		"":                              llm.FinishStop,
		"tool_use":                      llm.FinishToolCalls,
		"max_tokens":                    llm.FinishLength,
		"model_context_window_exceeded": llm.FinishLength,
		"refusal":                       llm.FinishContentFilter,
	}
	for in, want := range tests {
		if got := finishReason(in); got != want {
			t.Errorf("finishReason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		ra, raMs string
		want     time.Duration
	}{
		{"none", "", "", 0},
		{"seconds", "7", "", 7 * time.Second},
		{"fractional seconds", "0.5", "", 500 * time.Millisecond},
		{"milliseconds", "", "1234", 1234 * time.Millisecond},
		{"milliseconds win", "30", "200", 200 * time.Millisecond},
		{"bad milliseconds fall back", "3", "soon", 3 * time.Second},
		{"http date", now.Add(90 * time.Second).Format(http.TimeFormat), "", 90 * time.Second},
		{"past date", now.Add(-time.Minute).Format(http.TimeFormat), "", 0},
		{"negative", "-4", "", 0},
		{"garbage", "later", "", 0},
		{"absurd", "1e300", "", 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.ra != "" {
			h.Set("Retry-After", tt.ra)
		}
		if tt.raMs != "" {
			h.Set("Retry-After-Ms", tt.raMs)
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("%s: retryAfter(%q, %q) = %v, want %v", tt.name, tt.ra, tt.raMs, got, tt.want)
		}
	}
}

func TestStatusForType(t *testing.T) {
	tests := map[string]int{
		"overloaded_error":      529,
		"rate_limit_error":      429,
		"api_error":             500,
		"invalid_request_error": 400,
		"authentication_error":  401,
		"permission_error":      403,
		"not_found_error":       404,
		"request_too_large":     413,
		"timeout_error":         504,
		"billing_error":         402,
		"brand_new_error":       500,
	}
	for typ, want := range tests {
		if got := statusForType(typ); got != want {
			t.Errorf("statusForType(%q) = %d, want %d", typ, got, want)
		}
	}
}

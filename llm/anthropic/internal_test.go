package anthropic

import (
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
)

func TestFinishReason(t *testing.T) {
	tests := map[string]llm.FinishReason{
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

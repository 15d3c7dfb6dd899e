package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{"milliseconds", http.Header{"Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond},
		{"milliseconds win", http.Header{"Retry-After": {"9"}, "Retry-After-Ms": {"20"}}, 20 * time.Millisecond},
		{"bad milliseconds fall back", http.Header{"Retry-After": {"9"}, "Retry-After-Ms": {"soon"}}, 9 * time.Second},
		{"HTTP date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0},
		{"garbage", http.Header{"Retry-After": {"later"}}, 0},
		{"overflow", http.Header{"Retry-After": {"1e300"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryAfter(tt.header, now); got != tt.want {
				t.Errorf("RetryAfter(%v) = %v, want %v", tt.header, got, tt.want)
			}
		})
	}
}

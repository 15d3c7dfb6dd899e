package llm

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// RetryAfter reads retry-after-ms (milliseconds, OpenAI's precise form) or
// else retry-after (seconds or an HTTP date); 0 when absent, malformed or
// past.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < math.MaxInt64/float64(time.Millisecond) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < math.MaxInt64/float64(time.Second) {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

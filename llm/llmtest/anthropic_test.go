package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/llm"
)

// goldenTurn is the answer recorded in testdata/anthropic_stream.sse:
// text, one tool call and usage with cache reads.
var goldenTurn = Turn{
	Text: "Let me check the weather.",
	ToolCalls: []llm.ToolCall{
		{ID: "toolu_01", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`},
	},
	Usage: llm.Usage{InputTokens: 120, OutputTokens: 31, CachedTokens: 100},
}

func postAnthropic(t *testing.T, ctx context.Context, url string, stream bool) (*http.Response, error) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"model":      "claude-test",
		"max_tokens": 256,
		"stream":     stream,
		"messages":   []map[string]any{{"role": "user", "content": "Weather in Paris?"}},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

func TestAnthropicStreamGolden(t *testing.T) {
	srv := NewAnthropic(t, goldenTurn)
	resp, err := postAnthropic(t, t.Context(), srv.URL, true)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}

	path := filepath.Join("testdata", "anthropic_stream.sse")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("stream differs from %s (-want +got); run with -update if the change is intended:\n%s", path, diff)
	}
}

// TestAnthropicStreamSequence checks the protocol rules the golden file
// embodies, so that an -update cannot bless a broken sequence.
func TestAnthropicStreamSequence(t *testing.T) {
	srv := NewAnthropic(t, goldenTurn)
	resp, err := postAnthropic(t, t.Context(), srv.URL, true)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events, err := readEvents(resp.Body)
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}

	var names []string
	var text, args strings.Builder
	argFragments := 0
	for _, ev := range events {
		var data struct {
			Type  string `json:"type"`
			Delta struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatalf("event %s: data is not JSON: %v", ev.Event, err)
		}
		if data.Type != ev.Event {
			t.Errorf("event %q carries data of type %q", ev.Event, data.Type)
		}
		if ev.Event == "content_block_delta" {
			text.WriteString(data.Delta.Text)
			args.WriteString(data.Delta.PartialJSON)
			if data.Delta.Type == "input_json_delta" {
				argFragments++
			}
			continue
		}
		names = append(names, ev.Event)
	}
	want := []string{"message_start", "content_block_start", "ping", "content_block_stop",
		"content_block_start", "content_block_stop", "message_delta", "message_stop"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("event sequence without deltas (-want +got):\n%s", diff)
	}
	if text.String() != goldenTurn.Text {
		t.Errorf("text deltas join to %q, want %q", text.String(), goldenTurn.Text)
	}
	if args.String() != goldenTurn.ToolCalls[0].Arguments {
		t.Errorf("partial_json joins to %q, want %q", args.String(), goldenTurn.ToolCalls[0].Arguments)
	}
	if argFragments < 2 {
		t.Errorf("arguments sent in %d fragment(s), want several", argFragments)
	}
}

func TestAnthropicMessage(t *testing.T) {
	srv := NewAnthropic(t, goldenTurn, Turn{Text: "cut", FinishReason: llm.FinishLength})
	var got []map[string]any
	for range 2 {
		resp, err := postAnthropic(t, t.Context(), srv.URL, false)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("decode message: %v", err)
		}
		resp.Body.Close()
		got = append(got, m)
	}
	want := []map[string]any{{
		"id": "msg_llmtest_1", "type": "message", "role": "assistant", "model": "claude-test",
		"content": []any{
			map[string]any{"type": "text", "text": "Let me check the weather."},
			map[string]any{"type": "tool_use", "id": "toolu_01", "name": "get_weather",
				"input": map[string]any{"city": "Paris", "unit": "celsius"}},
		},
		"stop_reason": "tool_use", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 20.0, "cache_read_input_tokens": 100.0,
			"cache_creation_input_tokens": 0.0, "output_tokens": 31.0},
	}, {
		"id": "msg_llmtest_2", "type": "message", "role": "assistant", "model": "claude-test",
		"content":     []any{map[string]any{"type": "text", "text": "cut"}},
		"stop_reason": "max_tokens", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 0.0, "cache_read_input_tokens": 0.0,
			"cache_creation_input_tokens": 0.0, "output_tokens": 0.0},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestAnthropicErrorFault(t *testing.T) {
	tests := []struct {
		status  int
		errType string
	}{
		{400, "invalid_request_error"},
		{401, "authentication_error"},
		{403, "permission_error"},
		{404, "not_found_error"},
		{429, "rate_limit_error"},
		{500, "api_error"},
		{503, "api_error"},
		{529, "overloaded_error"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := NewAnthropic(t, Turn{Fault: &Fault{Status: tt.status, RetryAfter: "2", RetryAfterMs: "1500", Message: "scripted"}})
			resp, err := postAnthropic(t, t.Context(), srv.URL, true)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			if got := resp.Header.Get("Retry-After"); got != "2" {
				t.Errorf("retry-after = %q, want 2", got)
			}
			if got := resp.Header.Get("Retry-After-Ms"); got != "1500" {
				t.Errorf("retry-after-ms = %q, want 1500", got)
			}
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatalf("decode error body: %v", err)
			}
			want := map[string]any{
				"type":       "error",
				"error":      map[string]any{"type": tt.errType, "message": "scripted"},
				"request_id": "req_llmtest",
			}
			if diff := cmp.Diff(want, body); diff != "" {
				t.Errorf("error body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnthropicInStreamError(t *testing.T) {
	srv := NewAnthropic(t, Turn{Text: "abcdefghijklmnop", Fault: &Fault{AfterChunks: 2, Status: 529}})
	resp, err := postAnthropic(t, t.Context(), srv.URL, true)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200: the error comes inside the stream", resp.StatusCode)
	}
	events, err := readEvents(resp.Body)
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}
	deltas := 0
	for _, ev := range events {
		if ev.Event == "content_block_delta" {
			deltas++
		}
	}
	if deltas != 2 {
		t.Errorf("%d deltas before the error, want 2", deltas)
	}
	last := events[len(events)-1]
	if last.Event != "error" {
		t.Fatalf("last event is %q, want error", last.Event)
	}
	want := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_llmtest"}`
	if string(last.Data) != want {
		t.Errorf("error data = %s, want %s", last.Data, want)
	}
}

// TestAnthropicFaultPastEnd checks that AfterChunks beyond the answer's
// deltas still injects the fault, before message_delta.
func TestAnthropicFaultPastEnd(t *testing.T) {
	srv := NewAnthropic(t, Turn{Text: "hi", Fault: &Fault{AfterChunks: 50, Status: 529}})
	resp, err := postAnthropic(t, t.Context(), srv.URL, true)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events, err := readEvents(resp.Body)
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}
	var names []string
	for _, ev := range events {
		names = append(names, ev.Event)
	}
	want := []string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_stop", "error"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestAnthropicTruncate(t *testing.T) {
	srv := NewAnthropic(t, Turn{Text: "abcdefghijklmnop", Fault: &Fault{AfterChunks: 1, Truncate: true}})
	resp, err := postAnthropic(t, t.Context(), srv.URL, true)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("reading a truncated stream: err = %v, want io.ErrUnexpectedEOF", err)
	}
	if bytes.Contains(got, []byte("message_stop")) {
		t.Errorf("truncated stream holds message_stop:\n%s", got)
	}
	if n := bytes.Count(got, []byte("event: content_block_delta")); n != 1 {
		t.Errorf("%d deltas before the cut, want 1", n)
	}
}

func TestAnthropicTruncateAtOnce(t *testing.T) {
	srv := NewAnthropic(t, Turn{Text: "abcdefgh", Fault: &Fault{Truncate: true}})
	resp, err := postAnthropic(t, t.Context(), srv.URL, true)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want io.ErrUnexpectedEOF", err)
	}
	if !bytes.HasPrefix(got, []byte("event: message_start\n")) || bytes.Contains(got, []byte("content_block")) {
		t.Errorf("stream cut with AfterChunks 0 should hold message_start only:\n%s", got)
	}
}

func TestAnthropicStall(t *testing.T) {
	t.Run("client gives up", func(t *testing.T) {
		srv := NewAnthropic(t, Turn{Text: "abcdefgh", Fault: &Fault{AfterChunks: 1, Stall: time.Minute}})
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		resp, err := postAnthropic(t, ctx, srv.URL, true)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("read err = %v, want deadline exceeded", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("stalled read took %v; the client deadline should end it", d)
		}
	})
	t.Run("close interrupts", func(t *testing.T) {
		srv := NewAnthropic(t, Turn{Text: "abcdefgh", Fault: &Fault{AfterChunks: 1, Stall: time.Minute}})
		resp, err := postAnthropic(t, t.Context(), srv.URL, true)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		// Read up to the stall: the first delta.
		br := sse.NewReader(resp.Body, nil)
		for {
			ev, err := br.Next()
			if err != nil {
				t.Fatalf("read before stall: %v", err)
			}
			if ev.Event == "content_block_delta" {
				break
			}
		}
		start := time.Now()
		srv.Close()
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Close took %v with a stalled answer", d)
		}
	})
	t.Run("stall elapses", func(t *testing.T) {
		srv := NewAnthropic(t, Turn{Text: "abcdefgh", Fault: &Fault{AfterChunks: 1, Stall: 50 * time.Millisecond}})
		start := time.Now()
		resp, err := postAnthropic(t, t.Context(), srv.URL, true)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Errorf("answer took %v, want at least the 50ms stall", d)
		}
		if !bytes.HasSuffix(got, []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")) {
			t.Errorf("stream after the stall does not end with message_stop:\n%s", got)
		}
	})
}

func TestAnthropicUnknownRoute(t *testing.T) {
	srv := NewAnthropic(t, Turn{Text: "unused"})
	resp, err := http.Get(srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /v1/models: status %d, want 404", resp.StatusCode)
	}
}

func TestAnthropicRequiredFields(t *testing.T) {
	srv := NewAnthropic(t, Turn{Text: "unused"})
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body anthropicErrorJSON
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || body.Error.Type != "invalid_request_error" || !strings.Contains(body.Error.Message, "max_tokens") {
		t.Errorf("request without max_tokens: status %d, error %+v; want 400 invalid_request_error naming max_tokens", resp.StatusCode, body.Error)
	}
}

func readEvents(r io.Reader) ([]sse.Event, error) {
	br := sse.NewReader(r, nil)
	var out []sse.Event
	for {
		ev, err := br.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

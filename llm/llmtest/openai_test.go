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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/llm"
)

// openaiGoldenTurn is the answer recorded in testdata/openai_stream.sse:
// text, one tool call and usage with cached tokens.
var openaiGoldenTurn = Turn{
	Text: "Let me check the weather.",
	ToolCalls: []llm.ToolCall{
		{ID: "call_01", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`},
	},
	Usage: llm.Usage{InputTokens: 120, OutputTokens: 31, CachedTokens: 100},
}

func postOpenAI(t *testing.T, ctx context.Context, url string, body map[string]any) *http.Response {
	t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	if _, ok := body["model"]; !ok {
		body["model"] = "gpt-4o-mini"
	}
	if _, ok := body["messages"]; !ok {
		body["messages"] = []map[string]any{{"role": "user", "content": "Weather in Paris?"}}
	}
	data, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

var streamWithUsage = map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}}

func TestOpenAIStreamGolden(t *testing.T) {
	srv := NewOpenAI(t, openaiGoldenTurn)
	resp := postOpenAI(t, t.Context(), srv.URL, streamWithUsage)
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}

	path := filepath.Join("testdata", "openai_stream.sse")
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

// wireChunk is the part of a chat.completion.chunk the tests look at.
type wireChunk struct {
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func readChunks(t *testing.T, r io.Reader) (chunks []wireChunk, done bool, err error) {
	t.Helper()
	events, err := readEvents(r)
	for _, ev := range events {
		if done {
			t.Errorf("event after [DONE]: %s", ev.Data)
		}
		if string(ev.Data) == "[DONE]" {
			done = true
			continue
		}
		var c wireChunk
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			t.Fatalf("chunk is not JSON: %v: %s", err, ev.Data)
		}
		chunks = append(chunks, c)
	}
	return chunks, done, err
}

// TestOpenAIStreamSequence checks the protocol rules the golden file
// embodies, so that an -update cannot bless a broken sequence.
func TestOpenAIStreamSequence(t *testing.T) {
	for _, includeUsage := range []bool{true, false} {
		t.Run(map[bool]string{true: "with usage", false: "without usage"}[includeUsage], func(t *testing.T) {
			srv := NewOpenAI(t, openaiGoldenTurn)
			body := map[string]any{"stream": true}
			if includeUsage {
				body = streamWithUsage
			}
			resp := postOpenAI(t, t.Context(), srv.URL, body)
			chunks, done, err := readChunks(t, resp.Body)
			if err != nil || !done {
				t.Fatalf("stream ended with err %v, [DONE] seen %v; want a clean end with [DONE]", err, done)
			}
			first := chunks[0]
			if first.Choices[0].Delta.Role != "assistant" {
				t.Errorf("first chunk has role %q, want assistant", first.Choices[0].Delta.Role)
			}
			var text, args strings.Builder
			var heads []string
			fragments := 0
			var reasons []string
			for i, c := range chunks {
				if c.Object != "chat.completion.chunk" {
					t.Errorf("chunk %d: object %q", i, c.Object)
				}
				last := i == len(chunks)-1
				switch {
				case includeUsage && !last && string(c.Usage) != "null":
					t.Errorf("chunk %d: usage = %s, want null before the usage chunk", i, c.Usage)
				case !includeUsage && c.Usage != nil:
					t.Errorf("chunk %d: usage = %s, want none: the request did not ask", i, c.Usage)
				}
				for _, ch := range c.Choices {
					if ch.Delta.Content != nil {
						text.WriteString(*ch.Delta.Content)
					}
					for _, tc := range ch.Delta.ToolCalls {
						if tc.ID != "" {
							heads = append(heads, tc.ID+" "+tc.Type+" "+tc.Function.Name)
						} else {
							fragments++
						}
						args.WriteString(tc.Function.Arguments)
					}
					if ch.FinishReason != nil {
						reasons = append(reasons, *ch.FinishReason)
					}
				}
			}
			if text.String() != openaiGoldenTurn.Text {
				t.Errorf("content joins to %q, want %q", text.String(), openaiGoldenTurn.Text)
			}
			if diff := cmp.Diff([]string{"call_01 function get_weather"}, heads); diff != "" {
				t.Errorf("tool call heads (-want +got):\n%s", diff)
			}
			if args.String() != openaiGoldenTurn.ToolCalls[0].Arguments {
				t.Errorf("arguments join to %q, want %q", args.String(), openaiGoldenTurn.ToolCalls[0].Arguments)
			}
			if fragments < 2 {
				t.Errorf("arguments sent in %d fragment(s), want several", fragments)
			}
			if diff := cmp.Diff([]string{"tool_calls"}, reasons); diff != "" {
				t.Errorf("finish reasons (-want +got):\n%s", diff)
			}
			if includeUsage {
				last := chunks[len(chunks)-1]
				if last.Choices == nil || len(last.Choices) != 0 {
					t.Errorf("usage chunk choices = %v, want []", last.Choices)
				}
				var u map[string]any
				if err := json.Unmarshal(last.Usage, &u); err != nil {
					t.Fatalf("usage: %v", err)
				}
				want := map[string]any{"prompt_tokens": 120.0, "completion_tokens": 31.0, "total_tokens": 151.0}
				got := map[string]any{"prompt_tokens": u["prompt_tokens"], "completion_tokens": u["completion_tokens"], "total_tokens": u["total_tokens"]}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("usage (-want +got):\n%s", diff)
				}
				if cached := u["prompt_tokens_details"].(map[string]any)["cached_tokens"]; cached != 100.0 {
					t.Errorf("cached_tokens = %v, want 100", cached)
				}
			}
		})
	}
}

func TestOpenAICompletion(t *testing.T) {
	srv := NewOpenAI(t, openaiGoldenTurn, Turn{Text: "cut", FinishReason: llm.FinishLength})
	var got []map[string]any
	for range 2 {
		resp := postOpenAI(t, t.Context(), srv.URL, nil)
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("decode completion: %v", err)
		}
		got = append(got, m)
	}
	usage := func(in, out, cached float64) map[string]any {
		return map[string]any{
			"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out,
			"prompt_tokens_details": map[string]any{"cached_tokens": cached, "audio_tokens": 0.0},
			"completion_tokens_details": map[string]any{"reasoning_tokens": 0.0, "audio_tokens": 0.0,
				"accepted_prediction_tokens": 0.0, "rejected_prediction_tokens": 0.0},
		}
	}
	want := []map[string]any{{
		"id": "chatcmpl-llmtest-1", "object": "chat.completion", "created": 1700000000.0, "model": "gpt-4o-mini",
		"choices": []any{map[string]any{
			"index": 0.0,
			"message": map[string]any{
				"role": "assistant", "content": "Let me check the weather.", "refusal": nil, "annotations": []any{},
				"tool_calls": []any{map[string]any{"id": "call_01", "type": "function",
					"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris","unit":"celsius"}`}}},
			},
			"logprobs": nil, "finish_reason": "tool_calls",
		}},
		"usage": usage(120, 31, 100), "service_tier": "default", "system_fingerprint": "fp_llmtest",
	}, {
		"id": "chatcmpl-llmtest-2", "object": "chat.completion", "created": 1700000000.0, "model": "gpt-4o-mini",
		"choices": []any{map[string]any{
			"index":    0.0,
			"message":  map[string]any{"role": "assistant", "content": "cut", "refusal": nil, "annotations": []any{}},
			"logprobs": nil, "finish_reason": "length",
		}},
		"usage": usage(0, 0, 0), "service_tier": "default", "system_fingerprint": "fp_llmtest",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("completions (-want +got):\n%s", diff)
	}
}

func TestOpenAIErrorFault(t *testing.T) {
	tests := []struct {
		status  int
		errType string
		code    any
	}{
		{400, "invalid_request_error", nil},
		{401, "invalid_request_error", "invalid_api_key"},
		{404, "invalid_request_error", "model_not_found"},
		{429, "requests", "rate_limit_exceeded"},
		{500, "server_error", nil},
		{503, "server_error", nil},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := NewOpenAI(t, Turn{Fault: &Fault{Status: tt.status, RetryAfter: "2", RetryAfterMs: "1500", Message: "scripted"}})
			resp := postOpenAI(t, t.Context(), srv.URL, streamWithUsage)
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
			want := map[string]any{"error": map[string]any{"message": "scripted", "type": tt.errType, "param": nil, "code": tt.code}}
			if diff := cmp.Diff(want, body); diff != "" {
				t.Errorf("error body (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("default message", func(t *testing.T) {
		srv := NewOpenAI(t, Turn{Fault: &Fault{Status: 429}})
		resp := postOpenAI(t, t.Context(), srv.URL, nil)
		var body openaiErrorJSON
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		if body.Error.Message == "" {
			t.Error("error message is empty, want OpenAI's default text")
		}
	})
}

func TestOpenAIInStreamError(t *testing.T) {
	srv := NewOpenAI(t, Turn{Chunks: []string{"ab", "cd", "ef", "gh"}, Fault: &Fault{AfterChunks: 2, Status: 503, Message: "overloaded"}})
	resp := postOpenAI(t, t.Context(), srv.URL, streamWithUsage)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200: the error comes inside the stream", resp.StatusCode)
	}
	chunks, done, err := readChunks(t, resp.Body)
	if err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if done {
		t.Error("stream with an in-stream error ends with [DONE]")
	}
	var text strings.Builder
	for _, c := range chunks {
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				text.WriteString(*ch.Delta.Content)
			}
		}
	}
	if text.String() != "abcd" {
		t.Errorf("text before the error = %q, want %q", text.String(), "abcd")
	}
	last := chunks[len(chunks)-1]
	want := `{"message":"overloaded","type":"server_error","param":null,"code":null}`
	if string(last.Error) != want {
		t.Errorf("last event error = %s, want %s", last.Error, want)
	}
}

func TestOpenAIFaultPastEnd(t *testing.T) {
	srv := NewOpenAI(t, Turn{Text: "hi", Fault: &Fault{AfterChunks: 50, Status: 500}})
	resp := postOpenAI(t, t.Context(), srv.URL, streamWithUsage)
	chunks, done, err := readChunks(t, resp.Body)
	if err != nil || done {
		t.Fatalf("stream ended with err %v, [DONE] seen %v; want the error event and no [DONE]", err, done)
	}
	for _, c := range chunks[:len(chunks)-1] {
		if len(c.Choices) > 0 && c.Choices[0].FinishReason != nil {
			t.Errorf("finish chunk sent before the fault")
		}
	}
	if chunks[len(chunks)-1].Error == nil {
		t.Errorf("last chunk is not the error")
	}
}

func TestOpenAITruncate(t *testing.T) {
	t.Run("stream", func(t *testing.T) {
		srv := NewOpenAI(t, Turn{Text: "abcdefghijklmnop", Fault: &Fault{AfterChunks: 1, Truncate: true}})
		resp := postOpenAI(t, t.Context(), srv.URL, streamWithUsage)
		got, err := io.ReadAll(resp.Body)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("reading a truncated stream: err = %v, want io.ErrUnexpectedEOF", err)
		}
		if bytes.Contains(got, []byte("[DONE]")) {
			t.Errorf("truncated stream holds [DONE]:\n%s", got)
		}
		if n := bytes.Count(got, []byte(`"content":"`)); n != 2 { // the role chunk's "" and one piece
			t.Errorf("%d content chunks before the cut, want 2:\n%s", n, got)
		}
	})
	t.Run("completion", func(t *testing.T) {
		srv := NewOpenAI(t, Turn{Text: "abcdefghijklmnop", Fault: &Fault{AfterChunks: 1, Truncate: true}})
		resp := postOpenAI(t, t.Context(), srv.URL, nil)
		if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("reading a truncated completion: err = %v, want io.ErrUnexpectedEOF", err)
		}
	})
}

func TestOpenAIStall(t *testing.T) {
	t.Run("client gives up", func(t *testing.T) {
		srv := NewOpenAI(t, Turn{Text: "abcdefgh", Fault: &Fault{AfterChunks: 1, Stall: time.Minute}})
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		resp := postOpenAI(t, ctx, srv.URL, streamWithUsage)
		if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("read err = %v, want deadline exceeded", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("stalled read took %v; the client deadline should end it", d)
		}
	})
	t.Run("close interrupts", func(t *testing.T) {
		srv := NewOpenAI(t, Turn{Text: "abcdefgh", Fault: &Fault{AfterChunks: 1, Stall: time.Minute}})
		resp := postOpenAI(t, t.Context(), srv.URL, streamWithUsage)
		br := sse.NewReader(resp.Body, nil)
		for range 2 { // the role chunk and the first piece, then the stall
			if _, err := br.Next(); err != nil {
				t.Fatalf("read before stall: %v", err)
			}
		}
		start := time.Now()
		srv.Close()
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Close took %v with a stalled answer", d)
		}
	})
	t.Run("stall elapses", func(t *testing.T) {
		srv := NewOpenAI(t, Turn{Text: "abcdefgh", Fault: &Fault{AfterChunks: 1, Stall: 50 * time.Millisecond}})
		start := time.Now()
		resp := postOpenAI(t, t.Context(), srv.URL, streamWithUsage)
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Errorf("answer took %v, want at least the 50ms stall", d)
		}
		if !bytes.HasSuffix(got, []byte("data: [DONE]\n\n")) {
			t.Errorf("stream after the stall does not end with [DONE]:\n%s", got)
		}
	})
}

func TestOpenAIModels(t *testing.T) {
	list := func(t *testing.T, srv *Server) []string {
		t.Helper()
		resp, err := http.Get(srv.URL + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Object string `json:"object"`
			Data   []struct {
				ID     string `json:"id"`
				Object string `json:"object"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range body.Data {
			ids = append(ids, m.ID)
		}
		return ids
	}
	srv := NewOpenAI(t, Turn{Text: "unused"})
	if diff := cmp.Diff([]string{"fake-model"}, list(t, srv)); diff != "" {
		t.Errorf("default models (-want +got):\n%s", diff)
	}
	srv.SetModels("llama3.2", "qwen2.5:7b")
	if diff := cmp.Diff([]string{"llama3.2", "qwen2.5:7b"}, list(t, srv)); diff != "" {
		t.Errorf("models after SetModels (-want +got):\n%s", diff)
	}
	if srv.Remaining() != 1 {
		t.Errorf("listing models consumed a turn: %d left, want 1", srv.Remaining())
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests recorded, want 2", n)
	}
}

func TestOpenAIUnknownRoute(t *testing.T) {
	srv := NewOpenAI(t, Turn{Text: "unused"})
	resp, err := http.Post(srv.URL+"/v1/embeddings", "application/json", strings.NewReader(`{"input":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /v1/embeddings: status %d, want 404", resp.StatusCode)
	}
}

func TestOpenAIStampAndPace(t *testing.T) {
	srv := NewOpenAI(t, Turn{Chunks: make([]string, 3), Pace: 20 * time.Millisecond, Stamp: true})
	start := time.Now()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body, nil)
	var stamps []int64
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if string(ev.Data) == "[DONE]" || json.Unmarshal(ev.Data, &ch) != nil || len(ch.Choices) == 0 || ch.Choices[0].Delta.Content == "" {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(ch.Choices[0].Delta.Content, " "), 10, 64)
		if err != nil {
			t.Fatalf("content %q is not a stamp", ch.Choices[0].Delta.Content)
		}
		stamps = append(stamps, n)
	}
	if len(stamps) != 3 {
		t.Fatalf("%d stamped chunks, want 3", len(stamps))
	}
	// The schedule is absolute (Turn.Pace): piece k is due Pace×(k+1)
	// after the answer began, which is after start. A piece sent late
	// under load shortens the gap to the next, so gaps are not checked;
	// no piece may come early.
	end := time.Now()
	for i, s := range stamps {
		due := start.Add(time.Duration(i+1) * 20 * time.Millisecond)
		if s < due.UnixNano() || s > end.UnixNano() {
			t.Errorf("stamp %d = %s: not within the request, or before its time %s", i, time.Unix(0, s).Format(time.StampMicro), due.Format(time.StampMicro))
		}
	}
}

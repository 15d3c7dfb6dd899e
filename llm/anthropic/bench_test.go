package anthropic_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/anthropic"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

// streamTranscript records the bytes the fake streams for turn, so that a
// benchmark replays them without the fake's own cost.
func streamTranscript(b *testing.B, turn llmtest.Turn) []byte {
	b.Helper()
	srv := llmtest.NewAnthropic(b, turn)
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"claude-bench","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"go"}]}`))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkStream streams a 200-delta answer. "adapter" is this package,
// which decodes the events itself; "sdk" is the bare SDK loop over the
// same bytes, what the adapter cost when it let the SDK decode (its
// mapping added little on top).
func BenchmarkStream(b *testing.B) {
	chunks := make([]string, 200)
	for i := range chunks {
		chunks[i] = "tok "
	}
	want := strings.Repeat("tok ", 200)
	transcript := streamTranscript(b, llmtest.Turn{Chunks: chunks, Usage: llm.Usage{InputTokens: 50, OutputTokens: 200}})
	srv, req := answerServer(b, "text/event-stream", transcript)

	b.Run("adapter", func(b *testing.B) {
		c, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "k"})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			var text strings.Builder
			n := 0
			for ev, err := range c.Stream(b.Context(), req) {
				if err != nil {
					b.Fatal(err)
				}
				text.WriteString(ev.Text)
				n++
			}
			if n != 201 || text.String() != want {
				b.Fatalf("got %d events, text %q", n, text.String())
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		client := sdk.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(srv.URL),
			option.WithAPIKey("k"), option.WithMaxRetries(0), option.WithHTTPClient(http.DefaultClient))
		params := sdk.MessageNewParams{Model: "claude-bench", MaxTokens: 4096,
			Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("go"))}}
		b.ReportAllocs()
		for b.Loop() {
			var text bytes.Buffer
			stream := client.Messages.NewStreaming(b.Context(), params)
			for stream.Next() {
				text.WriteString(stream.Current().Delta.Text)
			}
			if err := stream.Err(); err != nil {
				b.Fatal(err)
			}
			stream.Close()
			if text.String() != want {
				b.Fatalf("text %q", text.String())
			}
		}
	})
}

// BenchmarkGenerate decodes one whole answer (text and two tool calls).
// "adapter" is this package; "sdk" is the SDK's Messages.New over the
// same bytes, what Generate cost when it let the SDK send and decode.
func BenchmarkGenerate(b *testing.B) {
	turn := llmtest.Turn{
		Text: strings.Repeat("tok ", 200),
		ToolCalls: []llm.ToolCall{
			{ID: "toolu_1", Name: "search", Arguments: `{"q":"go generics","limit":5}`},
			{ID: "toolu_2", Name: "fetch", Arguments: `{"url":"https://go.dev/doc"}`},
		},
		Usage: llm.Usage{InputTokens: 50, OutputTokens: 230, CachedTokens: 20},
	}
	fake := llmtest.NewAnthropic(b, turn)
	resp, err := http.Post(fake.URL+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"claude-bench","max_tokens":1024,"messages":[{"role":"user","content":"go"}]}`))
	if err != nil {
		b.Fatal(err)
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	srv, req := answerServer(b, "application/json", answer)

	b.Run("adapter", func(b *testing.B) {
		c, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "k"})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.Generate(b.Context(), req)
			if err != nil {
				b.Fatal(err)
			}
			if len(resp.Message.ToolCalls) != 2 || resp.Message.Text() != turn.Text {
				b.Fatalf("answer %+v", resp.Message)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		client := sdk.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(srv.URL),
			option.WithAPIKey("k"), option.WithMaxRetries(0), option.WithHTTPClient(http.DefaultClient))
		params := sdk.MessageNewParams{Model: "claude-bench", MaxTokens: 4096,
			Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("go"))}}
		b.ReportAllocs()
		for b.Loop() {
			msg, err := client.Messages.New(b.Context(), params)
			if err != nil {
				b.Fatal(err)
			}
			if len(msg.Content) != 3 {
				b.Fatalf("%d content blocks", len(msg.Content))
			}
		}
	})
}

// answerServer answers every request with body as contentType, the bytes
// the adapter and the SDK both read, and returns it with the request the
// benchmarks send.
func answerServer(b *testing.B, contentType string, body []byte) (*httptest.Server, llm.Request) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	req := userRequest("go")
	req.Model = "claude-bench"
	return srv, req
}

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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(transcript)
	}))
	b.Cleanup(srv.Close)
	req := userRequest("go")
	req.Model = "claude-bench"

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

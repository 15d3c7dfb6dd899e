package openai_test

import (
	"fmt"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/llm/openai"
)

// answer200 is an answer streamed in 200 chunks.
func answer200() llmtest.Turn {
	chunks := make([]string, 200)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("word%03d ", i)
	}
	return llmtest.Turn{Chunks: chunks, Usage: llm.Usage{InputTokens: 50, OutputTokens: 200}}
}

// BenchmarkStream streams a 200-chunk answer from the fake through the
// adapter. Allocations include the fake server's, which runs in-process;
// the sdk peer, reading the same stream with the bare SDK, shows what the
// adapter adds.
func BenchmarkStream(b *testing.B) {
	req := llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "Count to 200.")}}
	b.Run("adapter", func(b *testing.B) {
		srv := llmtest.NewOpenAI(b)
		srv.Repeat(answer200())
		c, err := openai.New(&openai.Options{BaseURL: srv.URL + "/v1"})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			deltas := 0
			for ev, err := range c.Stream(b.Context(), req) {
				if err != nil {
					b.Fatal(err)
				}
				if ev.Type == llm.EventTextDelta {
					deltas++
				}
			}
			if deltas != 200 {
				b.Fatalf("%d deltas, want 200", deltas)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		srv := llmtest.NewOpenAI(b)
		srv.Repeat(answer200())
		chat := sdk.NewChatCompletionService(option.WithBaseURL(srv.URL+"/v1"), option.WithMaxRetries(0))
		params := sdk.ChatCompletionNewParams{
			Model:    "m",
			Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("Count to 200.")},
		}
		params.StreamOptions.IncludeUsage = sdk.Bool(true)
		b.ReportAllocs()
		for b.Loop() {
			stream := chat.NewStreaming(b.Context(), params)
			deltas := 0
			for stream.Next() {
				if c := stream.Current(); len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
					deltas++
				}
			}
			if err := stream.Err(); err != nil {
				b.Fatal(err)
			}
			stream.Close()
			if deltas != 200 {
				b.Fatalf("%d deltas, want 200", deltas)
			}
		}
	})
}

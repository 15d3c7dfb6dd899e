// Package llmtest serves fake OpenAI-compatible and Anthropic endpoints
// driven by scripted turns, with fault injection, so that adapters,
// middleware and the whole server are tested at the wire without a real
// provider or the internet.
//
// A test scripts what the fake answers, request by request:
//
//	srv := llmtest.NewOpenAI(t, llmtest.Turn{Text: "Hello"},
//		llmtest.Turn{Fault: &llmtest.Fault{Status: 429, RetryAfter: "1"}})
//	client := openai.New(&openai.Options{BaseURL: srv.URL + "/v1"})
//
// Each incoming request consumes the next Turn; requests past the end of
// the script get a 500 and fail the test.
package llmtest

import (
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
)

// Turn is the scripted answer to one request.
type Turn struct {
	// Text is the assistant's answer. When streamed it is split into
	// Chunks if given, else into pieces of a few characters.
	Text   string
	Chunks []string
	// ToolCalls are the calls the assistant asks for, in order. When
	// streamed, arguments are sent in several fragments.
	ToolCalls []llm.ToolCall
	// FinishReason defaults to tool_calls when ToolCalls is set, else stop.
	FinishReason llm.FinishReason
	// Usage is reported at the end of the answer.
	Usage llm.Usage
	// Pace, when set, spaces the streamed text pieces this far apart, as a
	// model generating tokens at a steady rate does (OpenAI fake): piece k
	// is due Pace×(k+1) after the answer began. The schedule is absolute,
	// so a piece sent late (the machine was busy) does not push back the
	// ones after it: streams started at different moments keep their
	// phase, as independent users' streams do, instead of drifting into
	// step with each other after every busy moment.
	Pace time.Duration
	// Stamp replaces each streamed text piece by the time it was sent, in
	// Unix nanoseconds followed by a space, so a benchmark measures how
	// long a chunk takes to reach the client (OpenAI fake).
	Stamp bool
	// Fault, when set, replaces or interrupts the answer.
	Fault *Fault
	// Check, when set, is called with the decoded request body (a map of
	// the provider's JSON) before answering; it may call t.Error.
	Check func(body map[string]any)
}

// Fault describes how the fake misbehaves on one request.
type Fault struct {
	// Status, when non-zero and AfterChunks is 0, answers with this HTTP
	// status and a provider-shaped error body instead of the answer.
	Status int
	// RetryAfter sets the retry-after header (seconds); RetryAfterMs sets
	// retry-after-ms.
	RetryAfter   string
	RetryAfterMs string
	// Message is the error message in the body.
	Message string
	// AfterChunks > 0 starts a normal 200 stream and misbehaves after that
	// many chunks were sent: with Status set, an in-stream error event
	// (Anthropic's overloaded_error for 529; OpenAI's error object);
	// with Truncate, the connection closes without the terminator; with
	// Stall, the server stops writing for that long (or until the client
	// goes away).
	AfterChunks int
	Truncate    bool
	Stall       time.Duration
}

package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/internal/sse"
	"github.com/agentcraftlab/agentcraft/llm"
)

// NewOpenAI starts a fake OpenAI-compatible API; point a client's base URL
// at srv.URL+"/v1".
//
// POST /v1/chat/completions answers with the next turn: one chat.completion
// object, or with "stream": true the chat.completion.chunk sequence OpenAI
// sends (a role chunk, content chunks, tool-call chunks whose first fragment
// carries id, type and name and whose arguments follow in several
// fragments, a chunk with finish_reason, a usage chunk with no choices when
// stream_options.include_usage is set, then data: [DONE]). GET /v1/models
// lists the ids given to SetModels, "fake-model" by default, and consumes no
// turn.
//
// Fault.AfterChunks counts the chunks that carry text or argument
// fragments. When the answer has fewer, the fault strikes after the last
// one, before the finish chunk, so a scripted fault is never skipped. An
// in-stream error is OpenAI's data: {"error":{...}} event, after which the
// response ends without [DONE].
func NewOpenAI(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	var n atomic.Int64
	answer := func(w http.ResponseWriter, r *http.Request, turn Turn, body map[string]any) {
		answerOpenAI(w, r, turn, body, fmt.Sprintf("chatcmpl-llmtest-%d", n.Add(1)))
	}
	return newServer(t, answer, turns, route{pattern: "GET /v1/models", serve: serveOpenAIModels})
}

const (
	// openaiPieceLen is the size of the text pieces streamed when a turn
	// gives no Chunks.
	openaiPieceLen = 4
	// openaiArgFragments is how many fragments a tool call's arguments are
	// cut into, so adapters must concatenate.
	openaiArgFragments = 3
	// openaiCreated is the fixed creation time of every answer, so that
	// transcripts are reproducible.
	openaiCreated = 1700000000
)

func answerOpenAI(w http.ResponseWriter, r *http.Request, turn Turn, body map[string]any, id string) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeOpenAIError(w, http.StatusNotFound, &Fault{Message: "Invalid URL (" + r.Method + " " + r.URL.Path + ")"})
		return
	}
	f := turn.Fault
	if f != nil && f.Status != 0 && f.AfterChunks == 0 {
		writeOpenAIError(w, f.Status, f)
		return
	}
	model, _ := body["model"].(string)
	ans := openaiAnswerFor(turn, id, model)
	if stream, _ := body["stream"].(bool); stream {
		opts, _ := body["stream_options"].(map[string]any)
		includeUsage, _ := opts["include_usage"].(bool)
		streamOpenAI(w, r, ans, f, includeUsage)
		return
	}
	writeOpenAICompletion(w, r, ans, f)
}

// openaiAnswer is a turn resolved into what both response shapes need.
type openaiAnswer struct {
	id, model string
	pieces    []string // text, as streamed
	calls     []llm.ToolCall
	reason    string
	usage     openaiUsage
	pace      time.Duration
	stamp     bool
}

func openaiAnswerFor(turn Turn, id, model string) openaiAnswer {
	a := openaiAnswer{id: id, model: model, pieces: turn.Pieces(openaiPieceLen), pace: turn.Pace, stamp: turn.Stamp}
	for i, c := range turn.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_llmtest_%d", i)
		}
		a.calls = append(a.calls, c)
	}
	a.reason = string(turn.FinishReason)
	if a.reason == "" {
		a.reason = string(llm.FinishStop)
		if len(turn.ToolCalls) > 0 {
			a.reason = string(llm.FinishToolCalls)
		}
	}
	u := turn.Usage
	a.usage = openaiUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.Total()}
	a.usage.PromptTokensDetails.CachedTokens = u.CachedTokens
	return a
}

// The wire types below follow the real API's field order, so that golden
// transcripts read like OpenAI's.

type openaiUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

type openaiCompletion struct {
	ID                string                   `json:"id"`
	Object            string                   `json:"object"`
	Created           int64                    `json:"created"`
	Model             string                   `json:"model"`
	Choices           []openaiCompletionChoice `json:"choices"`
	Usage             openaiUsage              `json:"usage"`
	ServiceTier       string                   `json:"service_tier"`
	SystemFingerprint string                   `json:"system_fingerprint"`
}

type openaiCompletionChoice struct {
	Index        int           `json:"index"`
	Message      openaiMessage `json:"message"`
	Logprobs     *struct{}     `json:"logprobs"`
	FinishReason string        `json:"finish_reason"`
}

type openaiMessage struct {
	Role        string           `json:"role"`
	Content     *string          `json:"content"`
	Refusal     *string          `json:"refusal"`
	ToolCalls   []openaiToolCall `json:"tool_calls,omitempty"`
	Annotations []struct{}       `json:"annotations"`
}

type openaiToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openaiChunk struct {
	ID                string              `json:"id"`
	Object            string              `json:"object"`
	Created           int64               `json:"created"`
	Model             string              `json:"model"`
	ServiceTier       string              `json:"service_tier"`
	SystemFingerprint string              `json:"system_fingerprint"`
	Choices           []openaiChunkChoice `json:"choices"`
	// Usage is null on every chunk but the last when the request asked for
	// usage, and absent otherwise.
	Usage json.RawMessage `json:"usage,omitempty"`
}

type openaiChunkChoice struct {
	Index        int         `json:"index"`
	Delta        openaiDelta `json:"delta"`
	Logprobs     *struct{}   `json:"logprobs"`
	FinishReason *string     `json:"finish_reason"`
}

type openaiDelta struct {
	Role      string            `json:"role,omitempty"`
	Content   *string           `json:"content,omitempty"`
	Refusal   json.RawMessage   `json:"refusal,omitempty"`
	ToolCalls []openaiToolDelta `json:"tool_calls,omitempty"`
}

type openaiToolDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// writeOpenAICompletion answers a non-streaming request. A fault meant for
// a stream (AfterChunks > 0) still bites: Status answers with that error,
// Stall delays the answer, Truncate cuts the body in half.
func writeOpenAICompletion(w http.ResponseWriter, r *http.Request, a openaiAnswer, f *Fault) {
	if f != nil && f.Status != 0 {
		writeOpenAIError(w, f.Status, f)
		return
	}
	if f != nil && f.Stall > 0 && !stall(r, f.Stall) {
		return
	}
	msg := openaiMessage{Role: "assistant", Annotations: []struct{}{}}
	if len(a.pieces) > 0 {
		text := strings.Join(a.pieces, "")
		msg.Content = &text
	}
	for _, c := range a.calls {
		var tc openaiToolCall
		tc.ID, tc.Type = c.ID, "function"
		tc.Function.Name, tc.Function.Arguments = c.Name, c.Arguments
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	data, err := json.Marshal(openaiCompletion{
		ID: a.id, Object: "chat.completion", Created: openaiCreated, Model: a.model,
		Choices:     []openaiCompletionChoice{{Message: msg, FinishReason: a.reason}},
		Usage:       a.usage,
		ServiceTier: "default", SystemFingerprint: "fp_llmtest",
	})
	if err != nil {
		writeOpenAIError(w, http.StatusInternalServerError, &Fault{Message: "llmtest: encode completion: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", "req_llmtest")
	if f != nil && f.Truncate {
		_, _ = w.Write(data[:len(data)/2])
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler) // drop the connection mid-body
	}
	_, _ = w.Write(data)
}

// streamOpenAI writes a as OpenAI's chunk sequence and injects f after
// f.AfterChunks content chunks.
func streamOpenAI(w http.ResponseWriter, r *http.Request, a openaiAnswer, f *Fault, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("X-Request-Id", "req_llmtest")
	sw := sse.NewWriter(w)

	var usageNull json.RawMessage
	if includeUsage {
		usageNull = json.RawMessage("null")
	}
	// send writes one chunk; a failed write means the client went away,
	// and the handler unwinds through http.ErrAbortHandler.
	send := func(v any) {
		data, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("llmtest: encode chunk: %v", err))
		}
		if err := sw.WriteData(data); err != nil {
			panic(http.ErrAbortHandler)
		}
	}
	chunk := func(d openaiDelta, reason *string) openaiChunk {
		return openaiChunk{
			ID: a.id, Object: "chat.completion.chunk", Created: openaiCreated, Model: a.model,
			ServiceTier: "default", SystemFingerprint: "fp_llmtest",
			Choices: []openaiChunkChoice{{Delta: d, FinishReason: reason}},
			Usage:   usageNull,
		}
	}
	// fault injects f once AfterChunks content chunks were sent (or, with
	// force, at once); it reports whether the stream must end here.
	sent := 0
	fault := func(force bool) (stop bool) {
		if f == nil || f.AfterChunks <= 0 || (sent < f.AfterChunks && !force) {
			return false
		}
		switch {
		case f.Status != 0:
			data, _ := json.Marshal(openaiErrorBody(f.Status, f))
			_ = sw.WriteData(data)
			return true
		case f.Truncate:
			panic(http.ErrAbortHandler) // drop the connection: no [DONE]
		case f.Stall > 0:
			d := f.Stall
			f = nil // stall once, then finish the answer
			return !stall(r, d)
		}
		return false
	}

	empty := ""
	send(chunk(openaiDelta{Role: "assistant", Content: &empty, Refusal: json.RawMessage("null")}, nil))
	// A stamped chunk is the same JSON each time but for the stamp: it is
	// encoded once and the stamp spliced in, so that the fake allocates
	// nothing per chunk and a benchmark's garbage collections are the
	// gateway's, not the fake's.
	var stampHead, stampTail, stampBuf []byte
	if a.stamp {
		mark := "\x00stamp\x00"
		tmpl, _ := json.Marshal(chunk(openaiDelta{Content: &mark}, nil))
		quoted, _ := json.Marshal(mark)
		i := bytes.Index(tmpl, quoted)
		stampHead, stampTail = tmpl[:i+1], tmpl[i+len(quoted)-1:]
	}
	begin := time.Now()
	for k, p := range a.pieces {
		if a.pace > 0 && !stall(r, time.Until(begin.Add(a.pace*time.Duration(k+1)))) {
			return
		}
		if a.stamp {
			stampBuf = append(append(strconv.AppendInt(append(stampBuf[:0], stampHead...), time.Now().UnixNano(), 10), ' '), stampTail...)
			if err := sw.WriteData(stampBuf); err != nil {
				panic(http.ErrAbortHandler)
			}
		} else {
			send(chunk(openaiDelta{Content: &p}, nil))
		}
		sent++
		if fault(false) {
			return
		}
	}
	for i, c := range a.calls {
		var head openaiToolDelta
		head.Index, head.ID, head.Type = i, c.ID, "function"
		head.Function.Name = c.Name
		send(chunk(openaiDelta{ToolCalls: []openaiToolDelta{head}}, nil))
		for _, frag := range splitN(c.Arguments, openaiArgFragments) {
			var d openaiToolDelta
			d.Index = i
			d.Function.Arguments = frag
			send(chunk(openaiDelta{ToolCalls: []openaiToolDelta{d}}, nil))
			sent++
			if fault(false) {
				return
			}
		}
	}
	if fault(true) {
		return
	}
	send(chunk(openaiDelta{}, &a.reason))
	if includeUsage {
		usage, _ := json.Marshal(a.usage)
		last := chunk(openaiDelta{}, nil)
		last.Choices, last.Usage = []openaiChunkChoice{}, usage
		send(last)
	}
	if err := sw.WriteData([]byte("[DONE]")); err != nil {
		panic(http.ErrAbortHandler)
	}
}

// openaiErrorJSON is OpenAI's error envelope.
type openaiErrorJSON struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// openaiErrorBody builds the error OpenAI sends for status; the messages
// and types are the real API's.
func openaiErrorBody(status int, f *Fault) openaiErrorJSON {
	var e openaiErrorJSON
	typ, code, msg := "invalid_request_error", "", http.StatusText(status)
	switch {
	case status == http.StatusUnauthorized:
		code, msg = "invalid_api_key", "Incorrect API key provided."
	case status == http.StatusNotFound:
		code, msg = "model_not_found", "The model does not exist or you do not have access to it."
	case status == http.StatusTooManyRequests:
		typ, code, msg = "requests", "rate_limit_exceeded", "Rate limit reached for requests."
	case status == http.StatusServiceUnavailable:
		typ, msg = "server_error", "The server is overloaded or not ready yet."
	case status >= 500:
		typ, msg = "server_error", "The server had an error while processing your request. Sorry about that!"
	}
	if f.Message != "" {
		msg = f.Message
	}
	e.Error.Message, e.Error.Type = msg, typ
	if code != "" {
		e.Error.Code = &code
	}
	return e
}

func writeOpenAIError(w http.ResponseWriter, status int, f *Fault) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.RetryAfterMs != "" {
		w.Header().Set("Retry-After-Ms", f.RetryAfterMs)
	}
	data, _ := json.Marshal(openaiErrorBody(status, f))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("X-Request-Id", "req_llmtest")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// serveOpenAIModels answers GET /v1/models with the ids set by SetModels.
// The request is recorded but consumes no turn.
func serveOpenAIModels(s *Server, w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
	ids := s.models
	if ids == nil {
		ids = []string{"fake-model"}
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range ids {
		list.Data = append(list.Data, model{ID: id, Object: "model", Created: openaiCreated, OwnedBy: "llmtest"})
	}
	s.mu.Unlock()
	data, _ := json.Marshal(list)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

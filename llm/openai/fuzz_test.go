package openai_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/openai"
)

// bodyTransport answers every request with one status and body, without
// a network: the fuzzer's bytes as a server's answer.
type bodyTransport struct {
	status int
	body   []byte
}

func (t bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: t.status, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(t.body)), Request: req}, nil
}

// FuzzAnswer feeds arbitrary bytes to both decoders, as a whole answer
// and as an event stream, with a success and an error status. Whatever a
// server sends, the adapter returns an answer or an *llm.Error; it never
// panics.
func FuzzAnswer(f *testing.F) {
	f.Add([]byte(`{"id":"c1","model":"m","choices":[{"message":{"content":"hi","tool_calls":[{"id":"t","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\",\"tool_calls\":[{\"index\":0,\"id\":\"x\",\"function\":{\"name\":\"f\",\"arguments\":\"{\"}}]}}]}\n\ndata: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":1}}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("event: error\ndata: {\"error\":{\"message\":\"overloaded\",\"code\":503}}\n\n"))
	f.Add([]byte(`{"error":"model not found"}`))
	f.Add([]byte(`<html>bad gateway</html>`))
	f.Add([]byte("data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"x\"}}],\"id\":7}\n\n"))
	req := llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, status := range []int{200, 429, 500} {
			c, err := openai.New(&openai.Options{BaseURL: "http://fuzz.invalid/v1", HTTPClient: &http.Client{Transport: bodyTransport{status, body}}})
			if err != nil {
				t.Fatal(err)
			}
			_, genErr := c.Generate(t.Context(), req)
			_, streamErr := llm.Collect(c.Stream(t.Context(), req))
			for _, err := range []error{genErr, streamErr} {
				var e *llm.Error
				if err != nil && !errors.As(err, &e) {
					t.Fatalf("status %d: error %v (%T) is not an *llm.Error", status, err, err)
				}
				if status != 200 && (e == nil || e.Status != status) {
					t.Fatalf("status %d: error %v does not carry the status", status, err)
				}
			}
		}
	})
}

// TestRequestContentHeaders checks what every call declares: a JSON
// body, and the answer it accepts (an event stream for streams).
func TestRequestContentHeaders(t *testing.T) {
	var got []http.Header
	c, err := openai.New(&openai.Options{BaseURL: "http://h.invalid/v1", HTTPClient: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r.Header.Clone())
		return bodyTransport{500, nil}.RoundTrip(r)
	})}})
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: "m", Messages: []llm.Message{llm.Text(llm.RoleUser, "hi")}}
	_, _ = c.Generate(t.Context(), req)
	_, _ = llm.Collect(c.Stream(t.Context(), req))
	_, _ = c.ListModels(t.Context())
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3", len(got))
	}
	for i, want := range []struct{ accept, ctype string }{
		{"application/json", "application/json"},
		{"text/event-stream", "application/json"},
		{"application/json", ""},
	} {
		if a, ct := got[i].Get("Accept"), got[i].Get("Content-Type"); a != want.accept || ct != want.ctype {
			t.Errorf("request %d: Accept %q Content-Type %q, want %q and %q", i, a, ct, want.accept, want.ctype)
		}
		if ua := got[i].Get("User-Agent"); ua == "" || ua == "Go-http-client/1.1" {
			t.Errorf("request %d: User-Agent %q does not name the adapter", i, ua)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Recorded is one request the fake received.
type Recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Server is a running fake provider. Close is registered with t.Cleanup.
type Server struct {
	// URL is the server's root, e.g. http://127.0.0.1:1234. OpenAI
	// clients use URL+"/v1" as base URL; Anthropic clients use URL.
	URL string

	t      testing.TB
	srv    *httptest.Server
	answer answerFunc

	mu       sync.Mutex // guards turns, next, requests
	turns    []Turn
	next     int
	requests []Recorded
}

// answerFunc writes the provider-specific answer for one turn.
type answerFunc func(w http.ResponseWriter, r *http.Request, turn Turn, body map[string]any)

func newServer(t testing.TB, answer answerFunc, turns []Turn) *Server {
	t.Helper()
	s := &Server{t: t, answer: answer, turns: turns}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Close shuts the server down, interrupting stalled answers.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Push appends turns to the script.
func (s *Server) Push(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// Requests returns a copy of the requests received so far.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.requests...)
}

// Remaining is the number of scripted turns not consumed yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) - s.next
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: raw})
	if s.next >= len(s.turns) {
		s.mu.Unlock()
		s.t.Errorf("llmtest: unscripted request %d to %s", len(s.requests), r.URL.Path)
		http.Error(w, `{"error":{"message":"llmtest: no scripted turn left"}}`, http.StatusInternalServerError)
		return
	}
	turn := s.turns[s.next]
	s.next++
	s.mu.Unlock()

	var body map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			s.t.Errorf("llmtest: request body is not JSON: %v", err)
		}
	}
	if turn.Check != nil {
		turn.Check(body)
	}
	s.answer(w, r, turn, body)
}

// Pieces splits the turn's text the way it is streamed: Chunks when
// given, else pieces of at most n bytes cut at rune boundaries.
func (t Turn) Pieces(n int) []string {
	if len(t.Chunks) > 0 {
		return t.Chunks
	}
	var out []string
	s := t.Text
	for len(s) > 0 {
		i := min(n, len(s))
		for i < len(s) && i > 0 && s[i]&0xC0 == 0x80 {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

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
	// RemoteAddr tells connections apart: two requests from one address
	// shared a kept-alive connection.
	RemoteAddr string
	Header     http.Header
	Body       []byte
}

// Server is a running fake provider. Close is registered with t.Cleanup.
type Server struct {
	// URL is the server's root, e.g. http://127.0.0.1:1234. OpenAI
	// clients use URL+"/v1" as base URL; Anthropic clients use URL.
	URL string

	t      testing.TB
	srv    *httptest.Server
	answer answerFunc

	mu       sync.Mutex // guards the fields below
	turns    []Turn
	next     int
	requests []Recorded
	models   []string
	active   int   // requests being answered
	repeat   *Turn // answers requests past the script, when set
	norecord bool  // stop recording requests (set by Repeat)
	respond  func(body []byte) (Turn, bool)
}

// answerFunc writes the provider-specific answer for one turn.
type answerFunc func(w http.ResponseWriter, r *http.Request, turn Turn, body map[string]any)

// route serves requests matching an http.ServeMux pattern without
// consuming a turn, e.g. "GET /v1/models".
type route struct {
	pattern string
	serve   func(s *Server, w http.ResponseWriter, r *http.Request)
}

func newServer(t testing.TB, answer answerFunc, turns []Turn, routes ...route) *Server {
	t.Helper()
	s := &Server{t: t, answer: answer, turns: turns}
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.serve)
	for _, rt := range routes {
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) { rt.serve(s, w, r) })
	}
	s.srv = httptest.NewServer(mux)
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

// SetModels sets the model ids the fake lists (GET /v1/models on the
// OpenAI fake); by default it lists "fake-model".
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), ids...)
}

// Repeat answers every request past the end of the script with turn, and
// stops recording requests. Benchmarks use it to serve any number of
// requests.
func (s *Server) Repeat(turn Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repeat = &turn
	s.norecord = true
}

// Respond answers each request whose body respond recognises (ok true)
// with the turn it returns, before the script is consulted: agents that
// run concurrently (sub-agents, parallel branches) ask in no fixed order,
// so a test scripts each by what its request holds.
func (s *Server) Respond(respond func(body []byte) (turn Turn, ok bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = respond
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

// Active is the number of requests being answered right now. A test
// proves that a client's disconnect reached the provider by watching a
// stalled answer end.
func (s *Server) Active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.active--
		s.mu.Unlock()
	}()
	raw, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	if !s.norecord {
		s.requests = append(s.requests, Recorded{Method: r.Method, Path: r.URL.Path, RemoteAddr: r.RemoteAddr, Header: r.Header.Clone(), Body: raw})
	}
	if s.respond != nil {
		respond := s.respond
		s.mu.Unlock()
		if turn, ok := respond(raw); ok {
			s.answerTurn(w, r, turn, raw)
			return
		}
		s.mu.Lock()
	}
	if s.next >= len(s.turns) && s.repeat != nil {
		turn := *s.repeat
		s.mu.Unlock()
		s.answerTurn(w, r, turn, raw)
		return
	}
	if s.next >= len(s.turns) {
		s.mu.Unlock()
		s.t.Errorf("llmtest: unscripted request %d to %s", len(s.requests), r.URL.Path)
		http.Error(w, `{"error":{"message":"llmtest: no scripted turn left"}}`, http.StatusInternalServerError)
		return
	}
	turn := s.turns[s.next]
	s.next++
	s.mu.Unlock()
	s.answerTurn(w, r, turn, raw)
}

func (s *Server) answerTurn(w http.ResponseWriter, r *http.Request, turn Turn, raw []byte) {
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

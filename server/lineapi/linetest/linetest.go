// Package linetest is a strict fake of the LINE Messaging API for tests of
// code that sends to LINE (package lineapi), and builders of the signed
// webhook bodies LINE sends.
//
// New starts the fake on httptest; point the code under test at URL. The
// fake serves POST /v2/bot/message/reply and POST /v2/bot/message/push,
// requires the channel access token as a Bearer token, decodes bodies
// strictly (an unknown field is a 400, as a typo would be lost on LINE) and
// enforces the platform's limits: at most 5 messages, text of at most 5000
// characters, Flex altText of at most 400, a bubble of at most 30 KB,
// postback data of at most 300 bytes and action labels of at most 20
// characters. A reply token is accepted once and only when the fake issued
// it (IssueReplyToken), so a test cannot pass by replying with a token
// LINE would refuse. A push's X-Line-Retry-Key must be a UUID; a key seen
// before gets 409 and no second delivery, as on LINE. FailNext injects an
// error status.
//
// Characters are counted in UTF-16 code units, as LINE counts them.
package linetest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/line/line-bot-sdk-go/v8/linebot/messaging_api"
)

// Server is the fake Messaging API.
type Server struct {
	srv   *httptest.Server
	token string

	// mu guards every field below.
	mu       sync.Mutex
	issued   map[string]bool // reply token → used
	keys     map[string]bool // push retry keys accepted
	replies  []Reply
	pushes   []Push
	failNext []int
	calls    int
	seq      int
}

// Reply is a delivered reply.
type Reply struct {
	ReplyToken string
	Messages   []Message
}

// Push is a delivered push.
type Push struct {
	To       string
	RetryKey string
	Messages []Message
}

// New starts a fake that accepts channelAccessToken; it stops when the
// test ends.
func New(t testing.TB, channelAccessToken string) *Server {
	t.Helper()
	s := &Server{token: channelAccessToken, issued: map[string]bool{}, keys: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/bot/message/reply", s.serveReply)
	mux.HandleFunc("POST /v2/bot/message/push", s.servePush)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "linetest: "+r.Method+" "+r.URL.Path+" is not served by the fake")
	})
	s.srv = httptest.NewServer(s.auth(mux))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL of the fake (lineapi.Options.APIBaseURL).
func (s *Server) URL() string { return s.srv.URL }

// Client is an HTTP client for the fake.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// IssueReplyToken returns a reply token the fake accepts once, as LINE
// issues one with each webhook event.
func (s *Server) IssueReplyToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.issued[tok] = false
	return tok
}

// FailNext makes the next authenticated request fail with status (429
// also sends Retry-After); calls queue up. Nothing is delivered or
// recorded by a failed request, so a retry can succeed.
func (s *Server) FailNext(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = append(s.failNext, status)
}

// Replies returns the replies delivered so far.
func (s *Server) Replies() []Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.replies)
}

// Pushes returns the pushes delivered so far.
func (s *Server) Pushes() []Push {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pushes)
}

// Calls counts the requests the fake answered, refused ones included.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls++
		s.mu.Unlock()
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || tok != s.token {
			writeError(w, http.StatusUnauthorized, "Authentication failed due to the following reason: invalid token. Confirm that the access token in the authorization header is valid.")
			return
		}
		s.mu.Lock()
		status := 0
		if len(s.failNext) > 0 {
			status, s.failNext = s.failNext[0], s.failNext[1:]
		}
		s.mu.Unlock()
		if status != 0 {
			if status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
			}
			writeError(w, status, fmt.Sprintf("linetest: injected status %d", status))
			return
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			writeError(w, http.StatusUnsupportedMediaType, "The request body must be JSON (Content-Type application/json), not "+ct)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// replyRequest and pushRequest mirror the SDK's request bodies field for
// field, so that DisallowUnknownFields catches anything LINE would ignore.
type replyRequest struct {
	ReplyToken           string            `json:"replyToken"`
	Messages             []json.RawMessage `json:"messages"`
	NotificationDisabled bool              `json:"notificationDisabled"`
}

type pushRequest struct {
	To                     string            `json:"to"`
	Messages               []json.RawMessage `json:"messages"`
	NotificationDisabled   bool              `json:"notificationDisabled"`
	CustomAggregationUnits []string          `json:"customAggregationUnits"`
}

func (s *Server) serveReply(w http.ResponseWriter, r *http.Request) {
	var req replyRequest
	if err := decodeStrict(r, &req, &messaging_api.ReplyMessageRequest{}); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	msgs, err := checkMessages(req.Messages)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if used, ok := s.issued[req.ReplyToken]; !ok || used {
		writeError(w, http.StatusBadRequest, "Invalid reply token")
		return
	}
	s.issued[req.ReplyToken] = true
	s.replies = append(s.replies, Reply{ReplyToken: req.ReplyToken, Messages: msgs})
	s.writeSent(w, len(msgs))
}

func (s *Server) servePush(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-Line-Retry-Key")
	if key != "" && !isUUID(key) {
		writeError(w, http.StatusBadRequest, "The value of the X-Line-Retry-Key header is invalid: it must be a UUID such as 123e4567-e89b-12d3-a456-426614174000")
		return
	}
	var req pushRequest
	if err := decodeStrict(r, &req, &messaging_api.PushMessageRequest{}); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !isChatID(req.To) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("The property, 'to', in the request body is invalid (%q): it must be a user, group or room id (U, C or R and 32 hex digits)", req.To))
		return
	}
	msgs, err := checkMessages(req.Messages)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if key != "" {
		if s.keys[key] {
			w.Header().Set("X-Line-Accepted-Request-Id", "accepted-"+key)
			writeError(w, http.StatusConflict, "The retry key is already accepted")
			return
		}
		s.keys[key] = true
	}
	s.pushes = append(s.pushes, Push{To: req.To, RetryKey: key, Messages: msgs})
	s.writeSent(w, len(msgs))
}

// writeSent answers success as LINE does. Called with s.mu held.
func (s *Server) writeSent(w http.ResponseWriter, n int) {
	type sent struct {
		ID         string `json:"id"`
		QuoteToken string `json:"quoteToken"`
	}
	out := struct {
		SentMessages []sent `json:"sentMessages"`
	}{}
	for range n {
		s.seq++
		out.SentMessages = append(out.SentMessages, sent{ID: fmt.Sprint(460000000000000000 + s.seq), QuoteToken: fmt.Sprintf("q%d", s.seq)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// decodeStrict decodes the body into v, the mirror of the request type
// refusing unknown fields, and into sdk, the official SDK's generated
// request type, whose discriminated unions (message types, flex
// components and actions) refuse a type the platform does not know.
func decodeStrict(r *http.Request, v, sdk any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 2<<20))
	if err != nil {
		return fmt.Errorf("the request body has 1 error(s): %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the request body has 1 error(s): %w", err)
	}
	if dec.More() {
		return errors.New("the request body has 1 error(s): trailing data after the JSON object")
	}
	if err := json.Unmarshal(body, sdk); err != nil {
		return fmt.Errorf("the request body has 1 error(s): it does not decode into the SDK's %T: %w", sdk, err)
	}
	return nil
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isChatID(s string) bool {
	if len(s) != 33 || (s[0] != 'U' && s[0] != 'C' && s[0] != 'R') {
		return false
	}
	for _, c := range s[1:] {
		if !isHex(c) || (c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func isHex(c rune) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// Sign returns the x-line-signature of body: base64(HMAC-SHA256(secret,
// body)).
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/memory"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
)

// The conversation and memory API. Every route acts for the caller's
// principal (memory.Owner): a conversation or personal memory of another
// owner answers 404, as an unknown id does.
//
//	POST   /api/conversations            {title, agent, external_ref} → 201 the conversation
//	GET    /api/conversations            ?limit&cursor → {data, next}, newest first
//	GET    /api/conversations/{id}       ?after&limit → the conversation with its messages
//	PATCH  /api/conversations/{id}       {title}
//	DELETE /api/conversations/{id}       → 204, with its messages and memories
//	POST   /api/memories                 {text, scope, visibility, conversation_id, source} → 201
//	GET    /api/memories                 ?scope&conversation_id&mine&limit&cursor → {data, next}
//	GET    /api/memories?q=…             ?conversation_id&top_k → {data: [memory + score]}, hybrid search
//	GET    /api/memories/{id}
//	PATCH  /api/memories/{id}            {text} (its owner only: 403 otherwise)
//	DELETE /api/memories/{id}            → 204 (its owner only)
func (s *Server) registerConversations() {
	for _, rt := range []struct {
		pattern string
		perm    identity.Permission
		h       http.HandlerFunc
	}{
		{"POST /api/conversations", identity.PermChat, s.createConversation},
		{"GET /api/conversations", identity.PermRead, s.listConversations},
		{"GET /api/conversations/{id}", identity.PermRead, s.getConversation},
		{"PATCH /api/conversations/{id}", identity.PermChat, s.renameConversation},
		{"DELETE /api/conversations/{id}", identity.PermChat, s.deleteConversation},
	} {
		s.handle(rt.pattern, rt.perm, s.needConversations(rt.h))
	}
	for _, rt := range []struct {
		pattern string
		perm    identity.Permission
		h       http.HandlerFunc
	}{
		{"POST /api/memories", identity.PermChat, s.createMemory},
		{"GET /api/memories", identity.PermRead, s.listMemories},
		{"GET /api/memories/{id}", identity.PermRead, s.getMemory},
		{"PATCH /api/memories/{id}", identity.PermChat, s.updateMemory},
		{"DELETE /api/memories/{id}", identity.PermChat, s.deleteMemory},
	} {
		s.handle(rt.pattern, rt.perm, s.needMemories(rt.h))
	}
}

func (s *Server) needConversations(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Conversations == nil {
			apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "conversations_not_configured",
				Message: "conversations are not configured on this server (server.Options.Conversations)"})
			return
		}
		h(w, r)
	}
}

func (s *Server) needMemories(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Memories == nil {
			apierr.Write(w, &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: "memory_not_configured",
				Message: "memory is not configured on this server: it was started without a search engine"})
			return
		}
		h(w, r)
	}
}

// principal is the run principal of the request.
func principal(r *http.Request) run.Principal {
	pr, _ := platform.PrincipalFrom(r.Context())
	return run.PrincipalOf(pr)
}

// memoryError maps the errors of package memory to API errors.
func memoryError(w http.ResponseWriter, err error, what, id string) {
	switch {
	case errors.Is(err, memory.ErrNotOwner):
		apierr.Write(w, &apierr.Error{Status: http.StatusForbidden, Type: apierr.TypePermission, Code: "not_owner", Message: err.Error()})
	case errors.Is(err, memory.ErrPIIBlocked):
		apierr.Write(w, &apierr.Error{Status: http.StatusUnprocessableEntity, Type: apierr.TypeInvalidRequest, Code: "pii_blocked", Message: err.Error()})
	case errors.Is(err, memory.ErrUnknownConversation):
		apierr.Write(w, apierr.NotFound("conversation_not_found", "the conversation does not exist"))
	case errors.Is(err, store.ErrNotFound) && id != "":
		apierr.Write(w, apierr.NotFound("not_found", what+" "+strconv.Quote(id)+" does not exist"))
	default:
		storeError(w, err)
	}
}

// queryInt reads the non-negative integer query parameter name (0 when
// absent); on failure it has answered 400.
func queryInt(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		apierr.Write(w, apierr.BadRequest(name, name+" must be a non-negative integer"))
		return 0, false
	}
	return n, true
}

type conversationBody struct {
	Title       string `json:"title"`
	Agent       string `json:"agent"`
	ExternalRef string `json:"external_ref"`
}

func (s *Server) createConversation(w http.ResponseWriter, r *http.Request) {
	var b conversationBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	cv, err := s.opts.Conversations.Create(r.Context(), principal(r), memory.NewConversation{
		Title: strings.TrimSpace(b.Title), Agent: strings.TrimSpace(b.Agent), ExternalRef: strings.TrimSpace(b.ExternalRef)})
	if err != nil {
		memoryError(w, err, "conversation", "")
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, cv)
}

func (s *Server) listConversations(w http.ResponseWriter, r *http.Request) {
	limit, ok := queryInt(w, r, "limit")
	if !ok {
		return
	}
	page, err := s.opts.Conversations.List(r.Context(), principal(r), int(limit), r.URL.Query().Get("cursor"))
	if err != nil {
		memoryError(w, err, "conversation", "")
		return
	}
	if page.Conversations == nil {
		page.Conversations = []store.Conversation{}
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
}

// conversationWithMessages is GET /api/conversations/{id}.
type conversationWithMessages struct {
	store.Conversation
	Messages []store.Message `json:"messages"`
}

func (s *Server) getConversation(w http.ResponseWriter, r *http.Request) {
	after, ok := queryInt(w, r, "after")
	if !ok {
		return
	}
	limit, ok := queryInt(w, r, "limit")
	if !ok {
		return
	}
	p, id := principal(r), r.PathValue("id")
	cv, err := s.opts.Conversations.Get(r.Context(), p, id)
	if err != nil {
		memoryError(w, err, "conversation", id)
		return
	}
	msgs, err := s.opts.Conversations.Messages(r.Context(), p, id, after, int(limit))
	if err != nil {
		memoryError(w, err, "conversation", id)
		return
	}
	if msgs == nil {
		msgs = []store.Message{}
	}
	httpapi.WriteJSON(w, http.StatusOK, conversationWithMessages{Conversation: cv, Messages: msgs})
}

func (s *Server) renameConversation(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Title string `json:"title"`
	}
	if !s.decodeBody(w, r, &b) {
		return
	}
	id := r.PathValue("id")
	cv, err := s.opts.Conversations.Rename(r.Context(), principal(r), id, strings.TrimSpace(b.Title))
	if err != nil {
		memoryError(w, err, "conversation", id)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, cv)
}

func (s *Server) deleteConversation(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.opts.Conversations.Delete(r.Context(), principal(r), id); err != nil {
		memoryError(w, err, "conversation", id)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type memoryBody struct {
	Text           string                 `json:"text"`
	Scope          store.MemoryScope      `json:"scope"`
	Visibility     store.MemoryVisibility `json:"visibility"`
	ConversationID string                 `json:"conversation_id"`
	Source         string                 `json:"source"`
}

// createMemory stores the text as given: the caller writes their own
// memory, with no model in between (agents' remember applies the agent's
// PII policy).
func (s *Server) createMemory(w http.ResponseWriter, r *http.Request) {
	var b memoryBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	if b.Source == "" {
		b.Source = "api"
	}
	m, err := s.opts.Memories.Remember(r.Context(), principal(r), memory.Note{Scope: b.Scope, Visibility: b.Visibility,
		ConversationID: b.ConversationID, Text: b.Text, Source: b.Source}, nil)
	if err != nil && m.ID == "" {
		memoryError(w, err, "conversation", b.ConversationID)
		return
	}
	if err != nil {
		// Stored, not yet searchable: the next index check rebuilds it.
		s.logger.WarnContext(r.Context(), "memory_index_failed", "workspace_id", m.WorkspaceID, "memory_id", m.ID, "error", err)
	}
	httpapi.WriteJSON(w, http.StatusCreated, m)
}

func (s *Server) listMemories(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := principal(r)
	limit, ok := queryInt(w, r, "limit")
	if !ok {
		return
	}
	if text := q.Get("q"); text != "" {
		k, ok := queryInt(w, r, "top_k")
		if !ok {
			return
		}
		hits, err := s.opts.Memories.Recall(r.Context(), p, text, memory.RecallOptions{ConversationID: q.Get("conversation_id"), TopK: int(k)})
		if err != nil {
			memoryError(w, err, "conversation", q.Get("conversation_id"))
			return
		}
		if hits == nil {
			hits = []memory.Recalled{}
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": hits})
		return
	}
	page, err := s.opts.Memories.List(r.Context(), p, memory.ListFilter{Scope: store.MemoryScope(q.Get("scope")),
		ConversationID: q.Get("conversation_id"), Mine: q.Get("mine") == "true", Limit: int(limit), Cursor: q.Get("cursor")})
	if err != nil {
		memoryError(w, err, "memory", "")
		return
	}
	if page.Memories == nil {
		page.Memories = []store.Memory{}
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
}

func (s *Server) getMemory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	m, err := s.opts.Memories.Get(r.Context(), principal(r), id)
	if err != nil {
		memoryError(w, err, "memory", id)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, m)
}

func (s *Server) updateMemory(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Text string `json:"text"`
	}
	if !s.decodeBody(w, r, &b) {
		return
	}
	id := r.PathValue("id")
	m, err := s.opts.Memories.Update(r.Context(), principal(r), id, b.Text)
	if err != nil && m.ID == "" {
		memoryError(w, err, "memory", id)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, m)
}

func (s *Server) deleteMemory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.opts.Memories.Forget(r.Context(), principal(r), id); err != nil {
		memoryError(w, err, "memory", id)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

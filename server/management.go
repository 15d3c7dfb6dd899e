package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/strictjson"
	"github.com/agentcraftlab/agentcraft/llm/middleware"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/skill"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

func (s *Server) registerManagement() {
	s.handle("GET /api/agents", identity.PermRead, s.listAgents)
	s.handle("POST /api/agents", identity.PermEdit, s.createAgent)
	s.handle("GET /api/agents/{id}", identity.PermRead, s.getAgent)
	s.handle("PUT /api/agents/{id}", identity.PermEdit, s.updateAgent)
	s.handle("DELETE /api/agents/{id}", identity.PermEdit, s.deleteAgent)
	s.handle("POST /api/credentials", identity.PermManageCredentials, s.putCredential)
	s.handle("GET /api/credentials", identity.PermManageCredentials, s.listCredentials)
	s.handle("DELETE /api/credentials/{provider}", identity.PermManageCredentials, s.deleteCredential)
	s.handle("GET /api/providers", identity.PermRead, s.listProviders)
	s.handle("GET /api/tools", identity.PermRead, s.listTools)
	s.handle("POST /api/tools/openapi", identity.PermManageTools, s.importOpenAPI)
	s.handle("DELETE /api/tools/openapi/{name}", identity.PermManageTools, s.deleteOpenAPIImport)
	s.handle("POST /api/tools/settings", identity.PermManageTools, s.setToolSettings)
	s.handle("GET /api/mcp/servers", identity.PermRead, s.listMCPServers)
	s.handle("POST /api/mcp/servers", identity.PermManageTools, s.addMCPServer)
	s.handle("DELETE /api/mcp/servers/{name}", identity.PermManageTools, s.deleteMCPServer)
	s.handle("POST /api/mcp/servers/{name}/test", identity.PermManageTools, s.testMCPServer)
	s.handle("GET /api/usage", identity.PermRead, s.usage)
	s.registerBudget()
}

// queryLimit reads the limit query parameter of a list: def when absent;
// a value outside 1..max is answered with a 400 naming it, and ok is
// false. Every list of the API reads its limit here.
func queryLimit(w http.ResponseWriter, r *http.Request, def, max int) (n int, ok bool) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		apierr.Write(w, apierr.BadRequest("limit", fmt.Sprintf("limit %q must be a number from 1 to %d", v, max)))
		return 0, false
	}
	return n, true
}

func workspace(r *http.Request) string {
	pr, _ := platform.PrincipalFrom(r.Context())
	return pr.WorkspaceID
}

// decodeBody reads a JSON object into v, strictly (httpapi.DecodeBody).
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	return httpapi.DecodeBody(w, r, s.opts.MaxBodyBytes, v)
}

// agentMiddleware is the shape of an agent's middleware object (what
// platform keeps in store.AgentParams.Middleware), against which the API
// refuses unknown keys: the body keeps it as raw JSON, which
// DisallowUnknownFields does not look into.
type agentMiddleware struct {
	middleware.Settings
	ToolProgress bool `json:"tool_progress"`
}

// checkMiddleware refuses an unknown key inside the agent's middleware,
// naming its path (middleware.gaurd).
func (b agentBody) checkMiddleware(w http.ResponseWriter) bool {
	var unknown *strictjson.UnknownFieldError
	if errors.As(strictjson.Check(b.Middleware, &agentMiddleware{}, "middleware"), &unknown) {
		apierr.Write(w, apierr.BadRequest(unknown.Path, "request body is not valid: "+unknown.Error()))
		return false
	}
	return true
}

// storeError maps store and platform errors to API errors. Store errors
// get plain messages: what the store says after its sentinel (a
// validation message, "workspace does not exist"), never the operation or
// driver text before it (sqlite: create agent …).
func storeError(w http.ResponseWriter, err error) { storeErrorAbout(w, err, "", "") }

// storeErrorAbout is storeError for a request about the thing named name
// of kind what ("agent", "workflow"), whose not-found and conflict
// messages then say which: an agent named "x" already exists.
func storeErrorAbout(w http.ResponseWriter, err error, what, name string) {
	apierr.Write(w, storeAPIError(err, what, name))
}

// storeAPIError is the API error storeErrorAbout writes.
func storeAPIError(err error, what, name string) *apierr.Error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		msg := plainStoreMessage(err, store.ErrNotFound, "not found")
		if what != "" && name != "" {
			msg = fmt.Sprintf("%s %q does not exist in this workspace", what, name)
		}
		return apierr.NotFound("not_found", msg)
	case errors.Is(err, platform.ErrConfigAgent):
		return &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "defined_in_config", Message: err.Error()}
	case errors.Is(err, store.ErrConflict):
		msg := plainStoreMessage(err, store.ErrConflict, "conflict with what is stored")
		if what != "" && name != "" && msg == "already exists" {
			msg = fmt.Sprintf("%s %s named %q already exists in this workspace: choose another name", article(what), what, name)
		}
		return &apierr.Error{Status: http.StatusConflict, Type: apierr.TypeInvalidRequest, Code: "conflict", Message: msg}
	case errors.Is(err, store.ErrInvalid):
		return apierr.BadRequest("", plainStoreMessage(err, store.ErrInvalid, "invalid input"))
	case errors.Is(err, platform.ErrUnknownProvider), errors.Is(err, tool.ErrUnknownTool), errors.Is(err, platform.ErrInvalidAgent),
		errors.Is(err, platform.ErrInvalidMCPServer):
		return apierr.BadRequest("", err.Error())
	}
	return &apierr.Error{Status: http.StatusInternalServerError, Type: apierr.TypeServer, Code: "internal", Message: "internal error"}
}

// agentError writes err of creating or updating the agent called name,
// with param naming the field of the agent body it is about (name for a
// name taken, model for an unknown provider, tools for an unknown tool),
// so that a form shows the message beside that field.
func agentError(w http.ResponseWriter, err error, name string) {
	e := storeAPIError(err, "agent", name)
	switch {
	case errors.Is(err, store.ErrConflict), errors.Is(err, platform.ErrConfigAgent):
		e.Param = "name"
	case errors.Is(err, platform.ErrUnknownProvider):
		e.Param = "model"
	case errors.Is(err, tool.ErrUnknownTool):
		e.Param = "tools"
	case errors.As(err, new(*skill.NameError)):
		e.Param = "skills"
	}
	apierr.Write(w, e)
}

// plainStoreMessage is the part of err's text a client may read: what
// follows the sentinel ("store: conflict: already exists" → "already
// exists"), else what precedes it when no driver wrote it (kb: knowledge
// base "x" does not exist in this workspace), else fallback.
func plainStoreMessage(err, sentinel error, fallback string) string {
	before, after, found := strings.Cut(err.Error(), sentinel.Error())
	if after = strings.TrimSpace(strings.TrimPrefix(after, ":")); after != "" {
		return after
	}
	before = strings.TrimSuffix(strings.TrimSpace(before), ":")
	if !found || before == "" || strings.Contains(before, "sqlite:") || strings.Contains(before, "postgres:") {
		return fallback
	}
	return before
}

func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an"
	}
	return "a"
}

// agentBody is the JSON of an agent in the management API: the keys of
// an agent in agentcraft.yaml (platform.AgentSpec), the same names and
// meanings — guard, pii, rate_limit, retry and logging at the top level,
// tool_timeout as a duration ("60s", or a number of seconds),
// tool_progress. The older spellings middleware {…} and
// tool_timeout_seconds are still accepted (TestAgentBodyTakesEveryFileKey
// holds the two schemas together).
type agentBody struct {
	Name               string                 `json:"name"`
	Model              string                 `json:"model"`
	Instructions       string                 `json:"instructions"`
	Tools              []string               `json:"tools"`
	Temperature        *float64               `json:"temperature"`
	MaxTokens          int                    `json:"max_tokens"`
	MaxSteps           int                    `json:"max_steps"`
	TokenBudget        int                    `json:"token_budget"`
	ToolTimeout        apiDuration            `json:"tool_timeout"`
	MaxToolResultBytes int                    `json:"max_tool_result_bytes"`
	ToolProgress       bool                   `json:"tool_progress"`
	KnowledgeBases     []string               `json:"knowledge_bases"`
	Memory             *store.AgentMemory     `json:"memory"`
	Skills             []string               `json:"skills"`
	Autonomous         *store.AgentAutonomous `json:"autonomous"`
	// Settings are guard, pii, rate_limit, retry and logging, inline.
	middleware.Settings

	// Middleware and ToolTimeoutSeconds are the older spellings.
	Middleware         json.RawMessage `json:"middleware"`
	ToolTimeoutSeconds int             `json:"tool_timeout_seconds"`
}

// apiDuration is a duration in JSON: a Go duration string ("90s",
// "1m30s") or a number of seconds.
type apiDuration time.Duration

func (d *apiDuration) UnmarshalJSON(b []byte) error {
	var sec float64
	if err := json.Unmarshal(b, &sec); err == nil {
		if sec < 0 {
			return fmt.Errorf("tool_timeout: %v seconds is negative", sec)
		}
		*d = apiDuration(time.Duration(sec * float64(time.Second)))
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("tool_timeout: want a duration such as \"60s\" or a number of seconds")
	}
	v, err := time.ParseDuration(str)
	if err != nil || v < 0 {
		return fmt.Errorf("tool_timeout: %q is not a duration such as \"60s\"", str)
	}
	*d = apiDuration(v)
	return nil
}

// row is the stored agent the body defines; an error is a 400 naming the
// field.
func (b agentBody) row(ws string) (store.Agent, *apierr.Error) {
	spec := platform.AgentSpec{
		Name: strings.TrimSpace(b.Name), Model: strings.TrimSpace(b.Model), Instructions: b.Instructions, Tools: b.Tools,
		Temperature: b.Temperature, MaxTokens: b.MaxTokens, MaxSteps: b.MaxSteps, TokenBudget: b.TokenBudget,
		ToolTimeout: time.Duration(b.ToolTimeout), MaxToolResultBytes: b.MaxToolResultBytes, ToolProgress: b.ToolProgress,
		KnowledgeBases: b.KnowledgeBases, Memory: b.Memory, Skills: b.Skills, Autonomous: b.Autonomous, Middleware: b.Settings,
	}
	if b.ToolTimeoutSeconds != 0 {
		if b.ToolTimeout != 0 {
			return store.Agent{}, apierr.BadRequest("tool_timeout_seconds", "tool_timeout_seconds is the older spelling of tool_timeout: set one of them")
		}
		if b.ToolTimeoutSeconds < 0 {
			return store.Agent{}, apierr.BadRequest("tool_timeout_seconds", "tool_timeout_seconds must not be negative")
		}
		spec.ToolTimeout = time.Duration(b.ToolTimeoutSeconds) * time.Second
	}
	if len(b.Middleware) > 0 && string(b.Middleware) != "null" {
		if b.Settings != (middleware.Settings{}) || b.ToolProgress {
			return store.Agent{}, apierr.BadRequest("middleware", "middleware {…} is the older spelling of guard, pii, rate_limit, retry, logging and tool_progress at the top level: use one or the other")
		}
		var old agentMiddleware
		if err := json.Unmarshal(b.Middleware, &old); err != nil {
			return store.Agent{}, apierr.BadRequest("middleware", "middleware is not valid: "+err.Error())
		}
		spec.Middleware, spec.ToolProgress = old.Settings, old.ToolProgress
	}
	if ae := checkAgentSpec(spec); ae != nil {
		return store.Agent{}, ae
	}
	row, err := spec.Row(ws)
	if err != nil {
		return store.Agent{}, apierr.BadRequest("", err.Error())
	}
	return row, nil
}

// checkAgentSpec refuses what the platform and the store would refuse
// later without saying which field they mean, as a 400 whose param names
// it (model, max_steps, rate_limit …), for forms that show the message
// beside that field.
func checkAgentSpec(spec platform.AgentSpec) *apierr.Error {
	if spec.Name == "" {
		return apierr.BadRequest("name", "name is required: the agent's name, unique in the workspace, such as \"writer\"")
	}
	if p, m, ok := strings.Cut(spec.Model, "/"); !ok || p == "" || m == "" {
		return apierr.BadRequest("model", fmt.Sprintf("model %q must be PROVIDER/MODEL, such as ollama/llama3.2 (GET /api/providers lists them)", spec.Model))
	}
	if spec.MaxSteps < 0 {
		return apierr.BadRequest("max_steps", fmt.Sprintf("max_steps is %d: use 0 for the default or a positive number", spec.MaxSteps))
	}
	if spec.MaxTokens < 0 {
		return apierr.BadRequest("max_tokens", fmt.Sprintf("max_tokens is %d: use 0 for the default or a positive number", spec.MaxTokens))
	}
	if t := spec.Temperature; t != nil && !(*t >= store.MinTemperature && *t <= store.MaxTemperature) {
		return apierr.BadRequest("temperature", fmt.Sprintf("temperature %v; use a value from %v to %v, or leave it out for the provider's default", *t, store.MinTemperature, store.MaxTemperature))
	}
	// Each layer of the middleware alone, so that the error names it.
	mw := spec.Middleware
	for _, part := range []struct {
		param string
		s     middleware.Settings
	}{
		{"guard", middleware.Settings{Guard: mw.Guard}},
		{"pii", middleware.Settings{PII: mw.PII}},
		{"rate_limit", middleware.Settings{RateLimit: mw.RateLimit}},
		{"retry", middleware.Settings{Retry: mw.Retry}},
	} {
		if err := part.s.Validate(); err != nil {
			return apierr.BadRequest(part.param, err.Error())
		}
	}
	return nil
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	agents, err := s.p.Agents(r.Context(), workspace(r))
	if err != nil {
		storeError(w, err)
		return
	}
	if agents == nil {
		agents = []store.Agent{}
	}
	out := map[string]any{"data": agents}
	if s.opts.Tasks != nil {
		// The agents that take tasks, with what they can do and the
		// intents they handle: what a marketplace lists.
		out["task_agents"] = s.opts.Tasks.Router().Agents()
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) createAgent(w http.ResponseWriter, r *http.Request) {
	var b agentBody
	if !s.decodeBody(w, r, &b) || !b.checkMiddleware(w) {
		return
	}
	row, ae := b.row(workspace(r))
	if ae != nil {
		apierr.Write(w, ae)
		return
	}
	a, err := s.p.CreateAgent(r.Context(), row)
	if err != nil {
		agentError(w, err, row.Name)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, a)
}

// getAgent answers GET /api/agents/{id}, where id may also be the agent's
// name, as for knowledge bases.
func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) {
	a, err := s.p.GetAgent(r.Context(), workspace(r), r.PathValue("id"))
	if err != nil {
		storeErrorAbout(w, err, "agent", r.PathValue("id"))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, a)
}

func (s *Server) updateAgent(w http.ResponseWriter, r *http.Request) {
	var b agentBody
	if !s.decodeBody(w, r, &b) || !b.checkMiddleware(w) {
		return
	}
	row, ae := b.row(workspace(r))
	if ae != nil {
		apierr.Write(w, ae)
		return
	}
	row.ID = r.PathValue("id")
	a, err := s.p.UpdateAgent(r.Context(), row)
	if errors.Is(err, store.ErrNotFound) {
		storeErrorAbout(w, err, "agent", row.ID)
		return
	}
	if err != nil {
		agentError(w, err, row.Name)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, a)
}

func (s *Server) deleteAgent(w http.ResponseWriter, r *http.Request) {
	if err := s.p.DeleteAgent(r.Context(), workspace(r), r.PathValue("id")); err != nil {
		storeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) putCredential(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Provider string `json:"provider"`
		APIKey   string `json:"api_key"`
	}
	if !s.decodeBody(w, r, &b) {
		return
	}
	if b.Provider == "" {
		apierr.Write(w, apierr.BadRequest("provider", "provider is required: a configured provider name, or openai / anthropic"))
		return
	}
	if strings.TrimSpace(b.APIKey) == "" {
		apierr.Write(w, apierr.BadRequest("api_key", "api_key is required"))
		return
	}
	warning, err := s.p.PutCredential(r.Context(), workspace(r), b.Provider, strings.TrimSpace(b.APIKey))
	if err != nil {
		storeError(w, err)
		return
	}
	out := map[string]any{"saved": true, "provider": b.Provider}
	if warning != "" {
		out["warning"] = warning
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) deleteCredential(w http.ResponseWriter, r *http.Request) {
	if err := s.p.DeleteCredential(r.Context(), workspace(r), r.PathValue("provider")); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			apierr.Write(w, apierr.NotFound("credential_not_found", "no key is stored for provider "+strconv.Quote(r.PathValue("provider"))+"; GET /api/credentials lists them"))
			return
		}
		storeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listCredentials(w http.ResponseWriter, r *http.Request) {
	creds, err := s.p.Credentials(r.Context(), workspace(r))
	if err != nil {
		storeError(w, err)
		return
	}
	type item struct {
		Provider  string    `json:"provider"`
		CreatedAt time.Time `json:"created_at"`
		UpdatedAt time.Time `json:"updated_at"`
	}
	out := make([]item, 0, len(creds))
	for _, c := range creds {
		out = append(out, item{Provider: c.Provider, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt})
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": out})
}

func (s *Server) listProviders(w http.ResponseWriter, r *http.Request) {
	ps, err := s.p.Providers(r.Context(), workspace(r))
	if err != nil {
		storeError(w, err)
		return
	}
	if ps == nil {
		ps = []platform.ProviderInfo{}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": ps})
}

// usageGroupNames lists the values of by for an error message.
var usageGroupNames = func() string {
	names := make([]string, len(store.UsageGroups))
	for i, g := range store.UsageGroups {
		names[i] = string(g)
	}
	return strings.Join(names, ", ")
}()

// usage serves GET /api/usage: the workspace's model usage since since
// (RFC 3339, default a day ago). Without by it totals per agent, provider
// and model (store.UsageSummary rows); by=day|agent|workflow|user|api_key|
// actor|model totals per that group instead (store.UsageTotal rows keyed
// by the group, days in UTC, oldest first), which the studio's usage
// charts read. Every total has its cost (a decimal in currency) and the
// count of requests whose model the price table does not price:
//
//	GET /api/usage?since=2026-01-01T00:00:00Z&by=day
//	→ {"since": "...", "by": "day", "currency": "USD", "data": [{"key": "2026-01-01", "requests": 3,
//	   "input_tokens": 120, ..., "cost": 0.0042, "unpriced_requests": 0}]}
func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	since := time.Now().Add(-24 * time.Hour)
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			apierr.Write(w, apierr.BadRequest("since", "since must be an RFC 3339 time such as 2026-01-02T15:04:05Z"))
			return
		}
		since = t
	}
	if q.Has("by") {
		by := store.UsageGroup(q.Get("by"))
		if !by.Valid() {
			apierr.Write(w, apierr.BadRequest("by", "by "+strconv.Quote(string(by))+" is not a usage group; use one of "+usageGroupNames))
			return
		}
		totals, err := s.p.UsageBy(r.Context(), workspace(r), since, by)
		if err != nil {
			storeError(w, err)
			return
		}
		if totals == nil {
			totals = []store.UsageTotal{}
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"since": since.UTC(), "by": by, "currency": s.p.Pricing().Currency(), "data": totals})
		return
	}
	sum, err := s.p.Usage(r.Context(), workspace(r), since)
	if err != nil {
		storeError(w, err)
		return
	}
	if sum == nil {
		sum = []store.UsageSummary{}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"since": since.UTC(), "currency": s.p.Pricing().Currency(), "data": sum})
}

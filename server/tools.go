package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/apierr"
	"github.com/agentcraftlab/agentcraft/server/httpapi"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool/mcpclient"
)

// listTools answers GET /api/tools: the workspace's tools with their source
// and whether they are enabled; mcp_servers says which MCP servers are down
// and why (their tools are not listed while they are down).
func (s *Server) listTools(w http.ResponseWriter, r *http.Request) {
	tools, err := s.p.ListTools(r.Context(), workspace(r))
	if err != nil {
		storeError(w, err)
		return
	}
	s.writeTools(w, r, tools)
}

func (s *Server) writeTools(w http.ResponseWriter, r *http.Request, tools []platform.ToolInfo) {
	if tools == nil {
		tools = []platform.ToolInfo{}
	}
	body := map[string]any{"data": tools}
	if st := s.p.MCPStatus(workspace(r)); st != nil {
		body["mcp_servers"] = st
	}
	httpapi.WriteJSON(w, http.StatusOK, body)
}

// setToolSettings answers POST /api/tools/settings with body
// {"tools": {"calculator": false, "files__read_file": true}}: it turns the
// named tools of the workspace off or on and answers with the updated list.
func (s *Server) setToolSettings(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Tools map[string]bool `json:"tools"`
	}
	if !s.decodeBody(w, r, &b) {
		return
	}
	if len(b.Tools) == 0 {
		apierr.Write(w, apierr.BadRequest("tools", `tools is required: an object of tool name to enabled, such as {"tools": {"calculator": false}}`))
		return
	}
	tools, err := s.p.SetToolSettings(r.Context(), workspace(r), b.Tools)
	if err != nil {
		storeError(w, err)
		return
	}
	s.writeTools(w, r, tools)
}

// listMCPServers answers GET /api/mcp/servers: the MCP servers of
// agentcraft.yaml and those added to the workspace, with their health.
func (s *Server) listMCPServers(w http.ResponseWriter, r *http.Request) {
	infos, err := s.p.MCPServers(r.Context(), workspace(r))
	if err != nil {
		storeError(w, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": infos})
}

// mcpServerBody is the JSON of POST /api/mcp/servers.
type mcpServerBody struct {
	Name   string `json:"name"`
	URL    string `json:"url"`
	Bearer string `json:"bearer"`
	OAuth  *struct {
		ClientID     string   `json:"client_id"`
		ClientSecret string   `json:"client_secret"`
		Scopes       []string `json:"scopes"`
		TokenURL     string   `json:"token_url"`
	} `json:"oauth"`
	// Command, Args and Env are refused: they are read only to say so.
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// addMCPServer answers POST /api/mcp/servers: it stores a streamable HTTP
// MCP server for the workspace and connects to it. Stdio commands are
// refused: they would run programs on the AgentCraft host.
func (s *Server) addMCPServer(w http.ResponseWriter, r *http.Request) {
	var b mcpServerBody
	if !s.decodeBody(w, r, &b) {
		return
	}
	if b.Command != "" || len(b.Args) > 0 || len(b.Env) > 0 {
		apierr.Write(w, apierr.BadRequest("command", "stdio MCP servers (command, args, env) cannot be added through the API, since they would run programs on the AgentCraft host: configure them in agentcraft.yaml (mcp.servers), or add a streamable HTTP server with url"))
		return
	}
	if strings.TrimSpace(b.Name) == "" {
		apierr.Write(w, apierr.BadRequest("name", "name is required: 1 to 32 letters, digits, '-' and single '_', such as \"weather\""))
		return
	}
	if strings.TrimSpace(b.URL) == "" {
		apierr.Write(w, apierr.BadRequest("url", "url is required: the server's streamable HTTP endpoint, such as https://mcp.example.com/mcp"))
		return
	}
	spec := platform.MCPServerSpec{Name: b.Name, URL: strings.TrimSpace(b.URL), Bearer: b.Bearer}
	if o := b.OAuth; o != nil {
		spec.OAuth = &mcpclient.OAuth{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes, TokenURL: o.TokenURL}
	}
	// The name checked before the rest, so that the error names its field
	// for the studio's form: ValidateServer's then is about the url.
	if err := mcpclient.ValidateServerName(spec.Name); err != nil {
		apierr.Write(w, apierr.BadRequest("name", err.Error()))
		return
	}
	if err := mcpclient.ValidateServer(mcpclient.ServerConfig{Name: spec.Name, URL: spec.URL}); err != nil {
		apierr.Write(w, apierr.BadRequest("url", err.Error()))
		return
	}
	info, err := s.p.AddMCPServer(r.Context(), workspace(r), spec)
	if err != nil {
		e := storeAPIError(err, "server", spec.Name)
		if errors.Is(err, store.ErrConflict) {
			e.Param = "name"
		}
		apierr.Write(w, e)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, info)
}

// deleteMCPServer answers DELETE /api/mcp/servers/{name}.
func (s *Server) deleteMCPServer(w http.ResponseWriter, r *http.Request) {
	if err := s.p.DeleteMCPServer(r.Context(), workspace(r), r.PathValue("name")); err != nil {
		storeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// testMCPServer answers POST /api/mcp/servers/{name}/test: it connects to
// the workspace's server afresh (its stored URL and credentials, through
// the egress policy), lists its tools and disconnects. The answer is 200
// whether or not the server answered: connected, and error saying why
// not, or the tools it offers; 404 for an unknown name.
func (s *Server) testMCPServer(w http.ResponseWriter, r *http.Request) {
	res, err := s.p.TestMCPServer(r.Context(), workspace(r), r.PathValue("name"))
	if err != nil {
		storeErrorAbout(w, err, "MCP server", r.PathValue("name"))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
}

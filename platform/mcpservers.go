package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool/mcpclient"
)

// ErrInvalidMCPServer reports an MCP server definition the API refuses.
var ErrInvalidMCPServer = errors.New("invalid mcp server")

// MCPServerSpec is an MCP server to add to a workspace through the API.
// Only streamable HTTP servers can be added this way: a stdio command
// would run on the AgentCraft host, so commands come from agentcraft.yaml
// alone.
type MCPServerSpec struct {
	Name string
	URL  string
	// Bearer is a static token; OAuth a client-credentials registration.
	// At most one. Both are kept sealed (package secret).
	Bearer string
	OAuth  *mcpclient.OAuth
}

// MCPServerInfo is an MCP server of a workspace and its health.
type MCPServerInfo struct {
	mcpclient.ServerStatus
	// Source is "config" for servers of agentcraft.yaml (shared by every
	// workspace) or "api" for servers added to this workspace.
	Source string `json:"source"`
	// URL is the endpoint of an API server; config servers leave it out.
	URL string `json:"url,omitempty"`
	// Auth is "bearer", "oauth" or "none" for API servers.
	Auth string `json:"auth,omitempty"`
}

// mcpSecrets is the sealed part of an API server.
type mcpSecrets struct {
	Bearer string           `json:"bearer,omitempty"`
	OAuth  *mcpclient.OAuth `json:"oauth,omitempty"`
}

// workspaceMCP holds one mcpclient.Manager per workspace for the servers
// added through the API. A change of a workspace's servers replaces its
// manager (a Manager's servers are fixed when it is made).
type workspaceMCP struct {
	change sync.Mutex // serializes changes of the servers (and Stop)
	mu     sync.Mutex // guards byWS, epoch and stopped
	byWS   map[string]*mcpclient.Manager
	// epoch counts manager replacements, so that a generation computed
	// with a replaced manager never equals one of its successor.
	epoch   uint64
	stopped bool
	// loaded fingerprints the stored servers each workspace's manager
	// was made from, for syncMCP.
	loaded map[string]fingerprint
}

// wsMCP returns the manager of the workspace's API servers; nil when it
// has none. mcpclient.Manager methods accept nil.
func (p *Platform) wsMCP(workspaceID string) *mcpclient.Manager {
	p.apiMCP.mu.Lock()
	defer p.apiMCP.mu.Unlock()
	return p.apiMCP.byWS[workspaceID]
}

// mcpGeneration changes whenever the MCP tools an agent of the workspace
// can use may have changed: the managers' own generations, plus the count
// of manager replacements in the high bits (a new manager starts its
// generation again).
func (p *Platform) mcpGeneration(workspaceID string) uint64 {
	p.apiMCP.mu.Lock()
	m, epoch := p.apiMCP.byWS[workspaceID], p.apiMCP.epoch
	p.apiMCP.mu.Unlock()
	return p.mcp.Generation() + m.Generation() + epoch<<40
}

// mcpOwner returns the manager that owns the MCP tool reference name for
// the workspace: a config server first, then the workspace's own; nil when
// name is not an MCP reference.
func (p *Platform) mcpOwner(workspaceID, name string) *mcpclient.Manager {
	if p.mcp.Owns(name) {
		return p.mcp
	}
	if m := p.wsMCP(workspaceID); m.Owns(name) {
		return m
	}
	return nil
}

// AddMCPServer stores a streamable HTTP MCP server for the workspace,
// credentials sealed, connects to it (waiting for the first attempt, at
// most until ctx ends) and returns its status. A server that cannot be
// reached is still added, and retried in the background.
func (p *Platform) AddMCPServer(ctx context.Context, workspaceID string, spec MCPServerSpec) (MCPServerInfo, error) {
	cfg := mcpclient.ServerConfig{Name: spec.Name, URL: spec.URL, Bearer: spec.Bearer, OAuth: spec.OAuth}
	if spec.URL == "" {
		return MCPServerInfo{}, fmt.Errorf("%w: url is required: the streamable HTTP endpoint of the server (stdio commands can only be configured in agentcraft.yaml)", ErrInvalidMCPServer)
	}
	if err := mcpclient.ValidateServer(cfg); err != nil {
		return MCPServerInfo{}, fmt.Errorf("%w: %v", ErrInvalidMCPServer, err)
	}
	if p.mcp.Owns(mcpclient.ServerPrefix + spec.Name) {
		return MCPServerInfo{}, fmt.Errorf("%w: MCP server %q is defined in agentcraft.yaml: choose another name", store.ErrConflict, spec.Name)
	}
	row := store.MCPServer{WorkspaceID: workspaceID, Name: spec.Name, URL: spec.URL}
	if spec.Bearer != "" || spec.OAuth != nil {
		pt, err := json.Marshal(mcpSecrets{Bearer: spec.Bearer, OAuth: spec.OAuth})
		if err != nil {
			return MCPServerInfo{}, fmt.Errorf("platform: add mcp server %q: %w", spec.Name, err)
		}
		ct, err := p.box.Seal(pt, mcpAssociatedData(workspaceID, spec.Name))
		if err != nil {
			return MCPServerInfo{}, fmt.Errorf("platform: add mcp server %q: seal credentials: %w", spec.Name, err)
		}
		row.Ciphertext, row.KeyID = ct, p.box.KeyID()
	}
	p.apiMCP.change.Lock()
	defer p.apiMCP.change.Unlock()
	if _, err := p.store.MCPServers().Create(ctx, row); err != nil {
		return MCPServerInfo{}, err
	}
	p.RecordAudit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "mcp_server.create", Target: "mcp_server:" + spec.Name})
	if err := p.reloadMCP(ctx, workspaceID, true); err != nil {
		return MCPServerInfo{}, err
	}
	infos, err := p.MCPServers(ctx, workspaceID)
	if err != nil {
		return MCPServerInfo{}, err
	}
	for _, in := range infos {
		if in.Source == "api" && in.Name == spec.Name {
			return in, nil
		}
	}
	return MCPServerInfo{}, fmt.Errorf("platform: add mcp server %q: not found after adding it", spec.Name)
}

// DeleteMCPServer removes the workspace's API server named name and
// disconnects it. A server of agentcraft.yaml cannot be removed this way.
func (p *Platform) DeleteMCPServer(ctx context.Context, workspaceID, name string) error {
	p.apiMCP.change.Lock()
	defer p.apiMCP.change.Unlock()
	if err := p.store.MCPServers().Delete(ctx, workspaceID, name); err != nil {
		if errors.Is(err, store.ErrNotFound) && p.mcp.Owns(mcpclient.ServerPrefix+name) {
			return fmt.Errorf("%w: MCP server %q is defined in agentcraft.yaml: remove it from the file", store.ErrConflict, name)
		}
		return err
	}
	p.RecordAudit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "mcp_server.delete", Target: "mcp_server:" + name})
	return p.reloadMCP(ctx, workspaceID, false)
}

// MCPServers lists the MCP servers agents of the workspace can use: those
// of agentcraft.yaml, then the workspace's own, with their health.
func (p *Platform) MCPServers(ctx context.Context, workspaceID string) ([]MCPServerInfo, error) {
	out := []MCPServerInfo{}
	for _, st := range p.mcp.Status() {
		out = append(out, MCPServerInfo{ServerStatus: st, Source: "config"})
	}
	rows, err := p.store.MCPServers().List(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	status := map[string]mcpclient.ServerStatus{}
	for _, st := range p.wsMCP(workspaceID).Status() {
		status[st.Name] = st
	}
	for _, r := range rows {
		st, ok := status[r.Name]
		if !ok {
			// Stored by another process; the tool sync loads it here
			// within Options.ToolSync.
			when := "after this process restarts (tool sync is off)"
			if p.syncEvery > 0 {
				when = "within " + p.syncEvery.String()
			}
			st = mcpclient.ServerStatus{Name: r.Name, Transport: "http", Error: "added by another server process; connecting here " + when}
		}
		in := MCPServerInfo{ServerStatus: st, Source: "api", URL: r.URL, Auth: "none"}
		if len(r.Ciphertext) > 0 {
			sec, err := p.openMCPSecrets(r)
			if err != nil {
				return nil, err
			}
			in.Auth = "bearer"
			if sec.OAuth != nil {
				in.Auth = "oauth"
			}
		}
		out = append(out, in)
	}
	return out, nil
}

// MCPStatus reports the health of the MCP servers of agentcraft.yaml and
// of the workspace; nil when there are none.
func (p *Platform) MCPStatus(workspaceID string) []mcpclient.ServerStatus {
	return append(p.mcp.Status(), p.wsMCP(workspaceID).Status()...)
}

func mcpAssociatedData(workspaceID, name string) []byte {
	return []byte("mcp-server\x00" + workspaceID + "\x00" + name)
}

func (p *Platform) openMCPSecrets(r store.MCPServer) (mcpSecrets, error) {
	var sec mcpSecrets
	pt, err := p.box.Open(r.Ciphertext, mcpAssociatedData(r.WorkspaceID, r.Name))
	if err != nil {
		return sec, fmt.Errorf("platform: open credentials of mcp server %q: %w", r.Name, err)
	}
	if err := json.Unmarshal(pt, &sec); err != nil {
		return sec, fmt.Errorf("platform: decode credentials of mcp server %q: %w", r.Name, err)
	}
	return sec, nil
}

// loadMCPServers connects the API servers of every workspace without
// waiting for them. New calls it.
func (p *Platform) loadMCPServers(ctx context.Context) error {
	rows, err := p.store.MCPServers().ListAll(ctx)
	if err != nil {
		return fmt.Errorf("platform: load mcp servers: %w", err)
	}
	seen := map[string]bool{}
	p.apiMCP.change.Lock()
	defer p.apiMCP.change.Unlock()
	for _, r := range rows {
		if seen[r.WorkspaceID] {
			continue
		}
		seen[r.WorkspaceID] = true
		if err := p.reloadMCP(ctx, r.WorkspaceID, false); err != nil {
			return err
		}
	}
	return nil
}

// reloadMCP replaces the workspace's manager by one for its stored
// servers, stops the old one and evicts the workspace's agents. With wait,
// it waits for the first connection attempts (or ctx). The caller holds
// apiMCP.change.
func (p *Platform) reloadMCP(ctx context.Context, workspaceID string, wait bool) error {
	rows, err := p.store.MCPServers().List(ctx, workspaceID)
	if err != nil {
		return err
	}
	var next *mcpclient.Manager
	if len(rows) > 0 {
		cfgs := make([]mcpclient.ServerConfig, 0, len(rows))
		for _, r := range rows {
			cfg := mcpclient.ServerConfig{Name: r.Name, URL: r.URL}
			if len(r.Ciphertext) > 0 {
				sec, err := p.openMCPSecrets(r)
				if err != nil {
					return err
				}
				cfg.Bearer, cfg.OAuth = sec.Bearer, sec.OAuth
			}
			cfgs = append(cfgs, cfg)
		}
		opts := &mcpclient.Options{Logger: p.logger.With("workspace_id", workspaceID)}
		if p.egress != nil {
			// The egress policy applies; the client's own Timeout would
			// cut the event stream, so only its transport is used.
			opts.HTTPClient = &http.Client{Transport: p.egress.Transport}
		}
		next, err = mcpclient.New(cfgs, opts)
		if err != nil {
			return fmt.Errorf("platform: mcp servers of workspace %s: %w", workspaceID, err)
		}
		startCtx := ctx
		if !wait {
			c, cancel := context.WithCancel(ctx)
			cancel() // start in the background, do not wait
			startCtx = c
		}
		if err := next.Start(startCtx); err != nil {
			return fmt.Errorf("platform: start mcp servers of workspace %s: %w", workspaceID, err)
		}
	}
	p.apiMCP.mu.Lock()
	if p.apiMCP.stopped {
		p.apiMCP.mu.Unlock()
		next.Stop()
		return errors.New("platform: stopped")
	}
	old := p.apiMCP.byWS[workspaceID]
	p.apiMCP.epoch++
	if p.apiMCP.byWS == nil {
		p.apiMCP.byWS = map[string]*mcpclient.Manager{}
	}
	if p.apiMCP.loaded == nil {
		p.apiMCP.loaded = map[string]fingerprint{}
	}
	if next == nil {
		delete(p.apiMCP.byWS, workspaceID)
		delete(p.apiMCP.loaded, workspaceID)
	} else {
		p.apiMCP.byWS[workspaceID] = next
		p.apiMCP.loaded[workspaceID] = mcpFingerprint(rows)
	}
	p.apiMCP.mu.Unlock()
	old.Stop()
	p.evictWorkspace(workspaceID)
	return nil
}

// stopMCP stops the managers of the workspaces' API servers. Idempotent.
func (p *Platform) stopMCP() {
	p.apiMCP.mu.Lock()
	p.apiMCP.stopped = true
	ms := p.apiMCP.byWS
	p.apiMCP.byWS = nil
	p.apiMCP.mu.Unlock()
	for _, m := range ms {
		m.Stop()
	}
}

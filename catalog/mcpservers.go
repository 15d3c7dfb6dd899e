package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

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
func (c *Catalog) wsMCP(workspaceID string) *mcpclient.Manager {
	c.apiMCP.mu.Lock()
	defer c.apiMCP.mu.Unlock()
	return c.apiMCP.byWS[workspaceID]
}

// mcpOwner returns the manager that owns the MCP tool reference name for
// the workspace: a config server first, then the workspace's own; nil when
// name is not an MCP reference.
func (c *Catalog) mcpOwner(workspaceID, name string) *mcpclient.Manager {
	if c.mcp.Owns(name) {
		return c.mcp
	}
	if m := c.wsMCP(workspaceID); m.Owns(name) {
		return m
	}
	return nil
}

// AddMCPServer stores a streamable HTTP MCP server for the workspace,
// credentials sealed, connects to it (waiting for the first attempt, at
// most until ctx ends) and returns its status. A server that cannot be
// reached is still added, and retried in the background.
func (c *Catalog) AddMCPServer(ctx context.Context, workspaceID string, spec MCPServerSpec) (MCPServerInfo, error) {
	cfg := mcpclient.ServerConfig{Name: spec.Name, URL: spec.URL, Bearer: spec.Bearer, OAuth: spec.OAuth}
	if spec.URL == "" {
		return MCPServerInfo{}, fmt.Errorf("%w: url is required: the streamable HTTP endpoint of the server (stdio commands can only be configured in agentcraft.yaml)", ErrInvalidMCPServer)
	}
	if err := mcpclient.ValidateServer(cfg); err != nil {
		return MCPServerInfo{}, fmt.Errorf("%w: %v", ErrInvalidMCPServer, err)
	}
	if c.mcp.Owns(mcpclient.ServerPrefix + spec.Name) {
		return MCPServerInfo{}, fmt.Errorf("%w: MCP server %q is defined in agentcraft.yaml: choose another name", store.ErrConflict, spec.Name)
	}
	row := store.MCPServer{WorkspaceID: workspaceID, Name: spec.Name, URL: spec.URL}
	if spec.Bearer != "" || spec.OAuth != nil {
		pt, err := json.Marshal(mcpSecrets{Bearer: spec.Bearer, OAuth: spec.OAuth})
		if err != nil {
			return MCPServerInfo{}, fmt.Errorf("catalog: add mcp server %q: %w", spec.Name, err)
		}
		ct, err := c.box.Seal(pt, mcpAssociatedData(workspaceID, spec.Name))
		if err != nil {
			return MCPServerInfo{}, fmt.Errorf("catalog: add mcp server %q: seal credentials: %w", spec.Name, err)
		}
		row.Ciphertext, row.KeyID = ct, c.box.KeyID()
	}
	c.apiMCP.change.Lock()
	defer c.apiMCP.change.Unlock()
	if _, err := c.store.MCPServers().Create(ctx, row); err != nil {
		return MCPServerInfo{}, err
	}
	c.audit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "mcp_server.create", Target: "mcp_server:" + spec.Name})
	if err := c.reloadMCP(ctx, workspaceID, true); err != nil {
		return MCPServerInfo{}, err
	}
	infos, err := c.MCPServers(ctx, workspaceID)
	if err != nil {
		return MCPServerInfo{}, err
	}
	for _, in := range infos {
		if in.Source == "api" && in.Name == spec.Name {
			return in, nil
		}
	}
	return MCPServerInfo{}, fmt.Errorf("catalog: add mcp server %q: not found after adding it", spec.Name)
}

// DeleteMCPServer removes the workspace's API server named name and
// disconnects it. A server of agentcraft.yaml cannot be removed this way.
func (c *Catalog) DeleteMCPServer(ctx context.Context, workspaceID, name string) error {
	c.apiMCP.change.Lock()
	defer c.apiMCP.change.Unlock()
	if err := c.store.MCPServers().Delete(ctx, workspaceID, name); err != nil {
		if errors.Is(err, store.ErrNotFound) && c.mcp.Owns(mcpclient.ServerPrefix+name) {
			return fmt.Errorf("%w: MCP server %q is defined in agentcraft.yaml: remove it from the file", store.ErrConflict, name)
		}
		return err
	}
	c.audit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "mcp_server.delete", Target: "mcp_server:" + name})
	return c.reloadMCP(ctx, workspaceID, false)
}

// MCPServers lists the MCP servers agents of the workspace can use: those
// of agentcraft.yaml, then the workspace's own, with their health.
func (c *Catalog) MCPServers(ctx context.Context, workspaceID string) ([]MCPServerInfo, error) {
	out := []MCPServerInfo{}
	for _, st := range c.mcp.Status() {
		out = append(out, MCPServerInfo{ServerStatus: st, Source: "config"})
	}
	rows, err := c.store.MCPServers().List(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	status := map[string]mcpclient.ServerStatus{}
	for _, st := range c.wsMCP(workspaceID).Status() {
		status[st.Name] = st
	}
	for _, r := range rows {
		st, ok := status[r.Name]
		if !ok {
			// Stored by another process; the tool sync loads it here
			// within Options.ToolSync.
			when := "after this process restarts (tool sync is off)"
			if c.syncEvery > 0 {
				when = "within " + c.syncEvery.String()
			}
			st = mcpclient.ServerStatus{Name: r.Name, Transport: "http", Error: "added by another server process; connecting here " + when}
		}
		in := MCPServerInfo{ServerStatus: st, Source: "api", URL: r.URL, Auth: "none"}
		if len(r.Ciphertext) > 0 {
			sec, err := c.openMCPSecrets(r)
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
func (c *Catalog) MCPStatus(workspaceID string) []mcpclient.ServerStatus {
	return append(c.mcp.Status(), c.wsMCP(workspaceID).Status()...)
}

func mcpAssociatedData(workspaceID, name string) []byte {
	return []byte("mcp-server\x00" + workspaceID + "\x00" + name)
}

func (c *Catalog) openMCPSecrets(r store.MCPServer) (mcpSecrets, error) {
	var sec mcpSecrets
	pt, err := c.box.Open(r.Ciphertext, mcpAssociatedData(r.WorkspaceID, r.Name))
	if err != nil {
		return sec, fmt.Errorf("catalog: open credentials of mcp server %q: %w", r.Name, err)
	}
	if err := json.Unmarshal(pt, &sec); err != nil {
		return sec, fmt.Errorf("catalog: decode credentials of mcp server %q: %w", r.Name, err)
	}
	return sec, nil
}

// newMCPManager makes an unstarted manager of the workspace's stored
// servers rows, their credentials opened, reaching them through the
// egress policy: the standing connections (reloadMCP) and a one-off test
// (TestMCPServer) connect alike. connectTimeout 0 is mcpclient's default.
func (c *Catalog) newMCPManager(workspaceID string, rows []store.MCPServer, connectTimeout time.Duration) (*mcpclient.Manager, error) {
	cfgs := make([]mcpclient.ServerConfig, 0, len(rows))
	for _, r := range rows {
		cfg := mcpclient.ServerConfig{Name: r.Name, URL: r.URL}
		if len(r.Ciphertext) > 0 {
			sec, err := c.openMCPSecrets(r)
			if err != nil {
				return nil, err
			}
			cfg.Bearer, cfg.OAuth = sec.Bearer, sec.OAuth
		}
		cfgs = append(cfgs, cfg)
	}
	opts := &mcpclient.Options{Logger: c.logger.With("workspace_id", workspaceID), ConnectTimeout: connectTimeout}
	if c.egress != nil {
		// The egress policy applies; the client's own Timeout would
		// cut the event stream, so only its transport is used.
		opts.HTTPClient = &http.Client{Transport: c.egress.Transport}
	}
	return mcpclient.New(cfgs, opts)
}

// loadMCPServers connects the API servers of every workspace without
// waiting for them. New calls it.
func (c *Catalog) loadMCPServers(ctx context.Context) error {
	rows, err := c.store.MCPServers().ListAll(ctx)
	if err != nil {
		return fmt.Errorf("catalog: load mcp servers: %w", err)
	}
	seen := map[string]bool{}
	c.apiMCP.change.Lock()
	defer c.apiMCP.change.Unlock()
	for _, r := range rows {
		if seen[r.WorkspaceID] {
			continue
		}
		seen[r.WorkspaceID] = true
		if err := c.reloadMCP(ctx, r.WorkspaceID, false); err != nil {
			return err
		}
	}
	return nil
}

// reloadMCP replaces the workspace's manager by one for its stored
// servers, stops the old one and moves the workspace's Generation on. With wait,
// it waits for the first connection attempts (or ctx). The caller holds
// apiMCP.change.
func (c *Catalog) reloadMCP(ctx context.Context, workspaceID string, wait bool) error {
	rows, err := c.store.MCPServers().List(ctx, workspaceID)
	if err != nil {
		return err
	}
	var next *mcpclient.Manager
	if len(rows) > 0 {
		next, err = c.newMCPManager(workspaceID, rows, 0)
		if err != nil {
			return fmt.Errorf("catalog: mcp servers of workspace %s: %w", workspaceID, err)
		}
		startCtx := ctx
		if !wait {
			c, cancel := context.WithCancel(ctx)
			cancel() // start in the background, do not wait
			startCtx = c
		}
		if err := next.Start(startCtx); err != nil {
			return fmt.Errorf("catalog: start mcp servers of workspace %s: %w", workspaceID, err)
		}
	}
	c.apiMCP.mu.Lock()
	if c.apiMCP.stopped {
		c.apiMCP.mu.Unlock()
		next.Stop()
		return errors.New("catalog: stopped")
	}
	old := c.apiMCP.byWS[workspaceID]
	c.apiMCP.epoch++
	if c.apiMCP.byWS == nil {
		c.apiMCP.byWS = map[string]*mcpclient.Manager{}
	}
	if c.apiMCP.loaded == nil {
		c.apiMCP.loaded = map[string]fingerprint{}
	}
	if next == nil {
		delete(c.apiMCP.byWS, workspaceID)
		delete(c.apiMCP.loaded, workspaceID)
	} else {
		c.apiMCP.byWS[workspaceID] = next
		c.apiMCP.loaded[workspaceID] = mcpFingerprint(rows)
	}
	c.apiMCP.mu.Unlock()
	old.Stop()
	c.touch(workspaceID)
	return nil
}

// stopMCP stops the managers of the workspaces' API servers. Idempotent.
func (c *Catalog) stopMCP() {
	c.apiMCP.mu.Lock()
	c.apiMCP.stopped = true
	ms := c.apiMCP.byWS
	c.apiMCP.byWS = nil
	c.apiMCP.mu.Unlock()
	for _, m := range ms {
		m.Stop()
	}
}

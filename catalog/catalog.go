package catalog

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/rag"
	"github.com/agentcraftlab/agentcraft/secret"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/mcpclient"
)

// Options configure a Catalog.
type Options struct {
	// Tools are the built-in tools. Default: those Builtins configures.
	Tools *tool.Registry
	// Builtins configures the default built-in tools (file sandbox,
	// outbound HTTP client); its HTTPClient is also the egress client of
	// MCP servers and OpenAPI imports added through the API. Nil: the
	// tools that need no configuration, and no OpenAPI imports.
	Builtins *tool.BuiltinOptions
	// Knowledge, when set, gives agents kb_search. Default nil.
	Knowledge rag.Searcher
	// MCP holds agentcraft.yaml's MCP servers: an agent's tool list may
	// name "<server>__<tool>" or "mcp:<server>". The caller starts and
	// stops it. Default nil: none.
	MCP *mcpclient.Manager
	// Sync is how often the catalog looks in the store for MCP servers
	// and OpenAPI imports that other processes added, changed or removed
	// through the API. Default DefaultToolSync; negative: never.
	Sync time.Duration
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
	// Audit receives the events of changes made through the catalog
	// (servers, imports, settings). Default: none.
	Audit func(context.Context, store.AuditEvent)
}

// Catalog holds the tools agents can name, per workspace. Create it with
// New, stop it with Stop.
type Catalog struct {
	store     store.Store
	box       *secret.Box
	logger    *slog.Logger
	audit     func(context.Context, store.AuditEvent)
	tools     *tool.Registry
	knowledge rag.Searcher // nil: no kb_search
	mcp       *mcpclient.Manager
	// egress is Options.Builtins.HTTPClient, the egress-policy client that
	// workspace HTTP tools send through; nil when none is configured.
	egress *http.Client

	// apiMCP holds the MCP servers added per workspace through the API.
	apiMCP workspaceMCP
	// wsTools holds the tools added per workspace (OpenAPI imports).
	wsTools workspaceTools
	// sync runs syncTools every syncEvery (Options.Sync).
	sync      toolSync
	syncEvery time.Duration

	changesMu sync.Mutex // guards changes
	// changes counts, per workspace, the changes of its workspace tools
	// and tool settings made in this process, for Generation.
	changes map[string]uint64
}

// New builds the catalog: the built-in tools, then the MCP servers and
// OpenAPI imports stored through the API (connecting without waiting),
// and starts the sync from the store.
func New(ctx context.Context, st store.Store, box *secret.Box, opts *Options) (*Catalog, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Audit == nil {
		o.Audit = func(context.Context, store.AuditEvent) {}
	}
	if o.Tools == nil {
		o.Tools = &tool.Registry{}
		if err := tool.RegisterBuiltinsWith(o.Tools, o.Builtins); err != nil {
			return nil, err
		}
	}
	c := &Catalog{
		store:     st,
		box:       box,
		logger:    o.Logger,
		audit:     o.Audit,
		tools:     o.Tools,
		knowledge: o.Knowledge,
		mcp:       o.MCP,
		changes:   map[string]uint64{},
	}
	if o.Builtins != nil {
		c.egress = o.Builtins.HTTPClient
	}
	if err := c.loadMCPServers(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.loadOpenAPIImports(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	c.syncEvery = o.Sync
	if c.syncEvery == 0 {
		c.syncEvery = DefaultToolSync
	}
	if c.syncEvery > 0 {
		c.startToolSync(c.syncEvery)
	}
	return c, nil
}

// Stop ends the sync and disconnects the workspaces' MCP servers (not
// Options.MCP, which is the caller's). Idempotent.
func (c *Catalog) Stop() {
	c.stopToolSync()
	c.stopMCP()
}

// Tools are the built-in tools.
func (c *Catalog) Tools() *tool.Registry { return c.tools }

// MCP returns agentcraft.yaml's MCP servers (Options.MCP); nil when none
// are configured. Its methods accept nil.
func (c *Catalog) MCP() *mcpclient.Manager { return c.mcp }

// EgressClient returns the egress-policy HTTP client the built-in HTTP
// tools send through (Options.Builtins.HTTPClient), or nil when none is
// configured. Tools added per workspace that call HTTP use it too.
func (c *Catalog) EgressClient() *http.Client { return c.egress }

// Generation changes whenever the tools an agent of the workspace can use
// may have changed in this process: an MCP server connecting, failing or
// changing its tools, a workspace's servers replaced, an import added,
// replaced or removed, a tool setting changed. Changes other processes
// make to tool settings are not counted; Disabled reads those.
//
// It is the sum of counters that only grow: the managers' own
// generations, and in the high bits the count of manager replacements
// (a new manager starts its generation again) plus the workspace's own
// changes.
func (c *Catalog) Generation(workspaceID string) uint64 {
	c.apiMCP.mu.Lock()
	m, epoch := c.apiMCP.byWS[workspaceID], c.apiMCP.epoch
	c.apiMCP.mu.Unlock()
	c.changesMu.Lock()
	n := c.changes[workspaceID]
	c.changesMu.Unlock()
	return c.mcp.Generation() + m.Generation() + (epoch+n)<<40
}

// touch moves the workspace's Generation on.
func (c *Catalog) touch(workspaceID string) {
	c.changesMu.Lock()
	c.changes[workspaceID]++
	c.changesMu.Unlock()
}

// KBSearchTool is the name of the knowledge-search tool. It is not in the
// registry: each agent gets its own, bound to its workspace and knowledge
// bases (plus the bases a request adds, such as a chat's uploads).
const KBSearchTool = "kb_search"

// Resolve returns the tools an agent of the workspace that names names
// (and answers from knowledgeBases) is given to run: kb_search built for
// it, the tools of MCP servers ("<server>__<tool>", "mcp:<server>"), the
// workspace's imported tools, the rest from the registry, leaving out
// those in off. What cannot be used now — a disabled tool, an MCP server
// that is down, no longer offers the tool or is no longer configured
// (say, deleted through the API) — is left out rather than failing the
// agent; warnings says which and why. An unknown tool is an error.
func (c *Catalog) Resolve(workspaceID string, names, knowledgeBases []string, off Disabled) (tools []tool.Tool, warnings []string, err error) {
	tools, warnings, err = c.resolve(workspaceID, names, knowledgeBases, false)
	if err != nil {
		return nil, nil, err
	}
	tools, warnings = withoutDisabled(tools, warnings, off)
	return tools, warnings, nil
}

// Check reports what would stop an agent of the workspace that names
// names from running: an unknown tool (tool.ErrUnknownTool, also for an
// MCP server that is not configured), a tool listed twice, kb_search
// without knowledge search.
func (c *Catalog) Check(workspaceID string, names []string) error {
	_, _, err := c.resolve(workspaceID, names, nil, true)
	return err
}

// resolve is Resolve without the settings; with strict, a reference to
// an MCP server that is not configured is an unknown tool instead of a
// warning.
func (c *Catalog) resolve(workspaceID string, names, knowledgeBases []string, strict bool) (tools []tool.Tool, warnings []string, err error) {
	var kbTool tool.Tool
	if i := slices.Index(names, KBSearchTool); i >= 0 {
		if c.knowledge == nil {
			return nil, nil, fmt.Errorf("%w: %s: knowledge search is not configured on this server", tool.ErrUnknownTool, KBSearchTool)
		}
		kbTool = rag.SearchTool(c.knowledge, workspaceID, knowledgeBases)
		names = slices.Delete(slices.Clone(names), i, i+1)
	}
	// MCP references go to the manager that owns them: agentcraft.yaml's
	// servers, or the workspace's own (POST /api/mcp/servers).
	var mcpNames []string
	var mcpOwners []*mcpclient.Manager
	names = slices.DeleteFunc(slices.Clone(names), func(n string) bool {
		if _, builtin := c.tools.Get(n); builtin {
			return false
		}
		m := c.mcpOwner(workspaceID, n)
		if m == nil {
			return false
		}
		mcpNames = append(mcpNames, n)
		mcpOwners = append(mcpOwners, m)
		return true
	})
	names, wsTools := c.wsTools.take(workspaceID, names)
	if !strict {
		names = slices.DeleteFunc(names, func(n string) bool {
			if _, ok := c.tools.Get(n); ok || !strings.HasPrefix(n, mcpclient.ServerPrefix) && !strings.Contains(n, mcpclient.NameSeparator) {
				return false
			}
			if server, ok := strings.CutPrefix(n, mcpclient.ServerPrefix); ok {
				warnings = append(warnings, fmt.Sprintf("no MCP server %q is configured (was it removed?), so its tools are left out", server))
			} else {
				// NAME__TOOL is an MCP server's tool or an OpenAPI
				// import's operation; neither provides it now.
				owner, _, _ := strings.Cut(n, mcpclient.NameSeparator)
				warnings = append(warnings, fmt.Sprintf("no MCP server or OpenAPI import named %q provides %s any more (was it removed?), so it is left out", owner, n))
			}
			return true
		})
	}
	tools, err = c.tools.Resolve(names...)
	if err != nil {
		return nil, nil, err
	}
	for i, t := range tools {
		// A registry tool that acts inside a workspace (generate_image
		// stores its images there) is bound to this one, as kb_search
		// is above: the workspace comes from the caller, not the model.
		if wb, ok := t.(tool.WorkspaceBound); ok {
			tools[i] = wb.ForWorkspace(workspaceID)
		}
	}
	tools = append(tools, wsTools...)
	if kbTool != nil {
		tools = append(tools, kbTool)
	}
	seen := make(map[string]bool)
	for i, n := range mcpNames {
		mt, err := mcpOwners[i].Resolve(n)
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		for _, t := range mt {
			if !seen[t.Name()] {
				seen[t.Name()] = true
				tools = append(tools, t)
			}
		}
	}
	return tools, warnings, nil
}

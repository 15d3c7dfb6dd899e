package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// DefaultToolSync is how often a process looks in the store for the MCP
// servers and OpenAPI imports that other processes (more serve replicas,
// workers running workflows) added, changed or removed through the API.
const DefaultToolSync = 15 * time.Second

// toolSync runs syncTools every interval until stop.
type toolSync struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (c *Catalog) startToolSync(interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	c.sync.cancel = cancel
	c.sync.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := c.syncTools(ctx); err != nil && ctx.Err() == nil {
					c.logger.Warn("tool_sync_failed", "error", err, "retry_in", interval.String())
				}
			}
		}
	})
}

// stopToolSync ends the loop and waits for a pass under way. Idempotent.
func (c *Catalog) stopToolSync() {
	if c.sync.cancel != nil {
		c.sync.cancel()
	}
	c.sync.wg.Wait()
}

// syncTools brings this process's MCP servers and OpenAPI imports in line
// with the store: a workspace whose stored servers differ from those it
// connected is reloaded, an import whose stored row differs from the one
// its tools were built from is rebuilt, and tools of a deleted import go.
func (c *Catalog) syncTools(ctx context.Context) error {
	if err := c.syncMCP(ctx); err != nil {
		return err
	}
	return c.syncOpenAPI(ctx)
}

func (c *Catalog) syncMCP(ctx context.Context) error {
	c.apiMCP.change.Lock()
	defer c.apiMCP.change.Unlock()
	rows, err := c.store.MCPServers().ListAll(ctx)
	if err != nil {
		return err
	}
	byWS := map[string][]store.MCPServer{}
	for _, r := range rows {
		byWS[r.WorkspaceID] = append(byWS[r.WorkspaceID], r)
	}
	c.apiMCP.mu.Lock()
	var changed []string
	for ws, rs := range byWS {
		if c.apiMCP.loaded[ws] != mcpFingerprint(rs) {
			changed = append(changed, ws)
		}
	}
	for ws := range c.apiMCP.loaded {
		if _, ok := byWS[ws]; !ok {
			changed = append(changed, ws)
		}
	}
	c.apiMCP.mu.Unlock()
	slices.Sort(changed)
	// One workspace that cannot be reloaded (say, a token the master key
	// no longer opens) must not keep the others stale.
	var errs []error
	for _, ws := range changed {
		if err := c.reloadMCP(ctx, ws, false); err != nil {
			errs = append(errs, fmt.Errorf("workspace %s: %w", ws, err))
			continue
		}
		c.logger.Info("mcp_servers_reloaded", "workspace_id", ws, "reason", "changed by another process")
	}
	return errors.Join(errs...)
}

func (c *Catalog) syncOpenAPI(ctx context.Context) error {
	w := &c.wsTools
	w.change.Lock()
	defer w.change.Unlock()
	rows, err := c.store.OpenAPIImports().ListAll(ctx)
	if err != nil {
		return err
	}
	stored := map[importKey]bool{}
	for _, r := range rows {
		k := importKey{r.WorkspaceID, r.Name}
		stored[k] = true
		if w.loaded[k] != importFingerprint(r) {
			c.loadOpenAPIImport(ctx, r)
			c.logger.Info("openapi_import_reloaded", "workspace_id", r.WorkspaceID, "name", r.Name, "reason", "changed by another process")
		}
	}
	for k := range w.loaded {
		if !stored[k] {
			c.removeWorkspaceTools(k.workspace, k.name)
			delete(w.loaded, k)
			c.logger.Info("openapi_import_removed", "workspace_id", k.workspace, "name", k.name, "reason", "deleted by another process")
		}
	}
	return nil
}

// importKey names an OpenAPI import.
type importKey struct{ workspace, name string }

// fingerprint identifies the stored definition that a process's tools
// were built from.
type fingerprint [sha256.Size]byte

// mcpFingerprint covers a workspace's stored servers, in any order.
func mcpFingerprint(rows []store.MCPServer) fingerprint {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b store.MCPServer) int { return strings.Compare(a.Name, b.Name) })
	h := sha256.New()
	for _, r := range rows {
		writeFields(h, []byte(r.Name), []byte(r.URL), r.Ciphertext)
	}
	var f fingerprint
	h.Sum(f[:0])
	return f
}

func importFingerprint(r store.OpenAPIImport) fingerprint {
	h := sha256.New()
	writeFields(h, []byte(r.Document), []byte(r.BaseURL), r.Ciphertext)
	var f fingerprint
	h.Sum(f[:0])
	return f
}

// writeFields writes each field with its length, so that no two field
// lists hash alike by shifting bytes from one field to the next.
func writeFields(h interface{ Write([]byte) (int, error) }, fields ...[]byte) {
	var n [8]byte
	for _, f := range fields {
		binary.LittleEndian.PutUint64(n[:], uint64(len(f)))
		_, _ = h.Write(n[:])
		_, _ = h.Write(f)
	}
}

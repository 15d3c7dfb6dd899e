package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool"
)

// ErrInvalidOpenAPI reports an OpenAPI document that does not load or
// gives no usable tools.
var ErrInvalidOpenAPI = errors.New("invalid openapi document")

// ErrNoHTTPClient reports that the platform has no outbound HTTP client
// (Options.Builtins.HTTPClient) for tools that call HTTP APIs.
var ErrNoHTTPClient = errors.New("no outbound http client for tools: set platform Options.Builtins.HTTPClient")

// OpenAPIImportSpec is an OpenAPI 3 document to import into a workspace.
type OpenAPIImportSpec struct {
	// Name prefixes the tools: <Name>__<operationId>.
	Name string
	// Document is the OpenAPI 3 document, JSON or YAML; it is stored as is.
	Document []byte
	// BaseURL overrides the document's servers[0].url.
	BaseURL string
	// Bearer is sent as Authorization: Bearer on every call; kept sealed.
	Bearer string
}

// openAPISecrets is the sealed part of an import.
type openAPISecrets struct {
	Bearer string `json:"bearer,omitempty"`
}

// ImportOpenAPI turns the operations of an OpenAPI 3 document into tools of
// the workspace and stores the import, so that New rebuilds them after a
// restart. Importing a name again replaces that import and its tools. A
// document that does not load gives ErrInvalidOpenAPI; a tool name taken
// by another tool store.ErrConflict.
func (c *Catalog) ImportOpenAPI(ctx context.Context, workspaceID string, spec OpenAPIImportSpec) ([]*tool.OpenAPITool, error) {
	tools, err := c.buildOpenAPITools(ctx, spec)
	if err != nil {
		return nil, err
	}
	row := store.OpenAPIImport{WorkspaceID: workspaceID, Name: spec.Name, Document: string(spec.Document), BaseURL: spec.BaseURL}
	if spec.Bearer != "" {
		pt, err := json.Marshal(openAPISecrets{Bearer: spec.Bearer})
		if err != nil {
			return nil, fmt.Errorf("catalog: import openapi %q: %w", spec.Name, err)
		}
		ct, err := c.box.Seal(pt, openAPIAssociatedData(workspaceID, spec.Name))
		if err != nil {
			return nil, fmt.Errorf("catalog: import openapi %q: seal credentials: %w", spec.Name, err)
		}
		row.Ciphertext, row.KeyID = ct, c.box.KeyID()
	}

	w := &c.wsTools
	w.change.Lock()
	defer w.change.Unlock()
	prev, had := w.group(workspaceID, spec.Name)
	if err := c.SetWorkspaceTools(workspaceID, spec.Name, asTools(tools)); err != nil {
		return nil, fmt.Errorf("%w: %v", store.ErrConflict, err)
	}
	if _, err := c.store.OpenAPIImports().Put(ctx, row); err != nil {
		// Put the tools of before back, so memory and store agree.
		if had {
			_ = c.SetWorkspaceTools(workspaceID, spec.Name, prev)
		} else {
			c.removeWorkspaceTools(workspaceID, spec.Name)
		}
		return nil, err
	}
	w.setLoaded(row)
	c.audit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "openapi_import.put", Target: "openapi:" + spec.Name})
	return tools, nil
}

// DeleteOpenAPIImport removes the workspace's import named name and its
// tools, or gives store.ErrNotFound.
func (c *Catalog) DeleteOpenAPIImport(ctx context.Context, workspaceID, name string) error {
	w := &c.wsTools
	w.change.Lock()
	defer w.change.Unlock()
	if err := c.store.OpenAPIImports().Delete(ctx, workspaceID, name); err != nil {
		return err
	}
	c.removeWorkspaceTools(workspaceID, name)
	delete(w.loaded, importKey{workspaceID, name})
	c.audit(ctx, store.AuditEvent{WorkspaceID: workspaceID, Action: "openapi_import.delete", Target: "openapi:" + name})
	return nil
}

// buildOpenAPITools parses spec's document and makes its tools.
func (c *Catalog) buildOpenAPITools(ctx context.Context, spec OpenAPIImportSpec) ([]*tool.OpenAPITool, error) {
	if c.egress == nil {
		return nil, ErrNoHTTPClient
	}
	doc, err := tool.ParseOpenAPI(ctx, spec.Document)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidOpenAPI, err)
	}
	tools, err := tool.OpenAPITools(doc, c.egress, &tool.OpenAPIOptions{Prefix: spec.Name, BaseURL: spec.BaseURL, Bearer: spec.Bearer})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidOpenAPI, err)
	}
	return tools, nil
}

func asTools(ts []*tool.OpenAPITool) []tool.Tool {
	out := make([]tool.Tool, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

func openAPIAssociatedData(workspaceID, name string) []byte {
	return []byte("openapi-import\x00" + workspaceID + "\x00" + name)
}

// loadOpenAPIImports rebuilds the tools of every stored import. New calls
// it.
func (c *Catalog) loadOpenAPIImports(ctx context.Context) error {
	rows, err := c.store.OpenAPIImports().ListAll(ctx)
	if err != nil {
		return fmt.Errorf("catalog: load openapi imports: %w", err)
	}
	w := &c.wsTools
	w.change.Lock()
	defer w.change.Unlock()
	for _, r := range rows {
		c.loadOpenAPIImport(ctx, r)
	}
	return nil
}

// loadOpenAPIImport (re)builds the tools of a stored import. An import
// that cannot be rebuilt (its document no longer parses with this version,
// its token no longer opens, a name now taken) is logged and skipped: one
// stale document must not keep the server from starting. Either way the
// row is recorded as loaded, so that syncOpenAPI tries it again only when
// it changes. The caller holds wsTools.change.
func (c *Catalog) loadOpenAPIImport(ctx context.Context, r store.OpenAPIImport) {
	c.wsTools.setLoaded(r)
	spec := OpenAPIImportSpec{Name: r.Name, Document: []byte(r.Document), BaseURL: r.BaseURL}
	if len(r.Ciphertext) > 0 {
		var sec openAPISecrets
		pt, err := c.box.Open(r.Ciphertext, openAPIAssociatedData(r.WorkspaceID, r.Name))
		if err == nil {
			err = json.Unmarshal(pt, &sec)
		}
		if err != nil {
			c.logger.Error("openapi_import_skipped", "workspace_id", r.WorkspaceID, "name", r.Name, "error", err,
				"fix", "the master key cannot open its token: import the document again")
			return
		}
		spec.Bearer = sec.Bearer
	}
	tools, err := c.buildOpenAPITools(ctx, spec)
	if err == nil {
		err = c.SetWorkspaceTools(r.WorkspaceID, r.Name, asTools(tools))
	}
	if err != nil {
		c.logger.Error("openapi_import_skipped", "workspace_id", r.WorkspaceID, "name", r.Name, "error", err,
			"fix", "import a corrected document again, or DELETE /api/tools/openapi/"+r.Name)
	}
}

// setLoaded records the stored import r as the one its group reflects.
// The caller holds change.
func (w *workspaceTools) setLoaded(r store.OpenAPIImport) {
	if w.loaded == nil {
		w.loaded = map[importKey]fingerprint{}
	}
	w.loaded[importKey{r.WorkspaceID, r.Name}] = importFingerprint(r)
}

package store

import "context"

// toolSettings is ToolSettings on a Driver.
type toolSettings struct{ c Core }

func (r toolSettings) Set(ctx context.Context, s ToolSetting) (ToolSetting, error) {
	if err := s.Validate(); err != nil {
		return ToolSetting{}, r.c.errorf("set tool setting: %w", err)
	}
	s.UpdatedAt = now()
	if err := r.c.d.ToolSettingUpsert(ctx, &ToolSettingUpsertParams{Setting: s}); err != nil {
		return ToolSetting{}, r.c.errorf("set tool setting %q: %w", s.Tool, err)
	}
	return s, nil
}

func (r toolSettings) List(ctx context.Context, workspaceID string) ([]ToolSetting, error) {
	out, err := r.c.d.ToolSettingList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list tool settings: %w", err)
	}
	return out, nil
}

// sealed returns a copy of ciphertext, nil when empty: a row without
// credentials reads back nil, whatever the caller passed.
func sealed(ciphertext []byte) []byte {
	if len(ciphertext) == 0 {
		return nil
	}
	return append([]byte(nil), ciphertext...)
}

// mcpServers is MCPServers on a Driver.
type mcpServers struct{ c Core }

func (r mcpServers) Create(ctx context.Context, m MCPServer) (MCPServer, error) {
	if err := m.Validate(); err != nil {
		return MCPServer{}, r.c.errorf("create mcp server: %w", err)
	}
	if m.ID == "" {
		m.ID = NewID()
	}
	m.Ciphertext = sealed(m.Ciphertext)
	m.CreatedAt = now()
	if err := r.c.d.MCPServerInsert(ctx, &MCPServerInsertParams{Server: m}); err != nil {
		return MCPServer{}, r.c.errorf("create mcp server %q: %w", m.Name, err)
	}
	return m, nil
}

func (r mcpServers) List(ctx context.Context, workspaceID string) ([]MCPServer, error) {
	out, err := r.c.d.MCPServerList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list mcp servers: %w", err)
	}
	return out, nil
}

func (r mcpServers) ListAll(ctx context.Context) ([]MCPServer, error) {
	out, err := r.c.d.MCPServerListAll(ctx)
	if err != nil {
		return nil, r.c.errorf("list all mcp servers: %w", err)
	}
	return out, nil
}

func (r mcpServers) Delete(ctx context.Context, workspaceID, name string) error {
	if err := r.c.d.MCPServerDelete(ctx, workspaceID, name); err != nil {
		return r.c.errorf("delete mcp server %q: %w", name, err)
	}
	return nil
}

// openAPIImports is OpenAPIImports on a Driver.
type openAPIImports struct{ c Core }

func (r openAPIImports) Put(ctx context.Context, i OpenAPIImport) (OpenAPIImport, error) {
	if err := i.Validate(); err != nil {
		return OpenAPIImport{}, r.c.errorf("put openapi import: %w", err)
	}
	i.Ciphertext = sealed(i.Ciphertext)
	t := now()
	i.CreatedAt, i.UpdatedAt = t, t
	got, err := r.c.d.OpenAPIImportUpsert(ctx, &OpenAPIImportUpsertParams{Import: i})
	if err != nil {
		return OpenAPIImport{}, r.c.errorf("put openapi import %q: %w", i.Name, err)
	}
	return got, nil
}

func (r openAPIImports) List(ctx context.Context, workspaceID string) ([]OpenAPIImport, error) {
	out, err := r.c.d.OpenAPIImportList(ctx, workspaceID)
	if err != nil {
		return nil, r.c.errorf("list openapi imports: %w", err)
	}
	return out, nil
}

func (r openAPIImports) ListAll(ctx context.Context) ([]OpenAPIImport, error) {
	out, err := r.c.d.OpenAPIImportListAll(ctx)
	if err != nil {
		return nil, r.c.errorf("list all openapi imports: %w", err)
	}
	return out, nil
}

func (r openAPIImports) Delete(ctx context.Context, workspaceID, name string) error {
	if err := r.c.d.OpenAPIImportDelete(ctx, workspaceID, name); err != nil {
		return r.c.errorf("delete openapi import %q: %w", name, err)
	}
	return nil
}

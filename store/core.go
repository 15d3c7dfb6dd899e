package store

import (
	"errors"
	"fmt"
	"time"
)

// Core implements the aggregates of Store on a Driver. A driver's Store
// embeds the Core built on its verbs and adds what is its own (Ping,
// Migrate, Close):
//
//	s.Core = store.NewCore(driver{s})
//
// Everything the drivers would otherwise repeat is here: validation, the
// defaults and ids a write fills in, the timestamps, the run state machine
// and the wording of errors (prefixed with Driver.Name).
type Core struct {
	d    Driver
	name string
}

// NewCore returns the Core of d.
func NewCore(d Driver) Core { return Core{d: d, name: d.Name()} }

// Workspaces implements Store.
func (c Core) Workspaces() Workspaces { return workspaces{c} }

// APIKeys implements Store.
func (c Core) APIKeys() APIKeys { return apiKeys{c} }

// Credentials implements Store.
func (c Core) Credentials() Credentials { return credentials{c} }

// Usage implements Store.
func (c Core) Usage() Usage { return usage{c} }

// Workflows implements Store.
func (c Core) Workflows() Workflows { return workflows{c} }

// Runs implements Store.
func (c Core) Runs() Runs { return runs{c} }

// Agents implements Store.
func (c Core) Agents() Agents { return agents{c} }

// Providers implements Store.
func (c Core) Providers() Providers { return providers{c} }

// AuditLog implements Store.
func (c Core) AuditLog() AuditLog { return auditLog{c} }

// KnowledgeBases implements Store.
func (c Core) KnowledgeBases() KnowledgeBases { return knowledgeBases{c} }

// IngestJobs implements Store.
func (c Core) IngestJobs() IngestJobs { return ingestJobs{c} }

// Uploads implements Store.
func (c Core) Uploads() Uploads { return uploads{c} }

// OAuthClients implements Store.
func (c Core) OAuthClients() OAuthClients { return oauthClients{c} }

// ToolSettings implements Store.
func (c Core) ToolSettings() ToolSettings { return toolSettings{c} }

// MCPServers implements Store.
func (c Core) MCPServers() MCPServers { return mcpServers{c} }

// OpenAPIImports implements Store.
func (c Core) OpenAPIImports() OpenAPIImports { return openAPIImports{c} }

// Skills implements Store.
func (c Core) Skills() Skills { return skills{c} }

// now is the time Core stamps on rows.
func now() time.Time { return Timestamp(time.Now()) }

// errorf prefixes an error with the driver's name.
func (c Core) errorf(format string, args ...any) error {
	return fmt.Errorf(c.name+": "+format, args...)
}

// isNotFound reports whether err is ErrNotFound.
func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

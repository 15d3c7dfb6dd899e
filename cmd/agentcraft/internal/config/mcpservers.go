package config

import (
	"fmt"
	"strings"
)

// validateMCPServers checks mcp.servers: a unique name usable as a tool
// name prefix, a command or an http(s) URL, and credentials that fit.
// The rules match package tool/mcpclient, which checks them again.
func (m MCP) validateMCPServers(bad func(path, format string, args ...any)) {
	names := map[string]bool{}
	for i, s := range m.Servers {
		path := fmt.Sprintf("mcp.servers[%d]", i)
		switch {
		case !validMCPServerName(s.Name):
			bad(path+".name", "%q must be 1 to 32 letters, digits, - and single _ (not at the end): it prefixes tool names as NAME__TOOL", s.Name)
		case names[s.Name]:
			bad(path+".name", "%q is defined twice", s.Name)
		}
		names[s.Name] = true
		switch {
		case s.Command == "" && s.URL == "":
			bad(path, "set command (a server speaking MCP on stdio) or url (streamable HTTP)")
		case s.Command != "" && s.URL != "":
			bad(path, "set command or url, not both")
		}
		if s.URL != "" && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
			bad(path+".url", "%q must start with http:// or https://", s.URL)
		}
		if s.Command == "" && (len(s.Args) > 0 || len(s.Env) > 0) {
			bad(path, "args and env apply to command servers only")
		}
		if s.Command != "" && (s.Bearer != "" || s.OAuth != nil) {
			bad(path, "bearer and oauth apply to url servers only: pass credentials to a command through env")
		}
		if s.Bearer != "" && s.OAuth != nil {
			bad(path, "set bearer or oauth, not both")
		}
		if o := s.OAuth; o != nil {
			if o.ClientID == "" {
				bad(path+".oauth.client_id", "is empty: give the client id registered with the authorization server")
			}
			if o.ClientSecret == "" {
				bad(path+".oauth.client_secret", "is empty: give the client secret, e.g. ${MCP_CLIENT_SECRET}")
			}
			if o.TokenURL != "" && !strings.HasPrefix(o.TokenURL, "http://") && !strings.HasPrefix(o.TokenURL, "https://") {
				bad(path+".oauth.token_url", "%q must start with http:// or https://, or be left out to discover it", o.TokenURL)
			}
		}
	}
}

func validMCPServerName(s string) bool {
	if s == "" || len(s) > 32 || strings.Contains(s, "__") || strings.HasSuffix(s, "_") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

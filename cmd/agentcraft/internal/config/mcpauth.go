package config

import (
	"fmt"
	"net/url"
)

// validateMCPAuth checks the settings of AgentCraft's own /mcp endpoint:
// mcp.auth, jwks_url, issuer, audience and allowed_origins.
func (m MCP) validateMCPAuth(bad func(path, format string, args ...any)) {
	switch m.Auth {
	case "", "oauth", "none":
	default:
		bad("mcp.auth", "%q is not oauth or none", m.Auth)
	}
	if m.Auth == "none" && (m.JWKSURL != "" || m.Issuer != "" || m.Audience != "") {
		bad("mcp.auth", "is none, so jwks_url, issuer and audience would be ignored: remove them or set auth to oauth")
	}
	if m.JWKSURL != "" {
		if u, err := url.Parse(m.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad("mcp.jwks_url", "%q must be an http:// or https:// URL of the authorization server's key set", m.JWKSURL)
		}
		if m.Issuer == "" {
			bad("mcp.issuer", "is empty while mcp.jwks_url is set: name the authorization server's issuer (the iss of its tokens)")
		}
	} else if m.Issuer != "" || m.Audience != "" {
		bad("mcp.jwks_url", "is empty while mcp.issuer or mcp.audience is set: give the URL of the issuer's key set (JWKS)")
	}
	seen := map[string]bool{}
	for i, o := range m.AllowedOrigins {
		path := fmt.Sprintf("mcp.allowed_origins[%d]", i)
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			bad(path, "%q is not an origin: write scheme://host[:port], e.g. https://app.example.com", o)
		}
		if seen[o] {
			bad(path, "%q is listed twice", o)
		}
		seen[o] = true
	}
}

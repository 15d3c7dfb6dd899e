package config

import (
	"strings"
	"testing"
)

func TestMCPAuthValidation(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"mcp: {auth: open}", `mcp.auth: "open" is not oauth or none`},
		{"mcp: {auth: none, jwks_url: 'https://idp.example.com/jwks', issuer: 'https://idp.example.com'}", "mcp.auth: is none"},
		{"mcp: {jwks_url: 'idp.example.com/jwks', issuer: x}", "mcp.jwks_url"},
		{"mcp: {jwks_url: 'https://idp.example.com/jwks'}", "mcp.issuer: is empty while mcp.jwks_url is set"},
		{"mcp: {issuer: 'https://idp.example.com'}", "mcp.jwks_url: is empty"},
		{"mcp: {audience: 'https://agents.example.com/mcp'}", "mcp.jwks_url: is empty"},
		{"mcp: {allowed_origins: ['app.example.com']}", "mcp.allowed_origins[0]"},
		{"mcp: {allowed_origins: ['https://app.example.com/path']}", "mcp.allowed_origins[0]"},
		{"mcp: {allowed_origins: ['https://a.example.com', 'https://a.example.com']}", `mcp.allowed_origins[1]: "https://a.example.com" is listed twice`},
	} {
		_, err := Load(write(t, tc.body), []string{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want mention of %s", tc.body, err, tc.want)
		}
	}
	for _, ok := range []string{
		"mcp: {auth: none}",
		"mcp: {auth: oauth, allowed_origins: ['https://app.example.com', 'http://localhost:5173']}",
		"mcp: {jwks_url: 'https://idp.example.com/.well-known/jwks.json', issuer: 'https://idp.example.com', audience: 'https://agents.example.com/mcp'}",
	} {
		if _, err := Load(write(t, ok), []string{}); err != nil {
			t.Errorf("%q: %v, want valid", ok, err)
		}
	}
}

package config

import (
	"strings"
	"testing"
)

func TestMCPServersValidation(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"mcp: {servers: [{name: 'git hub', command: x}]}", "mcp.servers[0].name"},
		{"mcp: {servers: [{name: a__b, command: x}]}", "mcp.servers[0].name"},
		{"mcp: {servers: [{name: a, command: x}, {name: a, command: y}]}", `mcp.servers[1].name: "a" is defined twice`},
		{"mcp: {servers: [{name: a}]}", "mcp.servers[0]: set command"},
		{"mcp: {servers: [{name: a, command: x, url: 'http://h/mcp'}]}", "not both"},
		{"mcp: {servers: [{name: a, url: 'h/mcp'}]}", "mcp.servers[0].url"},
		{"mcp: {servers: [{name: a, url: 'http://h/mcp', args: [x]}]}", "args and env apply to command servers only"},
		{"mcp: {servers: [{name: a, command: x, bearer: t}]}", "url servers only"},
		{"mcp: {servers: [{name: a, url: 'http://h/mcp', bearer: t, oauth: {client_id: i, client_secret: s}}]}", "bearer or oauth"},
		{"mcp: {servers: [{name: a, url: 'http://h/mcp', oauth: {client_secret: s}}]}", "mcp.servers[0].oauth.client_id"},
		{"mcp: {servers: [{name: a, url: 'http://h/mcp', oauth: {client_id: i}}]}", "mcp.servers[0].oauth.client_secret"},
		{"mcp: {servers: [{name: a, url: 'http://h/mcp', oauth: {client_id: i, client_secret: s, token_url: h/token}}]}", "mcp.servers[0].oauth.token_url"},
	} {
		_, err := Load(write(t, tc.body), []string{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want mention of %s", tc.body, err, tc.want)
		}
	}
	for _, ok := range []string{
		"mcp: {servers: [{name: everything, command: npx, args: [-y, '@modelcontextprotocol/server-everything'], env: {A: b}}]}",
		"mcp: {servers: [{name: git-hub_2, url: 'https://h/mcp', bearer: t}]}",
		"mcp: {servers: [{name: s, url: 'https://h/mcp', oauth: {client_id: i, client_secret: s, scopes: [a, b]}}]}",
	} {
		if _, err := Load(write(t, ok), []string{}); err != nil {
			t.Errorf("%q: %v, want valid", ok, err)
		}
	}
}

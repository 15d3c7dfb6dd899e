// Package platform turns what an API request names into runnable pieces:
// it resolves a workspace's agent by name into an agent.Agent wired to its
// provider's model (with the middleware chain, tools and credentials),
// caches it until its row, its tools or its workspace's tool settings
// change, and records usage and audit events without slowing the request
// down. The providers themselves (detection, per-workspace adapters,
// credentials, the overhead Meter) are package provider's, the tools
// (built-ins, MCP servers, OpenAPI imports, tool settings) package
// catalog's; Platform wires both in New and forwards the calls the HTTP
// surfaces make.
//
// It sits between the HTTP surfaces (server/...) and the domain packages
// (agent, llm, tool, store, secret); every surface reaches it through the
// run seam (package run).
package platform

// Package platform turns what an API request names into runnable pieces:
// it resolves a workspace's agent by name into an agent.Agent wired to its
// provider's model (with the middleware chain, tools and credentials),
// keeps the set of configured providers, measures time spent upstream, and
// records usage without slowing the request down.
//
// It sits between the HTTP surfaces (server/...) and the domain packages
// (agent, llm, tool, store, secret); every surface — the OpenAI-compatible
// API today, MCP and A2A later — resolves agents through it.
package platform

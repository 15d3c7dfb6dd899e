// Package provider keeps the LLM providers agents run on: those of
// agentcraft.yaml, those detected at start (OPENAI_API_KEY,
// ANTHROPIC_API_KEY, a local Ollama) and those a workspace creates by
// storing a key. A Registry builds each provider's adapter once per
// workspace, with that workspace's stored credential bound into its HTTP
// transport, keeps the credentials sealed (package secret), and builds
// each provider's shared middleware chain once, so that its rate limiter
// is one bucket for every agent that does not set its own.
//
//	reg, err := provider.New(ctx, st, box, &provider.Options{Providers: cfgs})
//	e, err := reg.Lookup(ctx, workspaceID, "openai")
//	model, err := e.Adapter(workspaceID)
//	model = llm.Chain(model, e.Shared()...)
//
// Every adapter is wrapped in a layer that charges the time spent
// upstream to the request's Meter (WithMeter), which the server reports
// as its own overhead.
package provider

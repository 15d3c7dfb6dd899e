// Package catalog is the tool catalog agents name their tools from: the
// built-in tools (a tool.Registry), kb_search bound to each agent's
// workspace and knowledge bases, the tools of MCP servers (those of
// agentcraft.yaml and those a workspace adds through the API), the tools of
// OpenAPI documents a workspace imports, and each workspace's settings
// that turn tools off. Servers and imports added through the API are
// stored, rebuilt at start and synced from the store every Options.Sync,
// so that every process serves what any one of them was told.
//
//	c, err := catalog.New(ctx, st, box, &catalog.Options{MCP: mgr})
//	defer c.Stop()
//	gen := c.Generation(ws)            // moves on when ws's tools may have changed
//	off, err := c.Disabled(ctx, ws)    // the workspace's disabled tools
//	tools, warnings, err := c.Resolve(ws, row.Tools, row.Params.KnowledgeBases, off)
//
// An agent cache keeps Generation and Disabled.Key with each agent it
// built and rebuilds the agent when either differs.
package catalog

// Package surfaces holds the surface conformance suite: one scenario run
// through every way an agent can be run (/v1, /api/chat, MCP, A2A, a
// workflow agent node on a separate worker) against the real binary, so
// that what one surface does — stored credentials, usage, audit, guard,
// PII, errors — every surface does.
package surfaces

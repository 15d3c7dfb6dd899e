// Package controlplane runs workflows durably: it records runs in the
// store, executes them under a lease with per-node checkpoints (so a run
// resumed after a crash skips every node already saved), parks runs on
// human nodes without holding a goroutine, and resumes, cancels and
// re-runs them. Every run's events are numbered, saved with the
// checkpoints and fanned out live to subscribers.
//
// The job queue (package queue) calls [Service.Execute]; the HTTP API
// calls Start, Resume, Cancel, Rerun and Events.
package controlplane

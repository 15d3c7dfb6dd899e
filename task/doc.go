// Package task is the control plane of requests: a request in plain
// language (from LINE, the web or the API) becomes a task with a
// structured intent, the router picks the agent that can handle it, the
// agent makes a plan of tool steps, and the plan runs as a durable
// workflow run (package controlplane) in which every step of medium or
// high capability waits for a person's approval, every step is recorded
// in the evidence ledger before its side effect, and what was done can be
// compensated.
package task

// Package crash holds the crash test of durable workflow runs: a 20-node
// workflow runs in a child process (the test binary re-executed, wired as
// `agentcraft serve` wires store, control plane and job queue) that is
// killed with SIGKILL at random points and restarted, on SQLite and on
// PostgreSQL, until the run completes. The test then checks that the run
// succeeded with the right output, that no checkpoint was saved twice and
// that every node's side effect, a request to a webhook counter carrying
// an Idempotency-Key, happened: repeats only for nodes that were in
// flight when a kill landed, never for a node whose checkpoint was saved.
//
// Each trial kills the child 1–3 times, either at a random time from
// launch (often during start-up) or once the run has saved a random number
// of further checkpoints plus 0–15 ms, so that kills land all along the
// run however loaded the machine is. The seed is logged; CRASH_SEED
// replays its choices (not the machine's timing). CRASH_TRACE=1 logs the
// last launch's start-up phases.
//
// TestRestartWithQueuedJob makes one kill point deterministic: the process
// died after Start enqueued the run's job and before a worker fetched it.
//
// The Binary tests build the real cmd/agentcraft once and kill `serve`
// (and `worker`) with SIGKILL as an operator's machine would:
// TestBinaryAgentHumanHooks (an agent node in flight on a stalled llmtest
// stream, a human node, webhook hooks), TestBinaryIngestResumes (an ingest
// job killed half done resumes at the next start without indexing a file
// twice), TestBinaryTwoServesOneSQLite and TestBinaryPostgresTakeover.
// TestBinaryWorkersNoRunTwice and TestBinaryWorkerDrain (SIGTERM mid-run:
// the run is handed back at a checkpoint) run `agentcraft worker`
// processes on PostgreSQL; TestBinaryScaleoutBench measures them on
// demand (AGENTCRAFT_BENCH_SCALEOUT=1).
//
//	go test -race ./e2e/crash
//	AGENTCRAFT_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable go test -race ./e2e/crash
//
// -short runs 3 trials per database instead of 20.
package crash

// Package trigger starts runs without a person asking: on the ticks of a
// cron schedule, or on a signed webhook delivery. A trigger targets a
// stored workflow (its newest version runs) or a workspace agent (run as a
// one-node durable run, controlplane.AgentDefinition); either way the run
// goes through controlplane.Start, so it is queued, checkpointed and
// listed like any other, carries the trigger's id (store.Run.TriggerID,
// GET /api/runs?trigger_id=) and its agent nodes act as
// system:trigger:<id>.
//
// Service is the CRUD (validation naming the field, webhook secrets sealed
// with the master key, audit of every change) and the webhook receiver
// (Deliver). Scheduler is the clock: every serve and worker process runs
// one; each computes the next tick of every enabled schedule, sleeps until
// it (a timer, no polling) and tries to record the tick
// (store.Triggers.Fire); the (trigger, tick) key lets exactly one process
// win, and only the winner starts the run. That run's id is derived from
// (trigger, tick), so when the winner stops before recording the run, the
// sweep every scheduler runs each minute (store.Triggers.Unstarted) starts
// it under the same id, or finds it started: a won tick has exactly one
// run, crash or not.
//
//	svc, err := trigger.New(st, runs, box, &trigger.Options{Agents: platform})
//	sch := trigger.NewScheduler(svc, nil)
//	if err := sch.Start(ctx); err != nil { ... }
//	defer sch.Stop()
package trigger

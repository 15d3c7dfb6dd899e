package retention

import (
	"context"
	"time"
)

// finalStatuses are the run statuses no executor changes again
// (store.RunStatus.Final): only such runs lose events and checkpoints.
// Queued, running and waiting runs replay from their checkpoints.
const finalStatuses = `('succeeded', 'failed', 'failed_contract', 'canceled', 'blocked')`

func (p *Pruner) builtinSteps() map[Kind]Step {
	return map[Kind]Step{
		RunEvents:     p.runChildren("run_events"),
		Checkpoints:   p.runChildren("run_checkpoints"),
		Conversations: p.conversations,
		Uploads:       p.uploads,
		QueueJobs:     p.queueJobs,
		Audit:         p.audit,
	}
}

// keyset walks the rows of from (a table with its alias a) matching
// where in (a.col, a.id) order, BatchSize at a time, and hands each
// batch's ids to remove. The cursor moves past every row seen, so a row
// kept (an upload still referred to) is not read again, and an index on
// (col, id) serves every batch without a sort.
func (p *Pruner) keyset(ctx context.Context, from, col, where string, args []any, remove func(ids []string) (int64, error)) (int64, error) {
	var total int64
	var lastKey any
	lastID := ""
	for {
		q := `SELECT a.id, a.` + col + ` FROM ` + from + ` WHERE ` + where
		a := append([]any{}, args...)
		if lastKey != nil {
			// A row value: SQLite and PostgreSQL both seek the (col, id)
			// index to it, even when many rows share one time.
			q += ` AND (a.` + col + `, a.id) > (?, ?)`
			a = append(a, lastKey, lastID)
		}
		q += ` ORDER BY a.` + col + `, a.id LIMIT ?`
		a = append(a, p.opts.BatchSize)
		rows, err := p.c.batch(ctx, q, a...)
		if err != nil {
			return total, err
		}
		if len(rows) == 0 {
			return total, nil
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.id
		}
		n, err := remove(ids)
		total += n
		if err != nil {
			return total, err
		}
		lastKey, lastID = rows[len(rows)-1].key, rows[len(rows)-1].id
		if len(rows) < p.opts.BatchSize {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// runChildren removes the rows of table (run_events or run_checkpoints)
// of runs that finished before the cut-off; the run rows stay, with
// their status, output and error. Such a run can no longer be rerun from
// a node (POST /api/runs/{id}/rerun?from) nor show its timeline.
func (p *Pruner) runChildren(table string) Step {
	return func(ctx context.Context, s Scope, before time.Time, dryRun bool) (int64, error) {
		cond, args := p.c.where(scope{s.WorkspaceID, s.Except}, "a.workspace_id")
		args = append([]any{p.c.ts(before)}, args...)
		base := `a.finished_at IS NOT NULL AND a.finished_at < ? AND a.status IN ` + finalStatuses + cond
		if dryRun {
			return p.c.count(ctx, `SELECT count(*) FROM `+table+` t JOIN runs a ON a.id = t.run_id WHERE `+base, args...)
		}
		return p.keyset(ctx, `runs a`, "finished_at", base, args, func(ids []string) (int64, error) {
			in, inArgs := p.c.in("run_id", ids)
			return p.c.exec(ctx, `DELETE FROM `+table+` WHERE `+in, inArgs...)
		})
	}
}

// conversations removes conversations whose last activity (updated_at:
// an appended turn, a rename, a compaction) is before the cut-off, with
// their messages and conversation memories (the foreign keys cascade).
func (p *Pruner) conversations(ctx context.Context, s Scope, before time.Time, dryRun bool) (int64, error) {
	cond, args := p.c.where(scope{s.WorkspaceID, s.Except}, "a.workspace_id")
	args = append([]any{p.c.ts(before)}, args...)
	base := `a.updated_at < ?` + cond
	if dryRun {
		return p.c.count(ctx, `SELECT count(*) FROM conversations a WHERE `+base, args...)
	}
	return p.keyset(ctx, `conversations a`, "updated_at", base, args, func(ids []string) (int64, error) {
		in, inArgs := p.c.in("id", ids)
		removed, err := p.c.removed(ctx, `DELETE FROM conversations WHERE `+in+` RETURNING workspace_id, id`, inArgs...)
		if err == nil && len(removed) > 0 && p.opts.ConversationsRemoved != nil {
			if herr := p.opts.ConversationsRemoved(ctx, removed); herr != nil {
				p.opts.Logger.Warn("retention_conversation_cleanup_failed", "conversations", len(removed), "err", herr)
			}
		}
		return int64(len(removed)), err
	})
}

// uploads removes uploads created before the cut-off that nothing live
// refers to: a queued or running ingest job listing it, a live run
// (queued, running, waiting) whose checkpoints name it (an image node's
// output), or a message of a conversation still kept (a generated
// picture's /api/uploads/<id> in a tool result or answer). Uploads also
// expire on their own (expires_at, kb.Sweep); this catches the long-lived
// ones such as generated pictures (tools.images.keep).
func (p *Pruner) uploads(ctx context.Context, s Scope, before time.Time, dryRun bool) (int64, error) {
	cond, args := p.c.where(scope{s.WorkspaceID, s.Except}, "a.workspace_id")
	args = append([]any{p.c.ts(before)}, args...)
	base := `a.created_at < ?` + cond + `
		AND NOT EXISTS (SELECT 1 FROM ingest_jobs j WHERE j.workspace_id = a.workspace_id
			AND j.status IN ('queued', 'running') AND ` + p.c.contains("j.files", "a.id") + `)
		AND NOT EXISTS (SELECT 1 FROM runs r JOIN run_checkpoints c ON c.run_id = r.id
			WHERE r.workspace_id = a.workspace_id AND r.status IN ('queued', 'running', 'waiting')
			AND c.output IS NOT NULL AND ` + p.c.contains("c.output", "a.id") + `)
		AND NOT EXISTS (SELECT 1 FROM conversations v JOIN messages m ON m.conversation_id = v.id
			WHERE v.workspace_id = a.workspace_id AND ` + p.c.contains("m.content", "a.id") + `)`
	if dryRun {
		return p.c.count(ctx, `SELECT count(*) FROM uploads a WHERE `+base, args...)
	}
	return p.keyset(ctx, `uploads a`, "created_at", base, args, func(ids []string) (int64, error) {
		in, inArgs := p.c.in("id", ids)
		return p.c.exec(ctx, `DELETE FROM uploads WHERE `+in, inArgs...)
	})
}

// queueJobs removes River jobs that finished (completed, cancelled,
// discarded) before the cut-off. serve and worker also hand the age to
// River's own job cleaner (queue.Config.JobRetention), which does the
// same continuously on the leader; this pass is what `agentcraft db
// prune` runs, and reports.
func (p *Pruner) queueJobs(ctx context.Context, _ Scope, before time.Time, dryRun bool) (int64, error) {
	at := any(before.UTC())
	cmp := `finalized_at < ?`
	if !p.c.pg {
		// riversqlite keeps timestamps as text.
		at = before.UTC().Format("2006-01-02 15:04:05.000")
		cmp = `julianday(finalized_at) < julianday(?)`
	}
	base := `state IN ('completed', 'cancelled', 'discarded') AND ` + cmp
	if dryRun {
		return p.c.count(ctx, `SELECT count(*) FROM river_job WHERE `+base, at)
	}
	var total int64
	for {
		n, err := p.c.exec(ctx, `DELETE FROM river_job WHERE id IN (SELECT id FROM river_job WHERE `+base+` LIMIT ?)`, at, p.opts.BatchSize*5)
		total += n
		if err != nil || n < int64(p.opts.BatchSize*5) {
			return total, err
		}
	}
}

// audit removes audit rows created before the cut-off, through the one
// path the append-only trigger lets through (migration 00020): each
// batch's transaction names the cut-off in audit_prune_window, deletes,
// and clears the window before it commits, so no other connection ever
// sees a window open. The trigger itself refuses a cut-off less than a
// day old.
func (p *Pruner) audit(ctx context.Context, _ Scope, before time.Time, dryRun bool) (int64, error) {
	cut := p.c.ts(before)
	if dryRun {
		return p.c.count(ctx, `SELECT count(*) FROM audit_log WHERE created_at < ?`, cut)
	}
	var total int64
	limit := p.opts.BatchSize * 5
	for {
		var n int64
		err := p.c.tx(ctx, func(exec func(string, ...any) (int64, error)) error {
			if _, err := exec(`INSERT INTO audit_prune_window (before) VALUES (?)`, cut); err != nil {
				return err
			}
			var err error
			n, err = exec(`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE created_at < ? LIMIT ?)`, cut, limit)
			if err != nil {
				return err
			}
			_, err = exec(`DELETE FROM audit_prune_window`)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < int64(limit) {
			return total, nil
		}
	}
}

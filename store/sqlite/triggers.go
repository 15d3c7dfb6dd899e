package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

const triggerColumns = `id, workspace_id, name, kind, workflow_id, agent, input, schedule, timezone, misfire, enabled,
	secret_ciphertext, key_id, created_at, updated_at`

func scanTrigger(sc scanner) (store.Trigger, error) {
	var (
		t                store.Trigger
		workflowID       sql.NullString
		agent            sql.NullString
		input            sql.NullString
		enabled          int64
		created, updated int64
	)
	if err := sc.Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.Kind, &workflowID, &agent, &input, &t.Schedule, &t.Timezone,
		&t.Misfire, &enabled, &t.SecretCiphertext, &t.KeyID, &created, &updated); err != nil {
		return store.Trigger{}, err
	}
	t.WorkflowID, t.Agent = workflowID.String, agent.String
	if input.Valid && input.String != "" {
		t.Input = []byte(input.String)
	}
	if len(t.SecretCiphertext) == 0 {
		t.SecretCiphertext = nil
	}
	t.Enabled = enabled != 0
	t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
	return t, nil
}

func triggerArgs(t store.Trigger) []any {
	var ct any
	if len(t.SecretCiphertext) > 0 {
		ct = t.SecretCiphertext
	}
	return []any{t.Name, string(t.Kind), nullString(t.WorkflowID), nullString(t.Agent), nullJSON(t.Input), t.Schedule, t.Timezone,
		string(t.Misfire), t.Enabled, ct, t.KeyID, micros(t.UpdatedAt)}
}

func (d driver) TriggerInsert(ctx context.Context, p *store.TriggerWriteParams) error {
	t := p.Trigger
	args := append([]any{t.ID, t.WorkspaceID}, triggerArgs(t)...)
	args = append(args, micros(t.CreatedAt))
	_, err := d.s.writer.ExecContext(ctx, `INSERT INTO triggers (id, workspace_id, name, kind, workflow_id, agent, input, schedule,
		timezone, misfire, enabled, secret_ciphertext, key_id, updated_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	return mapErr(err)
}

func (d driver) TriggerGet(ctx context.Context, workspaceID, id string) (store.Trigger, error) {
	t, err := scanTrigger(d.s.reader.QueryRowContext(ctx, `SELECT `+triggerColumns+` FROM triggers WHERE workspace_id = ? AND id = ?`, workspaceID, id))
	return t, mapErr(err)
}

func (d driver) TriggerLookup(ctx context.Context, id string) (store.Trigger, error) {
	t, err := scanTrigger(d.s.reader.QueryRowContext(ctx, `SELECT `+triggerColumns+` FROM triggers WHERE id = ?`, id))
	return t, mapErr(err)
}

func (d driver) TriggerList(ctx context.Context, workspaceID string) ([]store.Trigger, error) {
	return queryList(ctx, d.s.reader, scanTrigger, `SELECT `+triggerColumns+` FROM triggers WHERE workspace_id = ? ORDER BY name`, workspaceID)
}

func (d driver) TriggerListSchedules(ctx context.Context) ([]store.Trigger, error) {
	return queryList(ctx, d.s.reader, scanTrigger,
		`SELECT `+triggerColumns+` FROM triggers WHERE kind = 'schedule' AND enabled ORDER BY id`)
}

func (d driver) TriggerVersion(ctx context.Context) (int64, int64, error) {
	var n, newest int64
	err := d.s.reader.QueryRowContext(ctx, `SELECT count(*), coalesce(max(updated_at), 0) FROM triggers`).Scan(&n, &newest)
	return n, newest, err
}

func (d driver) TriggerUpdate(ctx context.Context, p *store.TriggerWriteParams) error {
	t := p.Trigger
	args := append(triggerArgs(t), t.WorkspaceID, t.ID)
	res, err := d.s.writer.ExecContext(ctx, `UPDATE triggers SET name = ?, kind = ?, workflow_id = ?, agent = ?, input = ?, schedule = ?,
		timezone = ?, misfire = ?, enabled = ?, secret_ciphertext = ?, key_id = ?, updated_at = ? WHERE workspace_id = ? AND id = ?`, args...)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

func (d driver) TriggerDelete(ctx context.Context, workspaceID, id string) error {
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM triggers WHERE workspace_id = ? AND id = ?`, workspaceID, id)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

const fireColumns = `workspace_id, trigger_id, tick, missed, owner, run_id, error, created_at`

func scanFire(sc scanner) (store.TriggerFire, error) {
	var (
		f             store.TriggerFire
		tick, created int64
	)
	if err := sc.Scan(&f.WorkspaceID, &f.TriggerID, &tick, &f.Missed, &f.Owner, &f.RunID, &f.Error, &created); err != nil {
		return store.TriggerFire{}, err
	}
	f.Tick, f.CreatedAt = fromMicros(tick), fromMicros(created)
	return f, nil
}

// TriggerFireInsert: the primary key (trigger_id, tick) refuses a second
// insert of the tick, whichever connection makes it.
func (d driver) TriggerFireInsert(ctx context.Context, p *store.TriggerFireParams) error {
	f := p.Fire
	_, err := d.s.writer.ExecContext(ctx, `INSERT INTO trigger_fires (`+fireColumns+`) VALUES (?, ?, ?, ?, ?, '', '', ?)`,
		f.WorkspaceID, f.TriggerID, micros(f.Tick), f.Missed, f.Owner, micros(f.CreatedAt))
	return mapErr(err)
}

func (d driver) TriggerFireGet(ctx context.Context, p *store.TriggerFireParams) (store.TriggerFire, error) {
	f, err := scanFire(d.s.writer.QueryRowContext(ctx, `SELECT `+fireColumns+` FROM trigger_fires WHERE workspace_id = ? AND trigger_id = ? AND tick = ?`,
		p.Fire.WorkspaceID, p.Fire.TriggerID, micros(p.Fire.Tick)))
	return f, mapErr(err)
}

func (d driver) TriggerFireUpdate(ctx context.Context, p *store.TriggerFireParams) error {
	f := p.Fire
	res, err := d.s.writer.ExecContext(ctx, `UPDATE trigger_fires SET run_id = ?, error = ? WHERE workspace_id = ? AND trigger_id = ? AND tick = ?`,
		f.RunID, f.Error, f.WorkspaceID, f.TriggerID, micros(f.Tick))
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

func (d driver) TriggerFireList(ctx context.Context, workspaceID, triggerID string, limit int) ([]store.TriggerFire, error) {
	return queryList(ctx, d.s.reader, scanFire, `SELECT `+fireColumns+` FROM trigger_fires WHERE workspace_id = ? AND trigger_id = ?
		ORDER BY tick DESC LIMIT ?`, workspaceID, triggerID, limit)
}

func (d driver) TriggerFireListUnstarted(ctx context.Context, before time.Time, limit int) ([]store.TriggerFire, error) {
	return queryList(ctx, d.s.reader, scanFire, `SELECT `+fireColumns+` FROM trigger_fires
		WHERE run_id = '' AND error = '' AND created_at < ? ORDER BY created_at, trigger_id, tick LIMIT ?`, micros(before), limit)
}

func (d driver) TriggerDeliveryInsert(ctx context.Context, p *store.TriggerDeliveryParams) error {
	v := p.Delivery
	_, err := d.s.writer.ExecContext(ctx, `INSERT INTO trigger_deliveries (workspace_id, trigger_id, delivery_id, run_id, created_at)
		VALUES (?, ?, ?, ?, ?)`, v.WorkspaceID, v.TriggerID, v.DeliveryID, v.RunID, micros(v.CreatedAt))
	return mapErr(err)
}

func (d driver) TriggerDeliveryGet(ctx context.Context, p *store.TriggerDeliveryParams) (store.TriggerDelivery, error) {
	var (
		v       store.TriggerDelivery
		created int64
	)
	err := d.s.writer.QueryRowContext(ctx, `SELECT workspace_id, trigger_id, delivery_id, run_id, created_at FROM trigger_deliveries
		WHERE workspace_id = ? AND trigger_id = ? AND delivery_id = ?`, p.Delivery.WorkspaceID, p.Delivery.TriggerID, p.Delivery.DeliveryID).
		Scan(&v.WorkspaceID, &v.TriggerID, &v.DeliveryID, &v.RunID, &created)
	if err != nil {
		return store.TriggerDelivery{}, mapErr(err)
	}
	v.CreatedAt = fromMicros(created)
	return v, nil
}

func (d driver) TriggerDeliveryUpdate(ctx context.Context, p *store.TriggerDeliveryParams) error {
	v := p.Delivery
	res, err := d.s.writer.ExecContext(ctx, `UPDATE trigger_deliveries SET run_id = ? WHERE workspace_id = ? AND trigger_id = ? AND delivery_id = ?`,
		v.RunID, v.WorkspaceID, v.TriggerID, v.DeliveryID)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

func (d driver) TriggerDeliveryDelete(ctx context.Context, p *store.TriggerDeliveryParams) error {
	v := p.Delivery
	res, err := d.s.writer.ExecContext(ctx, `DELETE FROM trigger_deliveries WHERE workspace_id = ? AND trigger_id = ? AND delivery_id = ?`,
		v.WorkspaceID, v.TriggerID, v.DeliveryID)
	if err == nil {
		err = rowsAffected(res)
	}
	return mapErr(err)
}

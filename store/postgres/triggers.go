package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentcraftlab/agentcraft/store"
)

const triggerColumns = `id, workspace_id, name, kind, workflow_id, agent, input, schedule, timezone, misfire, enabled,
	secret_ciphertext, key_id, created_at, updated_at`

func scanTrigger(row pgx.Row) (store.Trigger, error) {
	var (
		t                 store.Trigger
		workflowID, agent *string
		input             []byte
	)
	if err := row.Scan(&t.ID, &t.WorkspaceID, &t.Name, &t.Kind, &workflowID, &agent, &input, &t.Schedule, &t.Timezone,
		&t.Misfire, &t.Enabled, &t.SecretCiphertext, &t.KeyID, &t.CreatedAt, &t.UpdatedAt); err != nil {
		return store.Trigger{}, err
	}
	if workflowID != nil {
		t.WorkflowID = *workflowID
	}
	if agent != nil {
		t.Agent = *agent
	}
	if len(input) > 0 {
		t.Input = input
	}
	if len(t.SecretCiphertext) == 0 {
		t.SecretCiphertext = nil
	}
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	return t, nil
}

func triggerArgs(t store.Trigger) []any {
	var ct []byte
	if len(t.SecretCiphertext) > 0 {
		ct = t.SecretCiphertext
	}
	return []any{t.Name, string(t.Kind), nullString(t.WorkflowID), nullString(t.Agent), nullJSON(t.Input), t.Schedule, t.Timezone,
		string(t.Misfire), t.Enabled, ct, t.KeyID, t.UpdatedAt}
}

func (d driver) TriggerInsert(ctx context.Context, p *store.TriggerWriteParams) error {
	t := p.Trigger
	args := append(triggerArgs(t), t.ID, t.WorkspaceID, t.CreatedAt)
	_, err := d.s.pool.Exec(ctx, `INSERT INTO triggers (name, kind, workflow_id, agent, input, schedule, timezone, misfire, enabled,
		secret_ciphertext, key_id, updated_at, id, workspace_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`, args...)
	return mapErr(err)
}

func (d driver) TriggerGet(ctx context.Context, workspaceID, id string) (store.Trigger, error) {
	t, err := scanTrigger(d.s.pool.QueryRow(ctx, `SELECT `+triggerColumns+` FROM triggers WHERE workspace_id = $1 AND id = $2`, workspaceID, id))
	return t, mapErr(err)
}

func (d driver) TriggerLookup(ctx context.Context, id string) (store.Trigger, error) {
	t, err := scanTrigger(d.s.pool.QueryRow(ctx, `SELECT `+triggerColumns+` FROM triggers WHERE id = $1`, id))
	return t, mapErr(err)
}

func (d driver) TriggerList(ctx context.Context, workspaceID string) ([]store.Trigger, error) {
	return queryList(ctx, d.s, scanTrigger, `SELECT `+triggerColumns+` FROM triggers WHERE workspace_id = $1 ORDER BY name COLLATE "C"`, workspaceID)
}

func (d driver) TriggerListSchedules(ctx context.Context) ([]store.Trigger, error) {
	return queryList(ctx, d.s, scanTrigger,
		`SELECT `+triggerColumns+` FROM triggers WHERE kind = 'schedule' AND enabled ORDER BY id COLLATE "C"`)
}

func (d driver) TriggerVersion(ctx context.Context) (int64, int64, error) {
	var (
		n      int64
		newest *time.Time
	)
	if err := d.s.pool.QueryRow(ctx, `SELECT count(*), max(updated_at) FROM triggers`).Scan(&n, &newest); err != nil {
		return 0, 0, err
	}
	if newest == nil {
		return n, 0, nil
	}
	return n, newest.UnixMicro(), nil
}

func (d driver) TriggerUpdate(ctx context.Context, p *store.TriggerWriteParams) error {
	t := p.Trigger
	args := append(triggerArgs(t), t.WorkspaceID, t.ID)
	tag, err := d.s.pool.Exec(ctx, `UPDATE triggers SET name = $1, kind = $2, workflow_id = $3, agent = $4, input = $5, schedule = $6,
		timezone = $7, misfire = $8, enabled = $9, secret_ciphertext = $10, key_id = $11, updated_at = $12 WHERE workspace_id = $13 AND id = $14`, args...)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func (d driver) TriggerDelete(ctx context.Context, workspaceID, id string) error {
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM triggers WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

const fireColumns = `workspace_id, trigger_id, tick, missed, owner, run_id, error, created_at`

func scanFire(row pgx.Row) (store.TriggerFire, error) {
	var f store.TriggerFire
	if err := row.Scan(&f.WorkspaceID, &f.TriggerID, &f.Tick, &f.Missed, &f.Owner, &f.RunID, &f.Error, &f.CreatedAt); err != nil {
		return store.TriggerFire{}, err
	}
	f.Tick, f.CreatedAt = f.Tick.UTC(), f.CreatedAt.UTC()
	return f, nil
}

// TriggerFireInsert: of concurrent inserts of one (trigger_id, tick), the
// primary key lets one commit and gives the others a unique violation.
func (d driver) TriggerFireInsert(ctx context.Context, p *store.TriggerFireParams) error {
	f := p.Fire
	_, err := d.s.pool.Exec(ctx, `INSERT INTO trigger_fires (`+fireColumns+`) VALUES ($1, $2, $3, $4, $5, '', '', $6)`,
		f.WorkspaceID, f.TriggerID, f.Tick, f.Missed, f.Owner, f.CreatedAt)
	return mapErr(err)
}

func (d driver) TriggerFireGet(ctx context.Context, p *store.TriggerFireParams) (store.TriggerFire, error) {
	f, err := scanFire(d.s.pool.QueryRow(ctx, `SELECT `+fireColumns+` FROM trigger_fires WHERE workspace_id = $1 AND trigger_id = $2 AND tick = $3`,
		p.Fire.WorkspaceID, p.Fire.TriggerID, p.Fire.Tick))
	return f, mapErr(err)
}

func (d driver) TriggerFireUpdate(ctx context.Context, p *store.TriggerFireParams) error {
	f := p.Fire
	tag, err := d.s.pool.Exec(ctx, `UPDATE trigger_fires SET run_id = $1, error = $2 WHERE workspace_id = $3 AND trigger_id = $4 AND tick = $5`,
		f.RunID, f.Error, f.WorkspaceID, f.TriggerID, f.Tick)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func (d driver) TriggerFireList(ctx context.Context, workspaceID, triggerID string, limit int) ([]store.TriggerFire, error) {
	return queryList(ctx, d.s, scanFire, `SELECT `+fireColumns+` FROM trigger_fires WHERE workspace_id = $1 AND trigger_id = $2
		ORDER BY tick DESC LIMIT $3`, workspaceID, triggerID, limit)
}

func (d driver) TriggerFireListUnstarted(ctx context.Context, before time.Time, limit int) ([]store.TriggerFire, error) {
	return queryList(ctx, d.s, scanFire, `SELECT `+fireColumns+` FROM trigger_fires
		WHERE run_id = '' AND error = '' AND created_at < $1 ORDER BY created_at, trigger_id COLLATE "C", tick LIMIT $2`, before, limit)
}

func (d driver) TriggerDeliveryInsert(ctx context.Context, p *store.TriggerDeliveryParams) error {
	v := p.Delivery
	_, err := d.s.pool.Exec(ctx, `INSERT INTO trigger_deliveries (workspace_id, trigger_id, delivery_id, run_id, created_at)
		VALUES ($1, $2, $3, $4, $5)`, v.WorkspaceID, v.TriggerID, v.DeliveryID, v.RunID, v.CreatedAt)
	return mapErr(err)
}

func (d driver) TriggerDeliveryGet(ctx context.Context, p *store.TriggerDeliveryParams) (store.TriggerDelivery, error) {
	var v store.TriggerDelivery
	err := d.s.pool.QueryRow(ctx, `SELECT workspace_id, trigger_id, delivery_id, run_id, created_at FROM trigger_deliveries
		WHERE workspace_id = $1 AND trigger_id = $2 AND delivery_id = $3`, p.Delivery.WorkspaceID, p.Delivery.TriggerID, p.Delivery.DeliveryID).
		Scan(&v.WorkspaceID, &v.TriggerID, &v.DeliveryID, &v.RunID, &v.CreatedAt)
	if err != nil {
		return store.TriggerDelivery{}, mapErr(err)
	}
	v.CreatedAt = v.CreatedAt.UTC()
	return v, nil
}

func (d driver) TriggerDeliveryUpdate(ctx context.Context, p *store.TriggerDeliveryParams) error {
	v := p.Delivery
	tag, err := d.s.pool.Exec(ctx, `UPDATE trigger_deliveries SET run_id = $1 WHERE workspace_id = $2 AND trigger_id = $3 AND delivery_id = $4`,
		v.RunID, v.WorkspaceID, v.TriggerID, v.DeliveryID)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}

func (d driver) TriggerDeliveryDelete(ctx context.Context, p *store.TriggerDeliveryParams) error {
	v := p.Delivery
	tag, err := d.s.pool.Exec(ctx, `DELETE FROM trigger_deliveries WHERE workspace_id = $1 AND trigger_id = $2 AND delivery_id = $3`,
		v.WorkspaceID, v.TriggerID, v.DeliveryID)
	if err == nil {
		err = affected(tag)
	}
	return mapErr(err)
}
